/* gguf_writer_output.c - buffered output to a file descriptor for the writer. Small fields
 * collect in a buffer; large tensor data goes straight to write(2). Little-endian encoding of
 * the fixed-width header fields happens here so the serializers stay byte-order free. */
#include "gguf_writer_internal.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

enum { OUTPUT_BUFFER_BYTES = 1 << 20 };

bool writer_output_open(writer_output *out, int fd)
{
    memset(out, 0, sizeof *out);
    out->fd = fd;
    out->buffer = malloc(OUTPUT_BUFFER_BYTES);
    out->capacity = OUTPUT_BUFFER_BYTES;
    return out->buffer != NULL;
}

/* write(2) until everything is out, retrying interrupted and short writes. */
static void write_all(writer_output *out, const unsigned char *data, size_t size)
{
    while (size > 0 && out->error == 0) {
        ssize_t done = write(out->fd, data, size);
        if (done < 0) {
            if (errno != EINTR)
                out->error = errno;
            continue;
        }
        if (done == 0) {
            out->error = EIO;
            continue;
        }
        data += done;
        size -= (size_t)done;
    }
}

bool writer_output_flush(writer_output *out)
{
    write_all(out, out->buffer, out->used);
    out->used = 0;
    return out->error == 0;
}

void writer_output_bytes(writer_output *out, const void *data, size_t size)
{
    if (out->error != 0 || size == 0)
        return;
    out->written += size;
    if (size <= out->capacity - out->used) {
        memcpy(out->buffer + out->used, data, size);
        out->used += size;
        return;
    }
    writer_output_flush(out);
    if (size < out->capacity) {
        memcpy(out->buffer, data, size);
        out->used = size;
    } else {
        write_all(out, data, size);
    }
}

void writer_output_zeros(writer_output *out, uint64_t count)
{
    static const unsigned char zeros[4096];
    while (count > 0 && out->error == 0) {
        size_t chunk = count < sizeof zeros ? (size_t)count : sizeof zeros;
        writer_output_bytes(out, zeros, chunk);
        count -= chunk;
    }
}

void writer_output_le(writer_output *out, uint64_t bits, size_t size)
{
    unsigned char bytes[8];
    for (size_t i = 0; i < size; i++)
        bytes[i] = (unsigned char)(bits >> (8 * i));
    writer_output_bytes(out, bytes, size);
}

void writer_output_u32(writer_output *out, uint32_t value)
{
    writer_output_le(out, value, sizeof value);
}

void writer_output_u64(writer_output *out, uint64_t value)
{
    writer_output_le(out, value, sizeof value);
}

void writer_output_close(writer_output *out)
{
    free(out->buffer);
    out->buffer = NULL;
    out->used = 0;
}
