/* safetensors_fixture.h - writes safetensors files byte by byte for the reader and converter
 * tests: a header given as JSON text and a data section of a given size. */
#ifndef TEST_SAFETENSORS_FIXTURE_H
#define TEST_SAFETENSORS_FIXTURE_H

#include <stdbool.h>
#include <stdint.h>
#include <stddef.h>

/* Write `path`: the 8-byte length of `header` (or `declared_length` when not UINT64_MAX), the
 * header, then `data_size` bytes (byte i = i & 0xff). */
bool st_fixture_write(const char *path, const char *header, uint64_t declared_length,
                      size_t data_size);

/* Write `text` to `path`. */
bool st_fixture_text(const char *path, const char *text);

/* Number of entries in folder `dir` (-1 when it cannot be read). */
int st_fixture_count_entries(const char *dir);

#endif
