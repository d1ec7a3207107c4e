/* ggml_cpu_ref.h - llama.cpp's libggml-base.so and libggml-cpu.so loaded at run time from
 * REF_BIN, to run single ggml operations on the CPU for the tests that compare our kernels with
 * ggml's (tests/quant_kernels/ggml_ref.h does the same for the type traits). */
#ifndef GGML_CPU_REF_H
#define GGML_CPU_REF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* ggml.h's struct ggml_init_params. */
typedef struct ggml_init_params_ref {
    size_t mem_size;
    void *mem_buffer;
    bool no_alloc;
} ggml_init_params_ref;

typedef struct ggml_context_ref ggml_context_ref; /* struct ggml_context */
typedef struct ggml_tensor_ref ggml_tensor_ref;   /* struct ggml_tensor */
typedef struct ggml_cgraph_ref ggml_cgraph_ref;   /* struct ggml_cgraph */

/* The ggml functions the tests call (names as in ggml.h / ggml-cpu.h). */
typedef struct ggml_cpu_ref {
    ggml_context_ref *(*init)(ggml_init_params_ref params);
    void (*free)(ggml_context_ref *ctx);
    ggml_tensor_ref *(*new_tensor_2d)(ggml_context_ref *ctx, int type, int64_t ne0, int64_t ne1);
    void *(*get_data)(const ggml_tensor_ref *t);
    ggml_tensor_ref *(*gelu)(ggml_context_ref *ctx, ggml_tensor_ref *a);
    ggml_tensor_ref *(*geglu_split)(ggml_context_ref *ctx, ggml_tensor_ref *a, ggml_tensor_ref *b);
    ggml_tensor_ref *(*tanh)(ggml_context_ref *ctx, ggml_tensor_ref *a);
    ggml_tensor_ref *(*scale)(ggml_context_ref *ctx, ggml_tensor_ref *a, float s);
    ggml_tensor_ref *(*soft_max_ext)(ggml_context_ref *ctx, ggml_tensor_ref *a,
                                     ggml_tensor_ref *mask, float scale, float max_bias);
    ggml_cgraph_ref *(*new_graph)(ggml_context_ref *ctx);
    void (*build_forward_expand)(ggml_cgraph_ref *graph, ggml_tensor_ref *t);
    int (*graph_compute_with_ctx)(ggml_context_ref *ctx, ggml_cgraph_ref *graph, int n_threads);
    const uint16_t *table_gelu_f16; /* ggml_table_gelu_f16: 65536 fp16 results */
} ggml_cpu_ref;

enum { GGML_REF_TYPE_F32 = 0 };

/* Load both libraries and initialise ggml's CPU tables. True with *ref filled, else false with
 * *why saying what is missing (the caller skips). */
bool ggml_cpu_ref_load(ggml_cpu_ref *ref, const char **why);

#endif
