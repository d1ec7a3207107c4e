/* gguf_file.c - opening GGUF input and closing it. A path is mapped (tensor data points into the
 * map) or read sequentially (the header parsed as it arrives, then the data section read into
 * one aligned buffer, or not at all for metadata); a stream is read sequentially; a caller's
 * buffer is parsed in place. */
#include "gguf_reader.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

/* The heap copy of the data section is aligned to the file's alignment, at least a cache line
 * and at most a page (enough for any aligned SIMD load; a hostile 2^31 would waste memory). */
enum { DATA_BUFFER_MIN_ALIGN = 64, DATA_BUFFER_MAX_ALIGN = 4096 };
/* First buffer size when reading the data section of a pipe, whose length is unknown. */
enum { PIPE_DATA_START = 1 << 20 };

/* Parsing an empty input still needs a valid pointer. */
static const unsigned char empty_input[1];

static ggtk_file *file_new(const char *name, uint64_t size, ggtk_error *err)
{
    ggtk_file *f = calloc(1, sizeof *f);
    if (f)
        f->path = strdup(name ? name : "(gguf)");
    if (!f || !f->path) {
        free(f);
        ggtk_fail(err, GGTK_ERR_NOMEM, name, UINT64_MAX, "out of memory opening the file");
        return NULL;
    }
    f->file_size = size;
    f->alignment = GGTK_DEFAULT_ALIGNMENT;
    return f;
}

void ggtk_close(ggtk_file *f)
{
    if (!f)
        return;
    if (f->map)
        munmap(f->map, f->map_size);
    free(f->data_buffer);
    free(f->kvs);
    free(f->tensors);
    free(f->kv_index);
    free(f->tensor_index);
    ggtk_arena_free(&f->arena);
    free(f->path);
    free(f);
}

static ggtk_file *finish(ggtk_file *f, ggtk_status status)
{
    if (status == GGTK_OK)
        return f;
    ggtk_close(f);
    return NULL;
}

/* The data section is `bytes`' tail from data_offset (empty when a tensor-less file ends before
 * its padding); check the layout against it and point every tensor at its data. */
static ggtk_status attach_data(ggtk_file *f, const unsigned char *section, uint64_t size,
                               ggtk_error *err)
{
    f->data = section;
    f->data_size = size;
    ggtk_status status = ggtk_check_layout(f, true, err);
    if (status != GGTK_OK)
        return status;
    for (int64_t i = 0; i < f->n_tensors; i++)
        f->tensors[i].data = section + f->tensors[i].offset;
    return GGTK_OK;
}

static ggtk_status parse_in_memory(ggtk_file *f, const unsigned char *bytes, ggtk_error *err)
{
    ggtk_parser parser = {.file = f, .err = err};
    ggtk_cursor_init_memory(&parser.cursor, bytes, f->file_size);
    ggtk_status status = ggtk_parse_header(&parser);
    if (status != GGTK_OK)
        return status;
    uint64_t start = f->data_offset < f->file_size ? f->data_offset : f->file_size;
    return attach_data(f, bytes + start, f->file_size - start, err);
}

ggtk_file *ggtk_open_memory(const void *data, size_t size, const char *name, ggtk_error *err)
{
    if (!data && size)
        return ggtk_fail(err, GGTK_ERR_USAGE, name, UINT64_MAX, "NULL buffer of %zu bytes", size),
               NULL;
    ggtk_file *f = file_new(name ? name : "(memory)", size, err);
    if (!f)
        return NULL;
    return finish(f, parse_in_memory(f, data ? data : empty_input, err));
}

/* Bytes from the stream's position to its end when it is a regular file, else unknown. */
static uint64_t stream_size(FILE *stream)
{
    int fd = fileno(stream);
    struct stat st;
    if (fd < 0 || fstat(fd, &st) != 0 || !S_ISREG(st.st_mode))
        return GGTK_SIZE_UNKNOWN;
    off_t pos = ftello(stream);
    if (pos < 0 || pos > st.st_size)
        return GGTK_SIZE_UNKNOWN;
    return (uint64_t)(st.st_size - pos);
}

/* Consume the padding up to the data section. An input that ends within it has an empty data
 * section (fine for a file without tensors, reported by the layout check otherwise), and its
 * size is then known even for a pipe. */
static ggtk_status skip_padding(ggtk_parser *p, uint64_t *size)
{
    uint64_t start = p->cursor.pos;
    uint64_t padding = p->file->data_offset - start;
    const unsigned char *bytes;
    ggtk_status status = ggtk_cursor_take(&p->cursor, padding, &bytes);
    if (status == GGTK_ERR_TRUNCATED) {
        *size = p->cursor.end;
        p->file->file_size = p->cursor.end;
        return GGTK_OK;
    }
    if (status != GGTK_OK)
        return ggtk_parser_fail(p, status, start, "reading the padding before the data section "
                                                  "failed");
    return GGTK_OK;
}

static size_t buffer_alignment(uint32_t alignment)
{
    if (alignment < DATA_BUFFER_MIN_ALIGN)
        return DATA_BUFFER_MIN_ALIGN;
    return alignment > DATA_BUFFER_MAX_ALIGN ? DATA_BUFFER_MAX_ALIGN : alignment;
}

static void *aligned_buffer(uint32_t alignment, uint64_t size)
{
    void *buffer = NULL;
    if (size > SIZE_MAX || posix_memalign(&buffer, buffer_alignment(alignment),
                                          size ? (size_t)size : 1) != 0)
        return NULL;
    return buffer;
}

/* Read a pipe's data section to its end, doubling the buffer as bytes arrive. */
static ggtk_status read_pipe_data(ggtk_file *f, FILE *stream, uint64_t *size, ggtk_error *err)
{
    uint64_t capacity = PIPE_DATA_START, used = 0;
    unsigned char *buffer = aligned_buffer(f->alignment, capacity);
    while (buffer) {
        used += fread(buffer + used, 1, (size_t)(capacity - used), stream);
        if (used < capacity)
            break;
        unsigned char *grown = aligned_buffer(f->alignment, capacity * 2);
        if (grown)
            memcpy(grown, buffer, (size_t)used);
        free(buffer);
        buffer = grown;
        capacity *= 2;
    }
    f->data_buffer = buffer;
    if (!buffer)
        return ggtk_fail(err, GGTK_ERR_NOMEM, f->path, f->data_offset,
                         "out of memory reading the data section");
    if (ferror(stream))
        return ggtk_fail(err, GGTK_ERR_IO, f->path, f->data_offset + used,
                         "reading the data section failed: %s", strerror(errno));
    *size = used;
    return GGTK_OK;
}

static ggtk_status read_data_section(ggtk_file *f, FILE *stream, ggtk_error *err)
{
    uint64_t size = 0;
    if (f->file_size == GGTK_SIZE_UNKNOWN) {
        ggtk_status status = read_pipe_data(f, stream, &size, err);
        if (status != GGTK_OK)
            return status;
        f->file_size = f->data_offset + size;
    } else {
        size = f->file_size > f->data_offset ? f->file_size - f->data_offset : 0;
        f->data_buffer = aligned_buffer(f->alignment, size);
        if (!f->data_buffer)
            return ggtk_fail(err, GGTK_ERR_NOMEM, f->path, f->data_offset,
                             "out of memory for the %llu-byte data section",
                             (unsigned long long)size);
        size_t got = size ? fread(f->data_buffer, 1, (size_t)size, stream) : 0;
        if (got < size)
            return ggtk_fail(err, ferror(stream) ? GGTK_ERR_IO : GGTK_ERR_TRUNCATED, f->path,
                             f->data_offset + got,
                             "data section ends after %zu of %llu bytes (file changed?)", got,
                             (unsigned long long)size);
    }
    return attach_data(f, f->data_buffer, size, err);
}

/* A directory opens fine and fails only at its first read, with a bare EISDIR: say so first. */
static bool refuse_directory(int fd, const char *name, ggtk_error *err)
{
    struct stat st;
    if (fd < 0 || fstat(fd, &st) != 0 || !S_ISDIR(st.st_mode))
        return false;
    ggtk_fail(err, GGTK_ERR_IO, name, UINT64_MAX, "is a directory, expected a GGUF file");
    return true;
}

static ggtk_file *open_stream(FILE *stream, const char *name, ggtk_open_mode mode, uint64_t size,
                              ggtk_error *err)
{
    if (refuse_directory(fileno(stream), name, err))
        return NULL;
    ggtk_file *f = file_new(name, size, err);
    if (!f)
        return NULL;
    ggtk_parser parser = {.file = f, .err = err};
    ggtk_cursor_init_stream(&parser.cursor, stream, size);
    ggtk_status status = ggtk_parse_header(&parser);
    if (status == GGTK_OK)
        status = skip_padding(&parser, &size);
    ggtk_cursor_release(&parser.cursor);
    if (status == GGTK_OK && mode == GGTK_OPEN_READ)
        return finish(f, read_data_section(f, stream, err));
    if (status == GGTK_OK) {
        bool size_known = size != GGTK_SIZE_UNKNOWN;
        if (!size_known)
            f->file_size = 0;
        else if (size > f->data_offset)
            f->data_size = size - f->data_offset;
        status = ggtk_check_layout(f, size_known, err);
    }
    return finish(f, status);
}

ggtk_file *ggtk_open_stream(FILE *stream, const char *name, ggtk_open_mode mode, ggtk_error *err)
{
    if (!stream || (mode != GGTK_OPEN_READ && mode != GGTK_OPEN_METADATA))
        return ggtk_fail(err, GGTK_ERR_USAGE, name, UINT64_MAX,
                         "gguf_open_stream needs a stream and GGUF_OPEN_READ or "
                         "GGUF_OPEN_METADATA"),
               NULL;
    return open_stream(stream, name ? name : "(stream)", mode, stream_size(stream), err);
}

/* NULL after reporting that `path` could not be opened (errno says why). */
static ggtk_file *cannot_open(const char *path, ggtk_error *err)
{
    ggtk_fail(err, GGTK_ERR_IO, path, UINT64_MAX, "cannot open: %s", strerror(errno));
    return NULL;
}

static ggtk_file *open_path_stream(const char *path, ggtk_open_mode mode, ggtk_error *err)
{
    FILE *stream = fopen(path, "rb");
    if (!stream)
        return cannot_open(path, err);
    ggtk_file *f = open_stream(stream, path, mode, stream_size(stream), err);
    fclose(stream);
    return f;
}

static ggtk_file *open_mapped(const char *path, ggtk_error *err)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return cannot_open(path, err);
    struct stat st;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        /* A FIFO or a device cannot be mapped: read it instead, through the same descriptor
         * (reopening a FIFO would lose its writer). */
        FILE *stream = fdopen(fd, "rb");
        if (!stream) {
            ggtk_file *none = cannot_open(path, err);
            close(fd);
            return none;
        }
        ggtk_file *f = open_stream(stream, path, GGTK_OPEN_READ, stream_size(stream), err);
        fclose(stream);
        return f;
    }
    ggtk_file *f = file_new(path, (uint64_t)st.st_size, err);
    if (!f || st.st_size == 0) {
        close(fd);
        return f ? finish(f, parse_in_memory(f, empty_input, err)) : NULL;
    }
    f->map_size = (size_t)st.st_size;
    void *map = mmap(NULL, f->map_size, PROT_READ, MAP_PRIVATE, fd, 0);
    int map_errno = errno;
    close(fd);
    if (map == MAP_FAILED)
        return finish(f, ggtk_fail(err, GGTK_ERR_IO, path, UINT64_MAX, "cannot map: %s",
                                   strerror(map_errno)));
    f->map = map;
    return finish(f, parse_in_memory(f, map, err));
}

ggtk_file *ggtk_open(const char *path, ggtk_open_mode mode, ggtk_error *err)
{
    if (!path)
        return ggtk_fail(err, GGTK_ERR_USAGE, NULL, UINT64_MAX, "gguf_open needs a path"), NULL;
    switch (mode) {
    case GGTK_OPEN_MMAP:
        return open_mapped(path, err);
    case GGTK_OPEN_READ:
    case GGTK_OPEN_METADATA:
        return open_path_stream(path, mode, err);
    }
    return ggtk_fail(err, GGTK_ERR_USAGE, path, UINT64_MAX, "unknown open mode %d", (int)mode),
           NULL;
}

void ggtk_release_data(const ggtk_file *f, const void *data, uint64_t size)
{
    if (!f || !f->map || !data)
        return;
    uintptr_t map_start = (uintptr_t)f->map, map_end = map_start + f->map_size;
    uintptr_t start = (uintptr_t)data, end;
    if (start < map_start || start > map_end || __builtin_add_overflow(start, size, &end) ||
        end > map_end)
        return;
    /* Whole pages only: the neighbours of the range may still be in use. */
    uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE);
    start = (start + page - 1) / page * page;
    end = end / page * page;
    if (end > start)
        madvise((void *)start, end - start, MADV_DONTNEED); /* a hint: failure changes nothing */
}
