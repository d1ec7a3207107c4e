/* ggml_ref.h - llama.cpp's libggml-base.so loaded at run time from REF_BIN, for the tests that
 * compare our kernels with ggml's own. */
#ifndef GGML_REF_H
#define GGML_REF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The prefix of ggml's public struct ggml_type_traits (ggml.h) that we read. */
typedef struct ggml_traits_prefix {
    const char *type_name;
    int64_t blck_size;
    int64_t blck_size_interleave;
    size_t type_size;
    bool is_quantized;
    void (*to_float)(const void *x, float *y, int64_t k);
    void (*from_float_ref)(const float *x, void *y, int64_t k);
} ggml_traits_prefix;

typedef const ggml_traits_prefix *(*ggml_get_traits_fn)(int type);
/* ggml_quantize_chunk(type, src, dst, start, nrows, n_per_row, imatrix). */
typedef size_t (*ggml_quantize_chunk_fn)(int type, const float *src, void *dst, int64_t start,
                                         int64_t nrows, int64_t n_per_row, const float *imatrix);

/* The address of `name` in REF_BIN/libggml-base.so, or NULL with *why saying what is missing. */
void *ggml_ref_symbol(const char *name, const char **why);

#endif
