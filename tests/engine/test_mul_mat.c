/* test_mul_mat.c - the matrix product of every weight type at every SIMD level this CPU has,
 * against the naive reference: random shapes with tails in M and N, non-contiguous activations,
 * batches broadcast over grouped-query heads, and transposed float weights. */
#include <math.h>
#include <stdlib.h>

#include "infer_util.h"
#include "ref_ops.h"
#include "test.h"

static const ggtk_tensor_type weight_types[] = {GGTK_TENSOR_F32,  GGTK_TENSOR_F16,
                                                GGTK_TENSOR_BF16, GGTK_TENSOR_Q8_0,
                                                GGTK_TENSOR_Q4_0, GGTK_TENSOR_Q4_1};

typedef struct case_shape {
    int64_t K, M, N, w_heads, x_heads;
    bool permuted_x;  /* activations as a permuted view (rows strided) */
    bool strided_x;   /* activations as a transposed view (elements strided) */
    bool transposed_w; /* float weights as a transposed view */
} case_shape;

/* Compute one product at the active level and return its worst error against the reference. */
static double run_case(ggtk_tensor_type type, const case_shape *c, test_rng *rng, int threads)
{
    inf_context *ctx = data_context(64);
    inf_tensor *w;
    if (c->transposed_w) {
        inf_tensor *leaf = inf_tensor_new_3d(ctx, type, c->M, c->K, c->w_heads);
        tensor_fill(leaf, rng, -1, 1);
        w = inf_transpose(ctx, leaf);
    } else {
        w = inf_tensor_new_3d(ctx, type, c->K, c->M, c->w_heads);
        tensor_fill_quantized(w, rng, -1, 1);
    }
    inf_tensor *x;
    if (c->permuted_x) {
        x = inf_permute(ctx, inf_tensor_new_3d(ctx, GGTK_TENSOR_F32, c->K, c->x_heads, c->N), 0, 2, 1, 3);
    } else if (c->strided_x) {
        x = inf_transpose(ctx, inf_tensor_new_3d(ctx, GGTK_TENSOR_F32, c->N, c->K, c->x_heads));
    } else {
        x = inf_tensor_new_3d(ctx, GGTK_TENSOR_F32, c->K, c->N, c->x_heads);
    }
    tensor_fill(x, rng, -1, 1);
    inf_tensor *out = inf_mul_mat(ctx, w, x);
    double err = INFINITY;
    if (out && compute_graph(ctx, out, threads) == GGTK_OK) {
        float *want = malloc((size_t)inf_tensor_nelements(out) * sizeof *want);
        ref_mul_mat(w, x, want);
        /* Sums of K products of values in [-1, 1]: the scale of rounding errors grows with K.
         * Q4_1 also carries llama.cpp's fp16 rounding of the activation block sums. */
        double atol = (type == GGTK_TENSOR_Q4_1 ? 2e-3 : 1e-4) * sqrt((double)c->K);
        err = compare_with(out, want, atol, 1e-4);
        free(want);
    } else if (!out) {
        fprintf(stderr, "    %s\n", inf_context_error(ctx)->message);
    }
    inf_context_free(ctx);
    return err;
}

static case_shape random_case(test_rng *rng, ggtk_tensor_type type, int iter)
{
    const bool quantized = type == GGTK_TENSOR_Q8_0 || type == GGTK_TENSOR_Q4_0 ||
                           type == GGTK_TENSOR_Q4_1;
    case_shape c = {
        .K = quantized ? 32 * rng_int(rng, 1, 10) : rng_int(rng, 1, 300),
        .M = rng_int(rng, 1, 80),
        .N = rng_int(rng, 1, 30),
        .w_heads = rng_int(rng, 1, 2),
    };
    c.x_heads = c.w_heads * rng_int(rng, 1, 3);
    c.permuted_x = iter % 3 == 1;
    c.strided_x = iter % 3 == 2;
    c.transposed_w = !quantized && iter % 2 == 1;
    return c;
}

static void check_level(inf_simd_level level)
{
    if (inf_simd_force(level) != level)
        SKIP("this CPU lacks %s", inf_simd_level_name(level));
    test_rng rng = {1234 + level};
    for (size_t t = 0; t < sizeof weight_types / sizeof weight_types[0]; t++) {
        for (int iter = 0; iter < 6; iter++) {
            case_shape c = random_case(&rng, weight_types[t], iter);
            double err = run_case(weight_types[t], &c, &rng, 1 + iter % 2);
            CHECK_MSG(err <= 1,
                      "%s %s K=%lld M=%lld N=%lld heads %lld/%lld%s%s%s: error %g",
                      inf_simd_level_name(level), ggtk_tensor_type_info_get(weight_types[t])->name,
                      (long long)c.K, (long long)c.M, (long long)c.N, (long long)c.w_heads,
                      (long long)c.x_heads, c.permuted_x ? " permuted x" : "",
                      c.strided_x ? " strided x" : "", c.transposed_w ? " transposed w" : "", err);
        }
    }
}

TEST(test_mul_mat_scalar_matches_reference_for_every_weight_type)
{
    check_level(INF_SIMD_SCALAR);
}

TEST(test_mul_mat_avx2_matches_reference_for_every_weight_type)
{
    check_level(INF_SIMD_AVX2);
}

TEST(test_mul_mat_avx512_matches_reference_for_every_weight_type)
{
    check_level(INF_SIMD_AVX512);
}

TEST(test_mul_mat_large_batch_matches_reference)
{
    /* Shapes past the tile sizes in every direction, and a reduction long enough to be cut into
     * several chunks whose partial sums add up in the result. */
    test_rng rng = {99};
    for (size_t t = 0; t < sizeof weight_types / sizeof weight_types[0]; t++) {
        case_shape c = {.K = 1600, .M = 100, .N = 77, .w_heads = 1, .x_heads = 1};
        double err = run_case(weight_types[t], &c, &rng, 2);
        CHECK_MSG(err <= 1, "%s: error %g", ggtk_tensor_type_info_get(weight_types[t])->name, err);
    }
}

/* An output of 8208 x 1030 floats (32 MiB), written around the caches by the levels that can:
 * a sample of elements of every weight type against direct dot products. */
static void check_large_output(inf_simd_level level)
{
    test_rng rng = {7};
    const int64_t K = 64, M = 8208, N = 1030; /* rows 64-byte aligned, a 16-row tail panel */
    for (size_t t = 0; t < sizeof weight_types / sizeof weight_types[0]; t++) {
        inf_context *ctx = data_context(64);
        inf_tensor *w = inf_tensor_new_2d(ctx, weight_types[t], K, M);
        inf_tensor *x = inf_tensor_new_2d(ctx, GGTK_TENSOR_F32, K, N);
        tensor_fill_quantized(w, &rng, -1, 1);
        tensor_fill(x, &rng, -1, 1);
        inf_tensor *out = inf_mul_mat(ctx, w, x);
        CHECK(compute_graph(ctx, out, 2) == GGTK_OK);
        for (int s = 0; s < 300; s++) {
            const int64_t m = s == 0 ? M - 1 : rng_int(&rng, 0, M - 1);
            const int64_t n = s == 0 ? N - 1 : rng_int(&rng, 0, N - 1);
            inf_tensor *wrow = inf_view_2d(ctx, w, K, 1, w->nb[1], (size_t)m * w->nb[1]);
            inf_tensor *xrow = inf_view_2d(ctx, x, K, 1, x->nb[1], (size_t)n * x->nb[1]);
            float want;
            ref_mul_mat(wrow, xrow, &want);
            float got = tensor_get(out, m, n, 0, 0);
            CHECK_MSG(fabsf(got - want) <= 1e-3f * 8 + 1e-4f * fabsf(want), "%s %s [%lld, %lld]: %g vs %g",
                      inf_simd_level_name(level), ggtk_tensor_type_info_get(weight_types[t])->name,
                      (long long)n, (long long)m, got, want);
        }
        inf_context_free(ctx);
    }
}

TEST(test_mul_mat_output_larger_than_the_caches_is_complete_at_avx2)
{
    if (inf_simd_force(INF_SIMD_AVX2) != INF_SIMD_AVX2)
        SKIP("this CPU lacks avx2");
    check_large_output(INF_SIMD_AVX2);
    inf_simd_force(inf_simd_detect());
}

TEST(test_mul_mat_output_larger_than_the_caches_is_complete_at_avx512)
{
    if (inf_simd_force(INF_SIMD_AVX512) != INF_SIMD_AVX512)
        SKIP("this CPU lacks avx512");
    check_large_output(INF_SIMD_AVX512);
    inf_simd_force(inf_simd_detect());
}
