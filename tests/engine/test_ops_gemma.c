/* test_ops_gemma.c - the operations Gemma needs: GELU and GEGLU (ggml's fp16-table GELU),
 * soft-capping and the sliding-window causal softmax. Each is checked against a plain double
 * reference here, and, with REF_BIN set, against ggml's own CPU kernels: GELU, GEGLU and softcap
 * bit for bit, the windowed softmax against soft_max_ext with the mask llama.cpp builds. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <ggtk/inf_simd.h>

#include "ggml_cpu_ref.h"
#include "infer_util.h"
#include "ref_ops.h"
#include "test.h"

static double gelu_ref(double x)
{
    return 0.5 * x * (1.0 + tanh(sqrt(2.0 / M_PI) * x * (1.0 + 0.044715 * x * x)));
}

/* Inputs that reach every branch: every fp16 value (the table's index), then random floats
 * across the +-10 bounds, the bounds themselves and infinities. */
static int64_t gelu_inputs(float *x, int64_t cap, test_rng *rng)
{
    int64_t n = 0;
    for (uint32_t h = 0; h < (1u << 16) && n < cap; h++) {
        float v = inf_fp16_to_fp32((inf_fp16)h);
        if (!isnan(v))
            x[n++] = v;
    }
    const float specials[] = {-10.0f, 10.0f, nextafterf(-10.0f, 0), nextafterf(10.0f, 0),
                              INFINITY, -INFINITY, 0.0f, -0.0f};
    for (size_t i = 0; i < sizeof specials / sizeof *specials && n < cap; i++)
        x[n++] = specials[i];
    while (n < cap)
        x[n++] = rng_uniform(rng, -12.0f, 12.0f);
    return n;
}

enum { N_GELU = 1 << 17 };

TEST(test_gelu_and_geglu_follow_the_formula_through_fp16)
{
    test_rng rng = {21};
    inf_context *ctx = data_context(8);
    inf_tensor *x = inf_tensor_new_1d(ctx, GGTK_TENSOR_F32, N_GELU);
    inf_tensor *up = inf_tensor_new_1d(ctx, GGTK_TENSOR_F32, N_GELU);
    gelu_inputs(x->data, N_GELU, &rng);
    tensor_fill(up, &rng, -2.0f, 2.0f);
    inf_tensor *g = inf_gelu(ctx, x), *gg = inf_geglu(ctx, x, up);
    CHECK(compute_graph(ctx, g, 2) == GGTK_OK && compute_graph(ctx, gg, 2) == GGTK_OK);
    const float *xs = x->data, *ys = g->data, *us = up->data, *zs = gg->data;
    for (int64_t i = 0; i < N_GELU; i++) {
        const double v = xs[i];
        /* the input is rounded to fp16, then the result: two half-ulp steps (2^-11 relative),
         * through a slope of at most 1.13, plus fp16's denormal spacing near 0 */
        double want = v <= -10 ? 0.0 : v >= 10 ? v : gelu_ref(v);
        double tol = 2.2 * 0x1p-11 * (fabs(want) + fabs(v)) + 0x1p-24;
        CHECK_MSG(fabs(ys[i] - want) <= tol || (isinf(v) && ys[i] == want),
                  "gelu(%.9g) = %.9g, expected %.9g", v, ys[i], want);
        float wg = v <= -10 ? 0.0f : ys[i] * us[i];
        CHECK_MSG(memcmp(&zs[i], &wg, sizeof wg) == 0, "geglu(%.9g, %.9g) = %.9g, expected %.9g",
                  v, us[i], zs[i], wg);
    }
    inf_context_free(ctx);
}

TEST(test_gelu_and_geglu_give_the_same_bits_at_every_simd_level)
{
    test_rng rng = {26};
    inf_context *ctx = data_context(16);
    inf_tensor *x = inf_tensor_new_1d(ctx, GGTK_TENSOR_F32, N_GELU + 5); /* a ragged tail */
    inf_tensor *up = inf_tensor_new_1d(ctx, GGTK_TENSOR_F32, N_GELU + 5);
    gelu_inputs(x->data, N_GELU + 5, &rng);
    ((float *)x->data)[N_GELU] = NAN;
    tensor_fill(up, &rng, -2.0f, 2.0f);
    const size_t bytes = (size_t)(N_GELU + 5) * sizeof(float);
    float *want_g = malloc(bytes), *want_gg = malloc(bytes);
    const inf_simd_level detected = inf_simd_detect();
    for (int level = 0; level <= (int)detected; level++) {
        inf_simd_force((inf_simd_level)level);
        inf_tensor *g = inf_gelu(ctx, x), *gg = inf_geglu(ctx, x, up);
        CHECK(compute_graph(ctx, g, 2) == GGTK_OK && compute_graph(ctx, gg, 2) == GGTK_OK);
        if (level == 0) {
            memcpy(want_g, g->data, bytes);
            memcpy(want_gg, gg->data, bytes);
        }
        CHECK_MSG(memcmp(want_g, g->data, bytes) == 0 && memcmp(want_gg, gg->data, bytes) == 0,
                  "%s differs from scalar", inf_simd_level_name((inf_simd_level)level));
    }
    inf_simd_force(detected);
    free(want_g);
    free(want_gg);
    inf_context_free(ctx);
}

TEST(test_softcap_matches_tanh_reference_and_rejects_bad_caps)
{
    test_rng rng = {22};
    inf_context *ctx = data_context(8);
    inf_tensor *a = inf_tensor_new_4d(ctx, GGTK_TENSOR_F32, 37, 5, 3, 2);
    tensor_fill(a, &rng, -200.0f, 200.0f);
    inf_tensor *out = inf_softcap(ctx, a, 30.0f);
    inf_tensor *strided = inf_softcap(ctx, inf_transpose(ctx, a), 50.0f);
    CHECK(compute_graph(ctx, out, 2) == GGTK_OK && compute_graph(ctx, strided, 2) == GGTK_OK);
    for (int64_t i = 0; i < inf_tensor_nelements(a); i++) {
        double v = ((const float *)a->data)[i];
        double got = ((const float *)out->data)[i];
        CHECK_MSG(fabs(got - 30.0 * tanh(v / 30.0)) <= 4e-6 * 30.0, "softcap(%g) = %g", v, got);
    }
    for (int64_t i1 = 0; i1 < 5; i1++)
        for (int64_t i0 = 0; i0 < 37; i0++) {
            double v = tensor_get(a, i0, i1, 1, 1);
            double got = tensor_get(strided, i1, i0, 1, 1);
            CHECK_MSG(fabs(got - 50.0 * tanh(v / 50.0)) <= 4e-6 * 50.0, "softcap(%g) = %g", v, got);
        }
    CHECK(!inf_softcap(ctx, a, 0.0f) && !inf_softcap(ctx, a, -1.0f) && !inf_softcap(ctx, a, NAN) &&
          !inf_softcap(ctx, a, INFINITY));
    CHECK(strstr(inf_context_error(ctx)->message, "SOFTCAP: cap 0"));
    inf_context_free(ctx);
}

/* The mask llama.cpp builds for a standard sliding-window layer: key p hidden from query q when
 * p > q or q - p >= window. */
static void fill_window_mask(inf_tensor *mask, int64_t n_past, int64_t window)
{
    for (int64_t q = 0; q < mask->ne[1]; q++)
        for (int64_t p = 0; p < mask->ne[0]; p++) {
            const int64_t qpos = n_past + q;
            tensor_set(mask, p, q, 0, 0, p > qpos || qpos - p >= window ? -INFINITY : 0.0f);
        }
}

TEST(test_soft_max_sliding_window_matches_an_explicit_mask)
{
    test_rng rng = {23};
    for (int iter = 0; iter < 24; iter++) {
        inf_context *ctx = data_context(8);
        const int64_t n_q = rng_int(&rng, 1, 9), n_past = rng_int(&rng, 0, 20);
        const int64_t n_kv = n_past + n_q + rng_int(&rng, 0, 3);
        const int64_t window = rng_int(&rng, 1, n_kv + 2);
        inf_tensor *a = inf_tensor_new_4d(ctx, GGTK_TENSOR_F32, n_kv, n_q, rng_int(&rng, 1, 3), 1);
        inf_tensor *mask = inf_tensor_new_2d(ctx, GGTK_TENSOR_F32, n_kv, n_q);
        tensor_fill(a, &rng, -4.0f, 4.0f);
        fill_window_mask(mask, n_past, window);
        inf_tensor *in = iter % 2 ? inf_cont(ctx, a) : a; /* in place or not */
        inf_tensor *out = inf_soft_max_causal_window(ctx, in, 0.7f, n_past, window);
        CHECK_MSG(out, "%s", inf_context_error(ctx)->message);
        CHECK(compute_graph(ctx, out, 2) == GGTK_OK);
        float *want = malloc((size_t)inf_tensor_nelements(out) * sizeof *want);
        ref_soft_max(a, mask, 0.7f, false, 0, want);
        double err = compare_with(out, want, 1e-7, 2e-6);
        free(want);
        inf_context_free(ctx);
        CHECK_MSG(err <= 1, "iteration %d (past %lld, window %lld): error %g", iter,
                  (long long)n_past, (long long)window, err);
    }
    inf_context *ctx = data_context(1);
    inf_tensor *a = inf_tensor_new_2d(ctx, GGTK_TENSOR_F32, 8, 4);
    CHECK(!inf_soft_max_causal_window(ctx, a, 1.0f, 0, 0));
    CHECK(strstr(inf_context_error(ctx)->message, "sliding window 0"));
    inf_context_free(ctx);
}

/* ---- against ggml's CPU kernels (REF_BIN) ---- */

/* A ggml context with room for a few tensors of n floats and the compute's work buffer. */
static ggml_context_ref *ggml_ctx(const ggml_cpu_ref *ref, int64_t n)
{
    ggml_init_params_ref params = {(size_t)n * 4 * 8 + (64u << 20), NULL, false};
    return ref->init(params);
}

static ggml_tensor_ref *ggml_input(const ggml_cpu_ref *ref, ggml_context_ref *ctx,
                                   const inf_tensor *t)
{
    ggml_tensor_ref *g = ref->new_tensor_2d(ctx, GGML_REF_TYPE_F32, t->ne[0], t->ne[1]);
    memcpy(ref->get_data(g), t->data, (size_t)(t->ne[0] * t->ne[1]) * sizeof(float));
    return g;
}

/* ggml's result of `out` compared with ours bit for bit; false after reporting the first
 * difference. */
static bool same_bits(const ggml_cpu_ref *ref, ggml_context_ref *gctx, ggml_tensor_ref *out,
                      const inf_tensor *ours, const inf_tensor *x, const char *what)
{
    ggml_cgraph_ref *graph = ref->new_graph(gctx);
    ref->build_forward_expand(graph, out);
    if (ref->graph_compute_with_ctx(gctx, graph, 2) != 0)
        return false;
    const float *want = ref->get_data(out), *got = ours->data, *xs = x->data;
    for (int64_t i = 0; i < inf_tensor_nelements(ours); i++) {
        if (memcmp(&want[i], &got[i], sizeof *got) != 0 && !(isnan(want[i]) && isnan(got[i]))) {
            test_fail(__FILE__, __LINE__, "%s(%.9g): ggml %.9g, ours %.9g", what, xs[i],
                          want[i], got[i]);
            return false;
        }
    }
    return true;
}

TEST(test_gelu_geglu_softcap_equal_ggml_bit_for_bit)
{
    ggml_cpu_ref ref;
    const char *why = NULL;
    if (!ggml_cpu_ref_load(&ref, &why))
        SKIP("%s", why);
    test_rng rng = {24};
    inf_context *ctx = data_context(8);
    inf_tensor *x = inf_tensor_new_2d(ctx, GGTK_TENSOR_F32, 1024, N_GELU / 1024);
    inf_tensor *up = inf_tensor_new_2d(ctx, GGTK_TENSOR_F32, 1024, N_GELU / 1024);
    gelu_inputs(x->data, N_GELU, &rng);
    tensor_fill(up, &rng, -2.0f, 2.0f);
    inf_tensor *g = inf_gelu(ctx, x), *gg = inf_geglu(ctx, x, up);
    inf_tensor *sc = inf_softcap(ctx, x, 3.0f);
    CHECK(compute_graph(ctx, g, 2) == GGTK_OK && compute_graph(ctx, gg, 2) == GGTK_OK &&
          compute_graph(ctx, sc, 2) == GGTK_OK);

    ggml_context_ref *gctx = ggml_ctx(&ref, N_GELU);
    ggml_tensor_ref *gx = ggml_input(&ref, gctx, x), *gup = ggml_input(&ref, gctx, up);
    CHECK(same_bits(&ref, gctx, ref.gelu(gctx, gx), g, x, "gelu"));
    CHECK(same_bits(&ref, gctx, ref.geglu_split(gctx, gx, gup), gg, x, "geglu"));
    ggml_tensor_ref *capped =
        ref.scale(gctx, ref.tanh(gctx, ref.scale(gctx, gx, 1.0f / 3.0f)), 3.0f);
    CHECK(same_bits(&ref, gctx, capped, sc, x, "softcap"));
    ref.free(gctx);
    inf_context_free(ctx);
}

TEST(test_soft_max_sliding_window_matches_ggml_soft_max_ext)
{
    ggml_cpu_ref ref;
    const char *why = NULL;
    if (!ggml_cpu_ref_load(&ref, &why))
        SKIP("%s", why);
    test_rng rng = {25};
    for (int iter = 0; iter < 8; iter++) {
        inf_context *ctx = data_context(16);
        const int64_t n_q = rng_int(&rng, 1, 64), n_past = rng_int(&rng, 0, 300);
        const int64_t n_kv = n_past + n_q, window = rng_int(&rng, 1, 320);
        inf_tensor *a = inf_tensor_new_2d(ctx, GGTK_TENSOR_F32, n_kv, n_q);
        inf_tensor *mask = inf_tensor_new_2d(ctx, GGTK_TENSOR_F32, n_kv, n_q);
        tensor_fill(a, &rng, -8.0f, 8.0f);
        fill_window_mask(mask, n_past, window);
        inf_tensor *out = inf_soft_max_causal_window(ctx, inf_cont(ctx, a), 0.125f, n_past, window);
        CHECK(compute_graph(ctx, out, 2) == GGTK_OK);

        ggml_context_ref *gctx = ggml_ctx(&ref, n_kv * n_q);
        ggml_tensor_ref *sm = ref.soft_max_ext(gctx, ggml_input(&ref, gctx, a),
                                               ggml_input(&ref, gctx, mask), 0.125f, 0.0f);
        ggml_cgraph_ref *graph = ref.new_graph(gctx);
        ref.build_forward_expand(graph, sm);
        CHECK(ref.graph_compute_with_ctx(gctx, graph, 2) == 0);
        /* exp differs by float rounding (ours and ggml's polynomials) */
        double err = compare_with(out, ref.get_data(sm), 1e-8, 4e-6);
        ref.free(gctx);
        inf_context_free(ctx);
        CHECK_MSG(err <= 1, "iteration %d (past %lld, window %lld): error %g", iter,
                  (long long)n_past, (long long)window, err);
    }
}
