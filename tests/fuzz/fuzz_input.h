/* fuzz_input.h - how the harnesses hand libFuzzer's bytes to a reader and check a refusal: as a
 * memory file named by its /proc path (readers that open a path), or as a FILE * from fmemopen()
 * (readers of a stream). Header-only, so that each harness stays one source file plus the
 * sources it tests (Makefile, FUZZ_SRC_*). */
#ifndef FUZZ_INPUT_H
#define FUZZ_INPUT_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <ggtk/error.h>

/* Read the input at `path` (`size` bytes), check what was read and free it: true when the reader
 * accepted it, false with *err set when it refused it. */
typedef bool (*fuzz_path_reader)(const char *path, size_t size, ggtk_error *err);

/* Feed data as a memory file; abort when a refusal is not one line naming the file. */
static inline void fuzz_path_input(const uint8_t *data, size_t size, fuzz_path_reader read)
{
    int fd = memfd_create("fuzz", 0);
    if (fd < 0 || write(fd, data, size) != (ssize_t)size)
        abort();
    char path[64];
    snprintf(path, sizeof path, "/proc/self/fd/%d", fd);
    ggtk_error err = {0};
    if (!read(path, size, &err) &&
        (err.status == GGTK_OK || !strstr(err.message, path) || strchr(err.message, '\n')))
        abort();
    close(fd);
}

/* A stream reader's refusal: one line starting with the stream's name, "fuzz". */
static inline bool fuzz_stream_message_ok(const char *message)
{
    return strncmp(message, "fuzz: ", 6) == 0 && !strchr(message, '\n');
}

/* The same for a stream reader, which owns `file` from the call on and names it "fuzz". */
typedef bool (*fuzz_stream_reader)(FILE *file, size_t size, ggtk_error *err);

/* Feed data as a stream; abort when a refusal is not one line starting "fuzz: ". */
static inline void fuzz_stream_input(const uint8_t *data, size_t size, fuzz_stream_reader read)
{
    if (size == 0)
        return; /* fmemopen() refuses an empty buffer */
    FILE *file = fmemopen((void *)data, size, "rb");
    if (!file)
        abort();
    ggtk_error err = {0};
    if (!read(file, size, &err) && !fuzz_stream_message_ok(err.message))
        abort();
}

#endif
