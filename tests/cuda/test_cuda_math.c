/* test_cuda_math.c - the maths the CUDA kernels share with the CPU backend, run on the host: the
 * host/device headers of libinfer/src/engine/backend/cuda (fp16/bf16 conversions, the
 * exponential and SiLU, rope angles, the softmax and RMS-norm steps) against the CPU's functions
 * and ops. They need no GPU and no emulator: what they prove is that the functions the kernels
 * call compute the CPU's bits when given the same inputs; test_cuda_ops.c then runs the kernels.
 * The softmax and RMS-norm checks sum in a block's order (per-thread strides, then a tree), as
 * the kernels do, and bound how far that order moves the result from the CPU's. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "engine/backend/cpu/cpu_gelu.h"
#include "engine/backend/cpu/cpu_math.h"
#include "engine/backend/cuda/exp_math.cuh"
#include "engine/backend/cuda/float_convert.cuh"
#include "engine/backend/cuda/rope_math.cuh"
#include "engine/infer_util.h"
#include "test.h"

/* Distance in units in the last place between two floats of the same sign; 0 for two NaNs. */
static uint32_t ulps(float a, float b)
{
    if (isnan(a) && isnan(b))
        return 0;
    if (isnan(a) || isnan(b) || signbit(a) != signbit(b))
        return a == b ? 0 : UINT32_MAX;
    const uint32_t x = cuda_float_bits(a) & 0x7FFFFFFF, y = cuda_float_bits(b) & 0x7FFFFFFF;
    return x > y ? x - y : y - x;
}

/* Floats that probe a float -> fp16/bf16 conversion: every 97th bit pattern, and for every
 * 16-bit pattern h the values at and around the rounding ties just above it in both formats. */
static int check_narrowing(uint32_t u)
{
    const float f = cuda_float_from_bits(u);
    if (cuda_fp32_to_fp16(f) != inf_fp32_to_fp16(f)) {
        test_fail(__FILE__, __LINE__, "fp16 of %08x: %04x, CPU %04x", u, cuda_fp32_to_fp16(f),
                  inf_fp32_to_fp16(f));
        return 1;
    }
    if (cuda_fp32_to_bf16(f) != inf_fp32_to_bf16(f)) {
        test_fail(__FILE__, __LINE__, "bf16 of %08x: %04x, CPU %04x", u, cuda_fp32_to_bf16(f),
                  inf_fp32_to_bf16(f));
        return 1;
    }
    return 0;
}

TEST(test_cuda_fp16_and_bf16_conversions_equal_the_cpus)
{
    for (uint32_t h = 0; h < 0x10000; h++) {
        const float half = inf_fp16_to_fp32((inf_fp16)h);
        CHECK_MSG(cuda_float_bits(cuda_fp16_to_fp32((uint16_t)h)) == cuda_float_bits(half), "fp16 %04x widened", h);
        CHECK_MSG(cuda_float_bits(cuda_bf16_to_fp32((uint16_t)h)) == cuda_float_bits(inf_bf16_to_fp32((inf_bf16)h)),
                  "bf16 %04x widened", h);
        /* the fp16 tie above h (exact in float for finite h), and its neighbours */
        if (isfinite(half) && (h & 0x7FFF) != 0x7BFF) {
            const float next = inf_fp16_to_fp32((inf_fp16)(h + 1));
            const float tie = (float)(((double)half + (double)next) / 2);
            for (int d = -1; d <= 1; d++)
                CHECK(check_narrowing(cuda_float_bits(tie) + (uint32_t)d) == 0);
        }
        for (uint32_t low = 0x7FFF; low <= 0x8001; low++) /* the bf16 tie and its neighbours */
            CHECK(check_narrowing(h << 16 | low) == 0);
    }
    for (uint64_t u = 0; u <= UINT32_MAX; u += 97)
        CHECK(check_narrowing((uint32_t)u) == 0);
}

/* cuda_expf and cuda_silu against cpu_expf and cpu_silu on a uniform sweep of the range where
 * the exponential is neither 0 nor saturated, on every 4093rd bit pattern and on the edges. */
static int check_exp(float x)
{
    if (cuda_float_bits(cuda_expf(x)) != cuda_float_bits(cpu_expf(x)) || cuda_float_bits(cuda_silu(x)) != cuda_float_bits(cpu_silu(x))) {
        test_fail(__FILE__, __LINE__, "x %a: exp %a (CPU %a), silu %a (CPU %a)", (double)x,
                  (double)cuda_expf(x), (double)cpu_expf(x), (double)cuda_silu(x),
                  (double)cpu_silu(x));
        return 1;
    }
    return 0;
}

TEST(test_cuda_expf_and_silu_equal_the_cpus)
{
    const float edges[] = {0.0f, -0.0f, INFINITY, -INFINITY, NAN, -87.0f, 88.0f,
                           nextafterf(-87.0f, -100.0f), nextafterf(88.0f, 100.0f), 1e-30f};
    for (size_t i = 0; i < sizeof edges / sizeof edges[0]; i++)
        CHECK(check_exp(edges[i]) == 0);
    for (int i = 0; i <= 1 << 20; i++)
        CHECK(check_exp(-100.0f + 200.0f * (float)i / (float)(1 << 20)) == 0);
    for (uint64_t u = 0; u <= UINT32_MAX; u += 4093)
        CHECK(check_exp(cuda_float_from_bits((uint32_t)u)) == 0);
}

TEST(test_cuda_gelu_index_reads_the_cpu_table_entry_for_every_half)
{
    /* The kernel's gelu() is table[cuda_fp32_to_fp16(x)] inside (-10, 10) over the CPU's own
     * table: the index must be the CPU's for every input, here every half and its midpoints. */
    const float *table = cpu_gelu_table();
    for (uint32_t h = 0; h < 0x10000; h++) {
        const float x = inf_fp16_to_fp32((inf_fp16)h), above = nextafterf(x, INFINITY);
        if (!(fabsf(x) < 10.0f))
            continue;
        CHECK_MSG(cuda_float_bits(table[cuda_fp32_to_fp16(x)]) == cuda_float_bits(cpu_gelu(table, x)), "half %04x", h);
        CHECK_MSG(cuda_float_bits(table[cuda_fp32_to_fp16(above)]) == cuda_float_bits(cpu_gelu(table, above)),
                  "above half %04x", h);
    }
}

/* One rope configuration: the node's op_params come from inf_rope_ext, as in a model. */
typedef struct rope_case {
    inf_rope_mode mode;
    int head_dim, n_dims;
    bool factors;
    inf_rope_params params;
} rope_case;

/* Compute a rope node on the CPU backend and recompute it on the host with rope_math.cuh (and
 * the host's cosf/sinf, as the CPU uses): every element must have the same bits. */
static void check_rope_case(const rope_case *c, test_rng *rng)
{
    enum { N_HEAD = 3, N_TOKENS = 7 };
    inf_context *ctx = data_context(8);
    /* a permuted source: the host recomputation reads it through its strides */
    inf_tensor *a = inf_permute(ctx, inf_tensor_new_4d(ctx, GGTK_TENSOR_F32, c->head_dim,
                                                       N_TOKENS, N_HEAD, 1), 0, 2, 1, 3);
    tensor_fill(a, rng, -3.0f, 3.0f);
    inf_tensor *pos = inf_tensor_new_1d(ctx, GGTK_TENSOR_I32, N_TOKENS);
    const int32_t positions[N_TOKENS] = {0, 1, 17, 511, 4096, 32767, 131071};
    memcpy(pos->data, positions, sizeof positions);
    inf_tensor *factors = NULL;
    if (c->factors) {
        factors = inf_tensor_new_1d(ctx, GGTK_TENSOR_F32, c->n_dims / 2);
        tensor_fill(factors, rng, 1.0f, 40.0f);
    }
    inf_tensor *out = inf_rope_ext(ctx, a, pos, factors, c->n_dims, c->mode, &c->params);
    CHECK_MSG(out, "%s", inf_context_error(ctx)->message);
    CHECK(compute_graph(ctx, out, 2) == GGTK_OK);
    const cuda_rope_math m = cuda_rope_math_init(out->op_params);
    const int half = c->n_dims / 2;
    for (int t = 0; t < N_TOKENS; t++) {
        for (int h = 0; h < N_HEAD; h++) {
            for (int j = 0; j < half; j++) {
                float mscale, y0, y1;
                const float angle = cuda_rope_angle(&m, (float)positions[t], j,
                                                    factors ? tensor_get(factors, j, 0, 0, 0) : 1.0f,
                                                    &mscale);
                const int i0 = c->mode == INF_ROPE_NEOX ? j : 2 * j;
                const int i1 = c->mode == INF_ROPE_NEOX ? j + half : 2 * j + 1;
                cuda_rope_rotate(tensor_get(a, i0, h, t, 0), tensor_get(a, i1, h, t, 0),
                                 cuda_mul(cosf(angle), mscale), cuda_mul(sinf(angle), mscale),
                                 &y0, &y1);
                CHECK_MSG(cuda_float_bits(y0) == cuda_float_bits(tensor_get(out, i0, h, t, 0)) &&
                              cuda_float_bits(y1) == cuda_float_bits(tensor_get(out, i1, h, t, 0)),
                          "mode %d n_dims %d: token %d head %d pair %d: %a %a, CPU %a %a",
                          c->mode, c->n_dims, t, h, j, (double)y0, (double)y1,
                          (double)tensor_get(out, i0, h, t, 0), (double)tensor_get(out, i1, h, t, 0));
            }
            for (int i = c->n_dims; i < c->head_dim; i++)
                CHECK(cuda_float_bits(tensor_get(out, i, h, t, 0)) == cuda_float_bits(tensor_get(a, i, h, t, 0)));
        }
    }
    inf_context_free(ctx);
}

TEST(test_cuda_rope_math_gives_the_cpu_ops_bits)
{
    test_rng rng = {1234};
    const inf_rope_params plain = inf_rope_params_plain(10000.0f, 1.0f);
    const inf_rope_params linear = inf_rope_params_plain(500000.0f, 0.25f);
    const inf_rope_params yarn = {10000.0f, 0.25f, 1.0f, 1.0f, 32.0f, 1.0f, 4096};
    const inf_rope_params yarn_partial_mix = {1000000.0f, 0.125f, 0.5f, 0.75f, 24.0f, 2.0f, 2048};
    const rope_case cases[] = {
        {INF_ROPE_NORMAL, 64, 64, false, plain},    {INF_ROPE_NEOX, 64, 64, false, plain},
        {INF_ROPE_NORMAL, 80, 32, false, plain},    {INF_ROPE_NEOX, 80, 32, false, linear},
        {INF_ROPE_NORMAL, 128, 128, true, linear},  {INF_ROPE_NEOX, 128, 96, true, plain},
        {INF_ROPE_NORMAL, 64, 64, false, yarn},     {INF_ROPE_NEOX, 96, 64, true, yarn},
        {INF_ROPE_NEOX, 128, 128, false, yarn_partial_mix},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        check_rope_case(&cases[i], &rng);
}

/* A sum of doubles in a block's order: thread t adds elements t, t + threads, ... and the
 * threads' sums are added pairwise in a tree (cuda_block_sum()). */
static double block_order_sum(const double *v, int64_t n, int threads)
{
    double partial[1024] = {0};
    for (int64_t i = 0; i < n; i++)
        partial[i % threads] += v[i];
    for (int half = threads / 2; half > 0; half /= 2)
        for (int t = 0; t < half; t++)
            partial[t] += partial[t + half];
    return partial[0];
}

/* One softmax row as the kernel computes it, from the CPU op's inputs. */
static void soft_max_row_as_kernel(const inf_tensor *a, const inf_tensor *mask, float scale,
                                   bool causal, int64_t n_past, int64_t window, int64_t i1,
                                   int64_t i2, float *out)
{
    const int64_t n_kv = a->ne[0];
    int64_t first, visible;
    cuda_softmax_keys(causal, n_past, window, n_kv, i1, &first, &visible);
    double *terms = calloc((size_t)n_kv, sizeof *terms);
    float largest = -INFINITY;
    for (int64_t i = 0; i < n_kv; i++)
        out[i] = 0.0f;
    for (int64_t i = first; i < first + visible; i++) {
        out[i] = cuda_softmax_logit(tensor_get(a, i, i1, i2, 0), scale, mask != NULL,
                                    mask ? tensor_get(mask, i, i1, 0, 0) : 0.0f);
        largest = out[i] > largest ? out[i] : largest;
    }
    if (largest != -INFINITY) {
        for (int64_t i = first; i < first + visible; i++) {
            out[i] = cuda_expf(cuda_sub(out[i], largest));
            terms[i - first] = out[i];
        }
    }
    const float norm = cuda_softmax_norm(block_order_sum(terms, visible, 1024));
    for (int64_t i = first; i < first + visible; i++)
        out[i] = cuda_mul(out[i], norm);
    free(terms);
}

/* Softmax rows of the given width with a mask (some keys, and one whole row, hidden), causal
 * and windowed: the kernel's steps with its summation order against the CPU op, within 1 ulp. */
static void check_soft_max_width(int64_t n_kv, test_rng *rng, uint32_t *worst)
{
    enum { N_Q = 4, HEADS = 2 };
    for (int kind = 0; kind < 3; kind++) {
        inf_context *ctx = data_context(4 + (size_t)(n_kv * N_Q * HEADS * 12 >> 20));
        inf_tensor *a = inf_tensor_new_4d(ctx, GGTK_TENSOR_F32, n_kv, N_Q, HEADS, 1);
        tensor_fill(a, rng, -8.0f, 8.0f);
        const int64_t n_past = n_kv - N_Q > 0 ? n_kv - N_Q : 0, window = kind == 2 ? 3 : 0;
        inf_tensor *mask = NULL, *out;
        if (kind == 0 || n_kv < N_Q) {
            mask = inf_tensor_new_2d(ctx, GGTK_TENSOR_F32, n_kv, N_Q);
            tensor_fill(mask, rng, -2.0f, 2.0f);
            for (int64_t i = 0; i < n_kv; i++) {
                tensor_set(mask, i, 1, 0, 0, -INFINITY); /* a fully hidden row */
                if (i % 3 == 0)
                    tensor_set(mask, i, 2, 0, 0, -INFINITY);
            }
            out = inf_soft_max(ctx, a, mask, 0.125f);
        } else if (kind == 1) {
            out = inf_soft_max_causal(ctx, a, 0.125f, n_past);
        } else {
            out = inf_soft_max_causal_window(ctx, a, 0.125f, n_past, window);
        }
        CHECK_MSG(out, "%s", inf_context_error(ctx)->message);
        CHECK(compute_graph(ctx, out, 2) == GGTK_OK);
        float *row = malloc((size_t)n_kv * sizeof *row);
        for (int64_t i2 = 0; i2 < HEADS; i2++) {
            for (int64_t i1 = 0; i1 < N_Q; i1++) {
                soft_max_row_as_kernel(a, mask, 0.125f, !mask, n_past, mask ? 0 : window, i1, i2,
                                       row);
                for (int64_t i = 0; i < n_kv; i++) {
                    const uint32_t d = ulps(row[i], tensor_get(out, i, i1, i2, 0));
                    CHECK_MSG(d <= 1, "width %lld kind %d row %lld/%lld key %lld: %a, CPU %a",
                              (long long)n_kv, kind, (long long)i2, (long long)i1, (long long)i,
                              (double)row[i], (double)tensor_get(out, i, i1, i2, 0));
                    *worst = d > *worst ? d : *worst;
                }
            }
        }
        free(row);
        inf_context_free(ctx);
    }
}

TEST(test_cuda_soft_max_steps_match_the_cpu_op_within_one_ulp)
{
    test_rng rng = {99};
    const int64_t widths[] = {1, 3, 31, 33, 4097, 262144};
    uint32_t worst = 0;
    for (size_t i = 0; i < sizeof widths / sizeof widths[0]; i++)
        check_soft_max_width(widths[i], &rng, &worst);
    CHECK(worst <= 1);
}

TEST(test_cuda_rms_norm_in_block_order_matches_the_cpu_op_within_one_ulp)
{
    test_rng rng = {5};
    const int64_t widths[] = {1, 3, 576, 4097, 65536};
    for (size_t w = 0; w < sizeof widths / sizeof widths[0]; w++) {
        const int64_t n = widths[w];
        inf_context *ctx = data_context(4 + (size_t)(n * 8 * 8 >> 20));
        inf_tensor *a = inf_tensor_new_2d(ctx, GGTK_TENSOR_F32, n, 8);
        tensor_fill(a, &rng, -50.0f, 50.0f);
        inf_tensor *out = inf_rms_norm(ctx, a, 1e-6f);
        CHECK(compute_graph(ctx, out, 2) == GGTK_OK);
        double *squares = malloc((size_t)n * sizeof *squares);
        for (int64_t r = 0; r < 8; r++) {
            for (int64_t i = 0; i < n; i++) {
                const float v = tensor_get(a, i, r, 0, 0);
                squares[i] = (double)cuda_mul(v, v);
            }
            const float mean = (float)(block_order_sum(squares, n, 512) / (double)n);
            const float scale = cuda_div(1.0f, cuda_sqrt(cuda_add(mean, 1e-6f)));
            for (int64_t i = 0; i < n; i++) {
                const float want = tensor_get(out, i, r, 0, 0);
                const float got = cuda_mul(tensor_get(a, i, r, 0, 0), scale);
                CHECK_MSG(ulps(got, want) <= 1, "width %lld row %lld: %a, CPU %a", (long long)n,
                          (long long)r, (double)got, (double)want);
            }
        }
        free(squares);
        inf_context_free(ctx);
    }
}
