/* imatrix_fixture.h - helpers the importance-matrix tests share: a byte builder for writing
 * expected files by hand (independently of the writers under test), file helpers, and a small
 * imatrix with a dense and a partly covered mixture-of-experts entry. */
#ifndef IMATRIX_FIXTURE_H
#define IMATRIX_FIXTURE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <ggtk/inf_imatrix.h>

/* A growing little-endian byte buffer. */
typedef struct bytes {
    unsigned char *data;
    size_t len, cap;
} bytes;

void bytes_put(bytes *b, const void *data, size_t n);
void bytes_u32(bytes *b, uint32_t v);
void bytes_i32(bytes *b, int32_t v);
void bytes_u64(bytes *b, uint64_t v);
void bytes_f32(bytes *b, float v);
/* A GGUF string: u64 length and the bytes. */
void bytes_gguf_string(bytes *b, const char *s);
/* Zeros up to a multiple of `align`. */
void bytes_pad(bytes *b, size_t align);
void bytes_free(bytes *b);

/* Write `n` bytes to `path`; true on success. */
bool fixture_write_file(const char *path, const void *data, size_t n);
/* The whole file at `path` (malloc'd, *n its size), or NULL. */
unsigned char *fixture_read_file(const char *path, size_t *n);
/* True when both files exist and hold the same bytes. */
bool fixture_same_file(const char *a, const char *b);

/* The fixture: chunk size 4, dataset "data.txt", entries
 *  "blk.0.attn_q.weight"   dense, 3 values, 8 tokens: rows {1,2,3} x 4 and {0.5,0,-1} x 4;
 *  "blk.1.ffn_up_exps.weight" 2 experts x 2 values: expert 0 got 5 rows {2,-3}, expert 1 none.
 * NULL when a call failed. */
inf_imatrix *fixture_small_imatrix(void);

#endif
