/* gguf_cursor.c - the bounds-checked cursor every header byte is read through. From memory (a
 * map or a caller's buffer) a take is a bounds check and a pointer; from a stream it reads
 * exactly the bytes asked for, so the stream stops at the end of the header and parsing never
 * costs more than the header's size. */
#include "gguf_reader.h"

#include <errno.h>
#include <stdlib.h>

/* A stream take of unknown-sized input grows its buffer by at most this much (or doubling)
 * before the bytes have arrived. */
enum { STREAM_STEP = 1 << 16 };

void ggtk_cursor_init_memory(ggtk_cursor *cursor, const void *data, uint64_t size)
{
    *cursor = (ggtk_cursor){.memory = data, .size = size};
}

void ggtk_cursor_init_stream(ggtk_cursor *cursor, FILE *stream, uint64_t size)
{
    *cursor = (ggtk_cursor){.stream = stream, .size = size};
}

uint64_t ggtk_cursor_remaining(const ggtk_cursor *cursor)
{
    if (cursor->size == GGTK_SIZE_UNKNOWN)
        return GGTK_SIZE_UNKNOWN;
    return cursor->size - cursor->pos;
}

static bool scratch_reserve(ggtk_cursor *cursor, size_t need)
{
    if (need <= cursor->scratch_capacity)
        return true;
    unsigned char *grown = realloc(cursor->scratch, need);
    if (!grown)
        return false;
    cursor->scratch = grown;
    cursor->scratch_capacity = need;
    return true;
}

/* Read `n` bytes into the scratch buffer, growing it only as bytes arrive: a hostile length in a
 * short input fails at the input's end having allocated about twice what the input held. */
static ggtk_status stream_take(ggtk_cursor *cursor, uint64_t n)
{
    uint64_t have = 0;
    while (have < n) {
        uint64_t step = have > STREAM_STEP ? have : STREAM_STEP;
        uint64_t target = n - have <= step ? n : have + step;
        if (target > SIZE_MAX || !scratch_reserve(cursor, (size_t)target))
            return GGTK_ERR_NOMEM;
        size_t want = (size_t)(target - have);
        size_t got = fread(cursor->scratch + have, 1, want, cursor->stream);
        have += got;
        if (got < want) {
            if (ferror(cursor->stream)) {
                cursor->io_errno = errno ? errno : EIO;
                return GGTK_ERR_IO;
            }
            cursor->end = cursor->pos + have;
            return GGTK_ERR_TRUNCATED;
        }
    }
    return GGTK_OK;
}

ggtk_status ggtk_cursor_take(ggtk_cursor *cursor, uint64_t n, const unsigned char **out)
{
    uint64_t remaining = ggtk_cursor_remaining(cursor);
    if (remaining != GGTK_SIZE_UNKNOWN && n > remaining) {
        cursor->end = cursor->size;
        return GGTK_ERR_TRUNCATED;
    }
    if (cursor->memory) {
        *out = cursor->memory + cursor->pos;
    } else {
        ggtk_status status = stream_take(cursor, n);
        if (status != GGTK_OK)
            return status;
        *out = cursor->scratch;
    }
    cursor->pos += n;
    return GGTK_OK;
}

void ggtk_cursor_release(ggtk_cursor *cursor)
{
    free(cursor->scratch);
    cursor->scratch = NULL;
    cursor->scratch_capacity = 0;
}
