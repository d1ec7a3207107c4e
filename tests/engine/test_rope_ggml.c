/* test_rope_ggml.c - inf_rope_ext against ggml_rope_ext itself (REF_BIN's libggml-base.so and
 * libggml-cpu.so, loaded with dlopen): NORMAL and NEOX pairing, partial rotary dimensions,
 * frequency factors, linear and YaRN scaling with attention factors. Both run the same float
 * operations in the same order with the same libm; llama.cpp's build lets the compiler fuse
 * multiply-adds (x0 cos - x1 sin becomes one FMA and one product) where libinfer's
 * -ffp-contract=off does not, so an output may differ in its last bit or two (bound: 4 units in
 * the last place of the outputs' magnitude; most outputs are equal). With YaRN the fused blend of
 * the interpolated and extrapolated angles may round the angle differently too, which moves an
 * output by up to its magnitude times a unit in the last place of the angle (positions here are
 * below 4096, as in a perplexity run). */
#include <dlfcn.h>
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "infer_util.h"
#include "test.h"

/* The few ggml declarations the test needs (ggml.h, ggml-cpu.h); tensors stay opaque. */
struct ggml_init_params {
    size_t mem_size;
    void *mem_buffer;
    bool no_alloc;
};
enum { GGML_TYPE_F32 = 0, GGML_TYPE_I32 = 26 };

typedef struct ggml_api {
    void *(*init)(struct ggml_init_params);
    void (*free)(void *ctx);
    void *(*new_tensor_1d)(void *ctx, int type, int64_t ne0);
    void *(*new_tensor_3d)(void *ctx, int type, int64_t ne0, int64_t ne1, int64_t ne2);
    void *(*get_data)(const void *tensor);
    void *(*rope_ext)(void *ctx, void *a, void *b, void *c, int n_dims, int mode,
                      int n_ctx_orig, float freq_base, float freq_scale, float ext_factor,
                      float attn_factor, float beta_fast, float beta_slow);
    void *(*new_graph)(void *ctx);
    void (*build_forward_expand)(void *graph, void *tensor);
    int (*graph_compute_with_ctx)(void *ctx, void *graph, int n_threads);
} ggml_api;

/* ggml's functions from REF_BIN, or skip. */
static ggml_api load_ggml(void)
{
    const char *dir = getenv("REF_BIN");
    if (!dir || !*dir)
        SKIP("REF_BIN is unset (set it to llama.cpp's build/bin)");
    char path[4096];
    snprintf(path, sizeof path, "%s/libggml-base.so", dir);
    void *base = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    snprintf(path, sizeof path, "%s/libggml-cpu.so", dir);
    void *cpu = base ? dlopen(path, RTLD_NOW | RTLD_LOCAL) : NULL;
    if (!cpu)
        SKIP("REF_BIN has no loadable libggml-base.so and libggml-cpu.so");
    ggml_api api;
    *(void **)&api.init = dlsym(base, "ggml_init");
    *(void **)&api.free = dlsym(base, "ggml_free");
    *(void **)&api.new_tensor_1d = dlsym(base, "ggml_new_tensor_1d");
    *(void **)&api.new_tensor_3d = dlsym(base, "ggml_new_tensor_3d");
    *(void **)&api.get_data = dlsym(base, "ggml_get_data");
    *(void **)&api.rope_ext = dlsym(base, "ggml_rope_ext");
    *(void **)&api.new_graph = dlsym(base, "ggml_new_graph");
    *(void **)&api.build_forward_expand = dlsym(base, "ggml_build_forward_expand");
    *(void **)&api.graph_compute_with_ctx = dlsym(cpu, "ggml_graph_compute_with_ctx");
    if (!api.init || !api.free || !api.new_tensor_1d || !api.new_tensor_3d || !api.get_data ||
        !api.rope_ext || !api.new_graph || !api.build_forward_expand ||
        !api.graph_compute_with_ctx)
        SKIP("REF_BIN's ggml lacks a function the test needs");
    return api;
}

enum { MAX_POSITION = 4095 };

/* One case: shape, pairing, rotary dimensions, parameters, factors or not. */
typedef struct rope_case {
    int64_t head, n_head, n_tokens;
    int n_dims;
    inf_rope_mode mode;
    inf_rope_params params;
    bool factors;
} rope_case;

/* ggml's result for `input`, `pos` and `factors` (NULL: none) into `out`. */
static bool ggml_rope(const ggml_api *g, const rope_case *c, const float *input,
                      const int32_t *pos, const float *factors, float *out)
{
    struct ggml_init_params ip = {64u << 20, NULL, false};
    void *ctx = g->init(ip);
    if (!ctx)
        return false;
    void *a = g->new_tensor_3d(ctx, GGML_TYPE_F32, c->head, c->n_head, c->n_tokens);
    void *b = g->new_tensor_1d(ctx, GGML_TYPE_I32, c->n_tokens);
    void *f = factors ? g->new_tensor_1d(ctx, GGML_TYPE_F32, c->n_dims / 2) : NULL;
    const size_t n = (size_t)(c->head * c->n_head * c->n_tokens);
    memcpy(g->get_data(a), input, n * sizeof(float));
    memcpy(g->get_data(b), pos, (size_t)c->n_tokens * sizeof(int32_t));
    if (f)
        memcpy(g->get_data(f), factors, (size_t)(c->n_dims / 2) * sizeof(float));
    const inf_rope_params *p = &c->params;
    void *r = g->rope_ext(ctx, a, b, f, c->n_dims, (int)c->mode, p->n_ctx_orig, p->freq_base,
                          p->freq_scale, p->ext_factor, p->attn_factor, p->beta_fast,
                          p->beta_slow);
    void *graph = g->new_graph(ctx);
    g->build_forward_expand(graph, r);
    bool ok = g->graph_compute_with_ctx(ctx, graph, 1) == 0;
    if (ok)
        memcpy(out, g->get_data(r), n * sizeof(float));
    g->free(ctx);
    return ok;
}

/* The largest |inf_rope_ext - ggml_rope_ext| over a random input in [-2, 2) (NAN on failure);
 * *differ counts the outputs that are not equal bit for bit. */
static double worst_difference(const ggml_api *g, const rope_case *c, test_rng *rng, long *differ)
{
    inf_context *ctx = data_context(16);
    inf_tensor *a = inf_tensor_new_3d(ctx, GGTK_TENSOR_F32, c->head, c->n_head, c->n_tokens);
    inf_tensor *pos = inf_tensor_new_1d(ctx, GGTK_TENSOR_I32, c->n_tokens);
    inf_tensor *f = c->factors ? inf_tensor_new_1d(ctx, GGTK_TENSOR_F32, c->n_dims / 2) : NULL;
    tensor_fill(a, rng, -2.0f, 2.0f);
    for (int64_t t = 0; t < c->n_tokens; t++)
        ((int32_t *)pos->data)[t] = (int32_t)rng_int(rng, 0, MAX_POSITION);
    if (f)
        tensor_fill(f, rng, 1.0f, 40.0f);
    inf_tensor *r = inf_rope_ext(ctx, a, pos, f, c->n_dims, c->mode, &c->params);
    const size_t n = (size_t)inf_tensor_nelements(a);
    float *want = malloc(n * sizeof *want);
    double worst = NAN;
    *differ = 0;
    if (r && want && compute_graph(ctx, r, 2) == GGTK_OK &&
        ggml_rope(g, c, a->data, pos->data, f ? f->data : NULL, want)) {
        worst = 0;
        for (size_t i = 0; i < n; i++) {
            const float got = ((const float *)r->data)[i];
            *differ += memcmp(&got, want + i, sizeof got) != 0;
            worst = fmax(worst, fabs((double)got - want[i]));
        }
    }
    free(want);
    inf_context_free(ctx);
    return worst;
}

TEST(test_rope_ext_matches_ggml_to_float_rounding)
{
    ggml_api g = load_ggml();
    inf_rope_params plain = inf_rope_params_plain(10000.0f, 1.0f);
    inf_rope_params linear = inf_rope_params_plain(500000.0f, 0.125f);
    /* YaRN as llama.cpp's context sets it for factor 4 over 4096 positions */
    inf_rope_params yarn = {1000000.0f, 0.25f, 1.0f, 0.87f, 32.0f, 1.0f, 4096};
    inf_rope_params longrope = inf_rope_params_plain(10000.0f, 1.0f);
    longrope.attn_factor = 1.19f;
    const rope_case cases[] = {
        {64, 4, 9, 64, INF_ROPE_NORMAL, plain, false},
        {64, 4, 9, 64, INF_ROPE_NEOX, plain, false},
        {128, 3, 7, 128, INF_ROPE_NORMAL, linear, true},   /* Llama 3.1 rope_freqs */
        {128, 2, 11, 128, INF_ROPE_NEOX, yarn, false},     /* Qwen2.5 YaRN */
        {96, 2, 5, 48, INF_ROPE_NEOX, longrope, true},     /* Phi-3 partial rotary, LongRoPE */
        {80, 3, 6, 32, INF_ROPE_NORMAL, yarn, true},
    };
    test_rng rng = {29};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        long differ = 0;
        const double worst = worst_difference(&g, &cases[i], &rng, &differ);
        /* inputs below 2 in magnitude, cos and sin scaled by at most 1.4: outputs below 4 */
        const double bound = 4 * 4 * FLT_EPSILON +
                             (cases[i].params.ext_factor != 0 ? 4 * MAX_POSITION * FLT_EPSILON : 0);
        fprintf(stderr, "    case %zu: %ld of %lld outputs differ in bits, by at most %.3g\n", i,
                differ, (long long)(cases[i].head * cases[i].n_head * cases[i].n_tokens), worst);
        CHECK_MSG(worst <= bound, "case %zu: %.3g from ggml (bound %.3g)", i, worst, bound);
    }
}
