/* test_simd_levels.c - every SIMD level computes the same floats: the row kernels (softmax,
 * silu, swiglu) and the float matrix product give identical bits at every level this CPU has,
 * special values (NaN, infinities, the exponential's clamps) and vector tails included. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <ggtk/inf_simd.h>
#include "engine/backend/cpu/cpu_math.h"
#include "engine/backend/cpu/vec.h"
#include "infer_util.h"
#include "test.h"

/* The row kernels of each x86 level this CPU runs (NULL where it cannot). */
static const cpu_vec_kernels *vec_at(inf_simd_level level)
{
    if (level == INF_SIMD_SCALAR)
        return &cpu_vec_scalar;
#if defined(__x86_64__)
    if (inf_simd_detect() != INF_SIMD_NEON && inf_simd_detect() >= level)
        return level == INF_SIMD_AVX2 ? &cpu_vec_avx2 : &cpu_vec_avx512;
#endif
    return NULL;
}

/* Same bits, or both NaN (a NaN's payload is not part of the contract). */
static bool same_float(float a, float b)
{
    return (isnan(a) && isnan(b)) || memcmp(&a, &b, sizeof a) == 0;
}

static bool same_double(double a, double b)
{
    return (isnan(a) && isnan(b)) || memcmp(&a, &b, sizeof a) == 0;
}

/* Random values over the exponential's whole range, with special values sprinkled in. */
static void fill_row(test_rng *rng, float *x, int64_t n, bool specials)
{
    static const float special[] = {NAN, INFINITY, -INFINITY, -0.0f, 0.0f, -87.0f, -87.00001f,
                                    88.0f, 88.00001f, -86.99999f, 1e-30f, -100.0f, 100.0f};
    for (int64_t i = 0; i < n; i++) {
        x[i] = rng_uniform(rng, -100.0f, 100.0f);
        if (i % 3 == 0)
            x[i] = rng_uniform(rng, -8.0f, 8.0f);
        if (specials && rng_int(rng, 0, 9) == 0)
            x[i] = special[rng_int(rng, 0, (int64_t)(sizeof special / sizeof *special) - 1)];
    }
}

TEST(test_cpu_expf_is_nan_for_nan_and_zero_below_the_range)
{
    CHECK(isnan(cpu_expf(NAN)));
    CHECK(cpu_expf(-INFINITY) == 0.0f && cpu_expf(-87.5f) == 0.0f);
    CHECK(cpu_expf(0.0f) == 1.0f);
    CHECK(fabsf(cpu_expf(1.0f) - 2.7182817f) <= 2.4e-7f);
    CHECK(isnan(cpu_silu(NAN)));
}

TEST(test_vec_kernels_give_identical_bits_at_every_level)
{
    test_rng rng = {31};
    enum { MAX_N = 100 };
    float x[MAX_N], up[MAX_N], mask[MAX_N];
    float want[4][MAX_N], got[4][MAX_N];
    int compared = 0;
    for (int iter = 0; iter < 400; iter++) {
        const int64_t n = iter < MAX_N ? iter : rng_int(&rng, 0, MAX_N);
        const bool specials = iter % 2 == 1;
        fill_row(&rng, x, n, specials);
        fill_row(&rng, up, n, specials);
        for (int64_t i = 0; i < n; i++)
            mask[i] = rng_int(&rng, 0, 3) == 0 ? -INFINITY : rng_uniform(&rng, -1.0f, 1.0f);
        const float max = rng_uniform(&rng, -10.0f, 10.0f), scale = rng_uniform(&rng, 0.05f, 2.0f);
        float want_max = 0, got_max;
        double want_sum = 0, got_sum;
        for (int level = INF_SIMD_SCALAR; level <= INF_SIMD_AVX512; level++) {
            const cpu_vec_kernels *k = vec_at((inf_simd_level)level);
            if (!k)
                continue;
            float (*out)[MAX_N] = level == INF_SIMD_SCALAR ? want : got;
            k->silu(x, out[0], n);
            k->swiglu(x, up, out[1], n);
            got_max = k->scale_mask_max(x, iter % 3 ? mask : NULL, scale, out[2], n);
            memcpy(out[3], x, (size_t)n * sizeof *x);
            got_sum = k->exp_sum(out[3], max, n);
            if (level == INF_SIMD_SCALAR) {
                want_max = got_max;
                want_sum = got_sum;
                continue;
            }
            compared++;
            const char *name = inf_simd_level_name((inf_simd_level)level);
            for (int o = 0; o < 4; o++) {
                for (int64_t i = 0; i < n; i++)
                    CHECK_MSG(same_float(got[o][i], want[o][i]), "%s kernel %d, n %lld, element %lld: %a, scalar %a (x %a)",
                              name, o, (long long)n, (long long)i, got[o][i], want[o][i], x[i]);
            }
            CHECK_MSG(same_float(got_max, want_max), "%s max %a, scalar %a", name, got_max, want_max);
            CHECK_MSG(same_double(got_sum, want_sum), "%s n %lld sum %a, scalar %a", name, (long long)n, got_sum, want_sum);
        }
    }
    if (!compared)
        SKIP("this CPU has no x86 SIMD level to compare with scalar");
}

/* out = w x for F32 or F16 weights (the float path) at the active level, with K spanning several
 * of the float path's chunks. */
static float *float_product(ggtk_tensor_type type, int64_t K, int64_t M, int64_t N, uint64_t seed)
{
    test_rng rng = {seed};
    inf_context *ctx = data_context(64);
    inf_tensor *w = inf_tensor_new_2d(ctx, type, K, M), *x = inf_tensor_new_2d(ctx, GGTK_TENSOR_F32, K, N);
    tensor_fill(w, &rng, -1, 1);
    tensor_fill(x, &rng, -1, 1);
    inf_tensor *out = inf_mul_mat(ctx, w, x);
    float *result = NULL;
    if (out && compute_graph(ctx, out, 2) == GGTK_OK) {
        result = malloc((size_t)(M * N) * sizeof *result);
        memcpy(result, out->data, (size_t)(M * N) * sizeof *result);
    }
    inf_context_free(ctx);
    return result;
}

TEST(test_float_mul_mat_gives_identical_bits_at_every_level)
{
    const inf_simd_level before = inf_simd_active();
    /* K = 2000 and 1536: two chunks of the float path each; M and N leave tails at every tile size. */
    static const struct { ggtk_tensor_type type; int64_t K, M, N; } cases[] = {
        {GGTK_TENSOR_F32, 2000, 45, 13}, {GGTK_TENSOR_F16, 1536, 37, 7}, {GGTK_TENSOR_F32, 64, 33, 29}};
    int compared = 0;
    for (size_t c = 0; c < sizeof cases / sizeof *cases; c++) {
        const int64_t K = cases[c].K, M = cases[c].M, N = cases[c].N;
        inf_simd_force(INF_SIMD_SCALAR);
        float *want = float_product(cases[c].type, K, M, N, 41 + c);
        CHECK(want != NULL);
        for (int level = INF_SIMD_SCALAR + 1; level < INF_SIMD_LEVEL_COUNT; level++) {
            if (inf_simd_force((inf_simd_level)level) != (inf_simd_level)level)
                continue;
            float *got = float_product(cases[c].type, K, M, N, 41 + c);
            CHECK(got != NULL);
            compared++;
            for (int64_t i = 0; i < M * N; i++)
                CHECK_MSG(memcmp(&got[i], &want[i], sizeof *got) == 0, "%s case %zu element %lld: %a, scalar %a",
                          inf_simd_level_name((inf_simd_level)level), c, (long long)i, got[i], want[i]);
            free(got);
        }
        free(want);
    }
    inf_simd_force(before);
    if (!compared)
        SKIP("this CPU has no SIMD level to compare with scalar");
}
