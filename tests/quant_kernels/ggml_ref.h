/* ggml_ref.h - llama.cpp's ggml loaded at run time as the reference for the kernel tests:
 * REF_BIN names llama.cpp's build/bin folder, whose libggml-base.so provides the type traits. */
#ifndef GGML_REF_H
#define GGML_REF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The prefix of ggml's public struct ggml_type_traits (ggml.h) that the tests read. */
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

/* ggml's type traits getter from REF_BIN/libggml-base.so, or NULL with *why saying what is
 * missing (the caller skips). */
ggml_get_traits_fn ggml_ref_load(const char **why);

#endif
