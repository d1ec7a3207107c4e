/* test_mul_mat_quant.c - the matrix product of every block-quantized weight type (the integer
 * path of Q8_0 .. Q6_K, and the dequantizing float path of IQ*, TQ*, MXFP4 ...) at every SIMD
 * level, against a double-precision product of the dequantized weights with the dequantized
 * activations, with an error bound computed per element; integer-path levels compared bit for
 * bit; get_rows of every dequantizable type. Weights are random block bytes
 * (every code pattern), redrawn until a block dequantizes to finite values below 100. */
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "engine/backend/cpu/matmul.h"
#include "engine/quant_kernels/quant_internal.h"
#include "engine/quant_kernels/quant_kblocks.h"
#include "infer_util.h"
#include "test.h"

static const inf_simd_level levels[] = {INF_SIMD_SCALAR, INF_SIMD_AVX2, INF_SIMD_AVX512};

typedef struct mm_case {
    int64_t K, M, N, w_heads, x_heads;
    int threads;
} mm_case;

/* K multiples of 256 up to 4096, M not a multiple of any panel (8, 16, 32), N = 1, 7 and 64,
 * a grouped-query broadcast (each weight matrix serves two activation matrices). */
static const mm_case cases[] = {
    {256, 45, 1, 1, 1, 1},  {512, 77, 7, 2, 4, 2},  {1280, 33, 64, 1, 1, 2},
    {4096, 50, 7, 1, 1, 1}, {768, 19, 64, 1, 2, 2},
};

/* Random bytes for every block of `t` (contiguous), each redrawn until it dequantizes finite
 * and below 100 in magnitude (random fp16/E8M0 scales are often huge or NaN). */
static void fill_blocks(inf_tensor *t, test_rng *rng)
{
    const ggtk_tensor_type_info *info = ggtk_tensor_type_info_get(t->type);
    const int64_t blocks = inf_tensor_nelements(t) / info->block_size;
    float *x = malloc(info->block_size * sizeof *x);
    for (int64_t b = 0; b < blocks; b++) {
        uint8_t *blk = (uint8_t *)t->data + (size_t)b * info->block_bytes;
        for (bool ok = false; !ok;) {
            for (uint32_t i = 0; i < info->block_bytes; i++)
                blk[i] = (uint8_t)rng_next(rng);
            inf_dequantize_row(t->type, blk, x, info->block_size);
            ok = true;
            for (uint32_t i = 0; i < info->block_size; i++)
                ok &= fabsf(x[i]) < 100.0f;
        }
    }
    free(x);
}

/* One activation row as the product packs it: codes q, block scales d (a K type's block carries
 * its Q8_K super-block's scale), sub-block sums s (the float s of affine weights). */
static void quantize_activations(const mm_weight_format *f, const float *x, int64_t K, int8_t *q,
                                 float *d, float *s)
{
    const int64_t nb = K / MM_BLOCK;
    if (f->act == MM_ACT_Q8_K) {
        block_q8_K *blocks = malloc((size_t)(K / QUANT_KBLOCK) * sizeof *blocks);
        inf_quantize_row(GGTK_TENSOR_Q8_K, x, blocks, K);
        for (int64_t b = 0; b < nb; b++) {
            const block_q8_K *sb = &blocks[b / (QUANT_KBLOCK / MM_BLOCK)];
            memcpy(q + b * MM_BLOCK, sb->qs + b % (QUANT_KBLOCK / MM_BLOCK) * MM_BLOCK, MM_BLOCK);
            d[b] = sb->d;
            for (int sub = 0; sub < f->subs; sub++) {
                int32_t sum = 0;
                for (int e = 0; e < MM_BLOCK / f->subs; e++)
                    sum += q[b * MM_BLOCK + sub * MM_BLOCK / f->subs + e];
                s[b * f->subs + sub] = d[b] * (float)sum;
            }
        }
        free(blocks);
        return;
    }
    const bool q81 = f->act == MM_ACT_Q8_1;
    void *blocks = malloc((size_t)nb * sizeof(block_q8_1));
    inf_quantize_row(q81 ? GGTK_TENSOR_Q8_1 : GGTK_TENSOR_Q8_0, x, blocks, K);
    for (int64_t b = 0; b < nb; b++) {
        const block_q8_1 *b1 = (const block_q8_1 *)blocks + b;
        const block_q8_0 *b0 = (const block_q8_0 *)blocks + b;
        memcpy(q + b * MM_BLOCK, q81 ? b1->qs : b0->qs, MM_BLOCK);
        d[b] = inf_fp16_to_fp32(q81 ? b1->d : b0->d);
        s[b] = q81 ? inf_fp16_to_fp32(b1->s) : 0.0f;
    }
    free(blocks);
}

/* The exact (double) product of one weight row and one activation row of an integer-path type,
 * and the bound on the product's float rounding. Per sub-block the kernels compute
 * acc = fma(isum, fl(d * d_a), acc) (+ fma(m, s, acc)), each step rounding by at most
 * u = 2^-24 relative to a value no larger than A = sum over sub-blocks of |isum d d_a| +
 * |m s|; later reduction chunks add into dst once each. With at most 3 roundings per sub-block
 * and one per chunk (chunks <= blocks), |ours - exact| <= u A (3 subs + blocks + 2). Affine
 * types add m * s where the exact product has m * d_a * sum(q): the difference (Q8_1's fp16
 * rounding of s, or the float rounding of d_a * sum) is added to the bound exactly. */
static double exact_row_product(const mm_weight_format *f, const char *wrow, const float *wdeq,
                                const int8_t *q, const float *d, const float *s, int64_t K,
                                double *bound)
{
    const int64_t nb = K / MM_BLOCK;
    double exact = 0, A = 0, dev = 0;
    for (int64_t k = 0; k < K; k++)
        exact += (double)wdeq[k] * ((double)d[k / MM_BLOCK] * q[k]);
    for (int64_t b = 0; b < nb; b++) {
        uint8_t u[MM_BLOCK];
        float ws[2], wm[2];
        f->codes(wrow, b, u);
        f->scales(wrow, b, ws, wm);
        for (int sub = 0; sub < f->subs; sub++) {
            const int size = MM_BLOCK / f->subs;
            int64_t isum = 0, qsum = 0;
            for (int e = sub * size; e < (sub + 1) * size; e++) {
                isum += (int64_t)(u[e] - (f->affine ? 0 : f->offset)) * q[b * MM_BLOCK + e];
                qsum += q[b * MM_BLOCK + e];
            }
            const double sa = f->affine ? s[b * f->subs + sub] : 0.0;
            A += fabs((double)isum * ws[sub] * d[b]) + fabs((double)wm[sub] * sa);
            if (f->affine)
                dev += fabs((double)wm[sub]) * fabs((double)d[b] * (double)qsum - sa);
        }
    }
    *bound = dev + 0x1p-24 * A * (3.0 * (double)nb * f->subs + (double)nb + 2);
    return exact;
}

/* The float path's bound: K products summed (two roundings each where the level does not fuse
 * them), plus one rounding per chunk, relative to sum |w x|. */
static double exact_float_product(const float *wdeq, const float *x, int64_t K, double *bound)
{
    double exact = 0, A = 0;
    for (int64_t k = 0; k < K; k++) {
        exact += (double)wdeq[k] * x[k];
        A += fabs((double)wdeq[k] * x[k]);
    }
    *bound = 0x1p-24 * A * (2.0 * (double)K + 16);
    return exact;
}

/* Run one case at the active level; fills `got` (M*N*x_heads floats) and returns the worst
 * |got - exact| / bound (<= 1 passes), or INFINITY when the product fails. The weights are
 * random blocks, or the bytes at `rows` (one weight matrix, contiguous) when not NULL. */
static double run_case(ggtk_tensor_type type, const mm_case *c, unsigned seed, const void *rows,
                       float *got)
{
    const mm_weight_format *f = mm_weight_format_get(type);
    test_rng rng = {seed};
    inf_context *ctx = data_context(64);
    inf_tensor *w = inf_tensor_new_3d(ctx, type, c->K, c->M, c->w_heads);
    inf_tensor *x = inf_tensor_new_3d(ctx, GGTK_TENSOR_F32, c->K, c->N, c->x_heads);
    if (rows)
        memcpy(w->data, rows, inf_tensor_nbytes(w));
    else
        fill_blocks(w, &rng);
    tensor_fill(x, &rng, -1, 1);
    inf_tensor *out = inf_mul_mat(ctx, w, x);
    if (!out || compute_graph(ctx, out, c->threads) != GGTK_OK) {
        inf_context_free(ctx);
        return INFINITY;
    }
    const int64_t K = c->K, nb = K / MM_BLOCK;
    float *wdeq = malloc((size_t)K * sizeof *wdeq), *d = malloc((size_t)nb * sizeof *d);
    float *s = malloc((size_t)nb * 2 * sizeof *s);
    int8_t *q = malloc((size_t)K);
    double worst = 0;
    for (int64_t h = 0; h < c->x_heads; h++) {
        for (int64_t n = 0; n < c->N; n++) {
            const float *xrow = (const float *)((const char *)x->data + n * x->nb[1] + h * x->nb[2]);
            if (f)
                quantize_activations(f, xrow, K, q, d, s);
            for (int64_t m = 0; m < c->M; m++) {
                const char *wrow = (const char *)w->data + m * w->nb[1] +
                                   h / (c->x_heads / c->w_heads) * w->nb[2];
                inf_dequantize_row(type, wrow, wdeq, K);
                double bound;
                const double want = f ? exact_row_product(f, wrow, wdeq, q, d, s, K, &bound)
                                      : exact_float_product(wdeq, xrow, K, &bound);
                const float v = *(const float *)((const char *)out->data + m * out->nb[0] +
                                                 n * out->nb[1] + h * out->nb[2]);
                got[(h * c->N + n) * c->M + m] = v;
                const double err = fabs((double)v - want) / (bound + 1e-30);
                worst = err > worst || isnan(v) ? (isnan(v) ? INFINITY : err) : worst;
            }
        }
    }
    free(wdeq);
    free(d);
    free(s);
    free(q);
    inf_context_free(ctx);
    return worst;
}

/* Every case of `type` at every level within its bound; on the integer path every level gives
 * the same floats bit for bit (same integer sums, same float operations, same chunks). */
static void check_cases(ggtk_tensor_type type, const mm_case *list, size_t n_cases, const void *rows)
{
    const char *name = ggtk_tensor_type_info_get(type)->name;
    for (size_t ci = 0; ci < n_cases; ci++) {
        const mm_case *c = &list[ci];
        const size_t n_out = (size_t)(c->M * c->N * c->x_heads);
        float *first = malloc(n_out * sizeof *first), *got = malloc(n_out * sizeof *got);
        int ran = 0;
        for (size_t li = 0; li < sizeof levels / sizeof levels[0]; li++) {
            if (inf_simd_force(levels[li]) != levels[li])
                continue;
            const double err = run_case(type, c, 1000 + (unsigned)ci, rows, ran ? got : first);
            CHECK_MSG(err <= 1, "%s %s K=%lld M=%lld N=%lld heads %lld/%lld: error %g of the bound",
                      name, inf_simd_level_name(levels[li]), (long long)c->K, (long long)c->M,
                      (long long)c->N, (long long)c->w_heads, (long long)c->x_heads, err);
            if (ran && mm_weight_format_get(type))
                CHECK_MSG(memcmp(first, got, n_out * sizeof *got) == 0,
                          "%s %s K=%lld: not bit-identical to the scalar level", name,
                          inf_simd_level_name(levels[li]), (long long)c->K);
            ran++;
        }
        inf_simd_force(inf_simd_detect());
        free(first);
        free(got);
    }
}

static void check_type(ggtk_tensor_type type)
{
    check_cases(type, cases, sizeof cases / sizeof cases[0], NULL);
}

TEST(test_mul_mat_integer_path_is_exact_up_to_float_rounding_at_every_level)
{
    static const ggtk_tensor_type types[] = {
        GGTK_TENSOR_Q8_0, GGTK_TENSOR_Q4_0, GGTK_TENSOR_Q4_1, GGTK_TENSOR_Q5_0, GGTK_TENSOR_Q5_1,
        GGTK_TENSOR_Q2_K, GGTK_TENSOR_Q3_K, GGTK_TENSOR_Q4_K, GGTK_TENSOR_Q5_K, GGTK_TENSOR_Q6_K,
    };
    for (size_t t = 0; t < sizeof types / sizeof types[0]; t++) {
        CHECK_MSG(mm_weight_format_get(types[t]) != NULL, "type %d has no integer path", (int)types[t]);
        check_type(types[t]);
    }
}

/* Q8_0 at the code extremes, where a byte kernel's 16-bit pair sums come closest to saturating:
 * weight rows of -128s, of 127s, alternating -128/127 and random codes, against activation rows
 * of +1s, -1s, alternating signs and random signs (codes +-127). At every level the products
 * equal the exact integer dot products times the scales (one block per row: no rounding beyond
 * the final multiply-add) and the scalar level's floats bit for bit. */
TEST(test_mul_mat_q8_0_extreme_codes_are_exact_at_every_level)
{
    enum { K = MM_BLOCK, M = 21, N = 7 };
    test_rng rng = {77};
    block_q8_0 wrows[M];
    for (int m = 0; m < M; m++) {
        wrows[m].d = 0x3C00; /* 1.0 */
        for (int e = 0; e < K; e++) {
            const int8_t pattern[3] = {-128, 127, (int8_t)(e % 2 ? 127 : -128)};
            wrows[m].qs[e] = m < 3 ? pattern[m] : (int8_t)rng_next(&rng);
        }
    }
    float xrows[N][K], first[N][M];
    for (int n = 0; n < N; n++)
        for (int e = 0; e < K; e++)
            xrows[n][e] = n == 0 ? 1.0f : n == 1 ? -1.0f : n == 2 ? (e % 2 ? 1.0f : -1.0f)
                                                               : (rng_next(&rng) & 1 ? 1.0f : -1.0f);
    int ran = 0;
    for (size_t li = 0; li < sizeof levels / sizeof levels[0]; li++) {
        if (inf_simd_force(levels[li]) != levels[li])
            continue;
        inf_context *ctx = data_context(4);
        inf_tensor *w = inf_tensor_new_2d(ctx, GGTK_TENSOR_Q8_0, K, M);
        inf_tensor *x = inf_tensor_new_2d(ctx, GGTK_TENSOR_F32, K, N);
        memcpy(w->data, wrows, sizeof wrows);
        memcpy(x->data, xrows, sizeof xrows);
        inf_tensor *out = inf_mul_mat(ctx, w, x);
        CHECK(out && compute_graph(ctx, out, 1) == GGTK_OK);
        for (int n = 0; out && n < N; n++) {
            block_q8_0 a;
            inf_quantize_row(GGTK_TENSOR_Q8_0, xrows[n], &a, K);
            for (int m = 0; m < M; m++) {
                int32_t isum = 0;
                for (int e = 0; e < K; e++)
                    isum += wrows[m].qs[e] * a.qs[e];
                const float want = fmaf((float)isum, 1.0f * inf_fp16_to_fp32(a.d), 0.0f);
                const float got = ((const float *)out->data)[n * M + m];
                CHECK_MSG(got == want, "%s row %d x %d: %.9g, want %.9g (integer sum %d)",
                          inf_simd_level_name(levels[li]), m, n, got, want, isum);
                if (ran)
                    CHECK_MSG(memcmp(&got, &first[n][m], sizeof got) == 0,
                              "%s row %d x %d: not bit-identical to the scalar level",
                              inf_simd_level_name(levels[li]), m, n);
                else
                    first[n][m] = got;
            }
        }
        inf_context_free(ctx);
        ran++;
    }
    inf_simd_force(inf_simd_detect());
    CHECK(ran >= 2);
}

/* Q8_0 activation blocks holding NaN or Inf (packed as 16-bit codes at AVX2, as bytes
 * elsewhere): their rows of the product are NaN everywhere, the other rows finite and bit for bit
 * the scalar level's, at every level and thread count. */
TEST(test_mul_mat_q8_0_nonfinite_activation_blocks_give_nan_rows_at_every_level)
{
    enum { K = 3 * MM_BLOCK, M = 21, N = 5 };
    test_rng rng = {91};
    float xrows[N][K], first[N][M];
    for (int n = 0; n < N; n++)
        for (int e = 0; e < K; e++)
            xrows[n][e] = rng_uniform(&rng, -3.0f, 3.0f);
    xrows[1][MM_BLOCK + 5] = NAN;
    xrows[3][2 * MM_BLOCK + 31] = INFINITY;
    xrows[4][0] = -INFINITY;
    const bool bad[N] = {false, true, false, true, true};
    int ran = 0;
    for (size_t li = 0; li < sizeof levels / sizeof levels[0]; li++) {
        if (inf_simd_force(levels[li]) != levels[li])
            continue;
        for (int threads = 1; threads <= 2; threads++) {
            inf_context *ctx = data_context(4);
            test_rng wrng = {5};
            inf_tensor *w = inf_tensor_new_2d(ctx, GGTK_TENSOR_Q8_0, K, M);
            inf_tensor *x = inf_tensor_new_2d(ctx, GGTK_TENSOR_F32, K, N);
            fill_blocks(w, &wrng);
            memcpy(x->data, xrows, sizeof xrows);
            inf_tensor *out = inf_mul_mat(ctx, w, x);
            CHECK(out && compute_graph(ctx, out, threads) == GGTK_OK);
            for (int n = 0; out && n < N; n++) {
                for (int m = 0; m < M; m++) {
                    const float got = ((const float *)out->data)[n * M + m];
                    CHECK_MSG(bad[n] ? isnan(got) : isfinite(got), "%s, %d threads, row %d x %d: %g",
                              inf_simd_level_name(levels[li]), threads, m, n, got);
                    if (ran && !bad[n])
                        CHECK_MSG(memcmp(&got, &first[n][m], sizeof got) == 0,
                                  "%s, %d threads, row %d x %d: not bit-identical to the scalar level",
                                  inf_simd_level_name(levels[li]), threads, m, n);
                    else if (!ran)
                        first[n][m] = got;
                }
            }
            inf_context_free(ctx);
            ran++;
        }
    }
    inf_simd_force(inf_simd_detect());
    CHECK(ran >= 4);
}

TEST(test_mul_mat_dequantizing_path_covers_every_other_block_type)
{
    int checked = 0;
    for (int t = 0; t < GGTK_TENSOR_TYPE_COUNT; t++) {
        const ggtk_tensor_type_info *info = ggtk_tensor_type_info_get((ggtk_tensor_type)t);
        if (!info || !info->quantized || t == GGTK_TENSOR_Q8_1 || t == GGTK_TENSOR_Q8_K ||
            mm_weight_format_get((ggtk_tensor_type)t) || !inf_type_can_dequantize((ggtk_tensor_type)t))
            continue;
        check_type((ggtk_tensor_type)t);
        checked++;
    }
    if (!checked)
        SKIP("no dequantize-only block type in this build");
}

/* Each format's codes, scales and minimums give the dequantizer's floats bit for bit: the
 * integer path multiplies exactly the weights the dequantizer defines. */
TEST(test_mul_mat_formats_decode_as_the_dequantizers)
{
    test_rng rng = {5};
    for (int t = 0; t < GGTK_TENSOR_TYPE_COUNT; t++) {
        const mm_weight_format *f = mm_weight_format_get((ggtk_tensor_type)t);
        if (!f)
            continue;
        inf_context *ctx = data_context(1);
        inf_tensor *w = inf_tensor_new_1d(ctx, f->type, 1024);
        fill_blocks(w, &rng);
        float want[1024];
        CHECK(inf_dequantize_row(f->type, w->data, want, 1024));
        for (int64_t b = 0; b < 1024 / MM_BLOCK; b++) {
            uint8_t u[MM_BLOCK];
            float d[2], m[2];
            f->codes(w->data, b, u);
            f->scales(w->data, b, d, m);
            for (int e = 0; e < MM_BLOCK; e++) {
                const int sub = e / (MM_BLOCK / f->subs);
                CHECK_MSG(u[e] <= f->max_code, "%s: code %d above %d", ggtk_tensor_type_info_get(f->type)->name,
                          u[e], f->max_code);
                const float v = f->affine ? d[sub] * (float)u[e] + m[sub]
                                          : d[sub] * (float)(u[e] - f->offset);
                CHECK_MSG(memcmp(&v, &want[b * MM_BLOCK + e], sizeof v) == 0, "%s element %lld: %g vs %g",
                          ggtk_tensor_type_info_get(f->type)->name, (long long)(b * MM_BLOCK + e), v,
                          want[b * MM_BLOCK + e]);
            }
        }
        inf_context_free(ctx);
    }
}

/* K-type weights meet Q8_K activations: codes in [-127, 127] (AVX2's 16-bit pair sums rely on
 * it) within half a step of the super-block's scale d, for super-blocks of magnitudes 2^-130 to
 * 2^100; and one NaN activation makes its output row NaN for every K type. */
TEST(test_mul_mat_k_activations_round_to_the_super_block_scale_and_carry_nan)
{
    test_rng rng = {8};
    const mm_weight_format *f = mm_weight_format_get(GGTK_TENSOR_Q4_K);
    CHECK(f && f->act == MM_ACT_Q8_K);
    float x[QUANT_KBLOCK], d[QUANT_KBLOCK / MM_BLOCK], s[QUANT_KBLOCK / MM_BLOCK];
    int8_t q[QUANT_KBLOCK];
    for (int r = 0; r < 200; r++) {
        const float scale = ldexpf(1.0f, (int)rng_int(&rng, -130, 100));
        for (int e = 0; e < QUANT_KBLOCK; e++)
            x[e] = rng_uniform(&rng, -1, 1) * scale;
        quantize_activations(f, x, QUANT_KBLOCK, q, d, s);
        for (int e = 0; e < QUANT_KBLOCK; e++) {
            const double step = fabs((double)d[e / MM_BLOCK]);
            CHECK(q[e] >= -127 && q[e] <= 127 && d[e / MM_BLOCK] == d[0]);
            /* Half a step, widened by the roundings of x / d and of d = 1 / (127 / max) (each at
             * most 127 u of a step); super-blocks below 2^-100 may have no codes. */
            CHECK_MSG(fabs((double)x[e] - (double)d[0] * q[e]) <= 0.5 * step * (1 + 0x1p-14) + 0x1p-100,
                      "scale %g element %d: %g vs %g * %d", scale, e, x[e], d[0], q[e]);
        }
    }
    static const ggtk_tensor_type types[] = {GGTK_TENSOR_Q2_K, GGTK_TENSOR_Q3_K, GGTK_TENSOR_Q4_K,
                                             GGTK_TENSOR_Q5_K, GGTK_TENSOR_Q6_K};
    for (size_t t = 0; t < sizeof types / sizeof types[0]; t++) {
        inf_context *ctx = data_context(4);
        inf_tensor *w = inf_tensor_new_2d(ctx, types[t], 512, 8);
        inf_tensor *xt = inf_tensor_new_2d(ctx, GGTK_TENSOR_F32, 512, 2);
        fill_blocks(w, &rng);
        tensor_fill(xt, &rng, -1, 1);
        ((float *)xt->data)[512 + 300] = NAN; /* row 1, second super-block */
        inf_tensor *out = inf_mul_mat(ctx, w, xt);
        CHECK(compute_graph(ctx, out, 1) == GGTK_OK);
        for (int m = 0; m < 8; m++) {
            CHECK_MSG(!isnan(tensor_get(out, m, 0, 0, 0)), "%s row 0", ggtk_tensor_type_info_get(types[t])->name);
            CHECK_MSG(isnan(tensor_get(out, m, 1, 0, 0)), "%s row 1", ggtk_tensor_type_info_get(types[t])->name);
        }
        inf_context_free(ctx);
    }
}

/* Each level's Q8_K activation quantizer writes inf_quantize_row's bytes (ggml's), on super-blocks
 * of magnitudes 2^-150 to 2^120, with ties of the largest magnitude in either sign, zeros (+0
 * and -0), denormals, and NaN or +-Inf. */
TEST(test_mul_mat_q8_k_activation_quantizer_of_every_level_writes_inf_quantize_row_bytes)
{
    enum { SB = 64, N = SB * QUANT_KBLOCK };
    test_rng rng = {13};
    float *x = malloc(N * sizeof *x);
    block_q8_K *want = malloc(SB * sizeof *want), *got = malloc(SB * sizeof *got);
    for (int sb = 0; sb < SB; sb++) {
        float *xs = x + sb * QUANT_KBLOCK;
        const float scale = ldexpf(1.0f, (int)rng_int(&rng, -150, 120));
        for (int e = 0; e < QUANT_KBLOCK; e++)
            xs[e] = rng_uniform(&rng, -1, 1) * scale;
        switch (sb % 8) {
        case 1: /* the largest magnitude twice, negative first */
            xs[200] = 2 * scale;
            xs[40] = -2 * scale;
            break;
        case 2:
            for (int e = 0; e < QUANT_KBLOCK; e++)
                xs[e] = e % 3 ? 0.0f : -0.0f;
            break;
        case 3:
            xs[(int)rng_int(&rng, 0, QUANT_KBLOCK - 1)] = sb % 16 < 8 ? NAN : -INFINITY;
            break;
        case 4: /* magnitudes around the overflow of -127 / max */
            for (int e = 0; e < QUANT_KBLOCK; e++)
                xs[e] = rng_uniform(&rng, -1, 1) * ldexpf(1.0f, (int)rng_int(&rng, -124, -118));
            break;
        default:
            break;
        }
    }
    CHECK(inf_quantize_row(GGTK_TENSOR_Q8_K, x, want, N));
    int ran = 0;
    for (size_t li = 0; li < sizeof levels / sizeof levels[0]; li++) {
        if (inf_simd_force(levels[li]) != levels[li])
            continue;
        memset(got, 0xA5, SB * sizeof *got);
        inf_quant_kernels_get(GGTK_TENSOR_Q8_K)->from_float(x, got, N);
        for (int sb = 0; sb < SB; sb++)
            CHECK_MSG(memcmp(&want[sb], &got[sb], sizeof *got) == 0, "%s super-block %d differs",
                      inf_simd_level_name(levels[li]), sb);
        ran++;
    }
    inf_simd_force(inf_simd_detect());
    CHECK(ran >= 1);
    free(x);
    free(want);
    free(got);
}

TEST(test_get_rows_of_every_dequantizable_block_type_equals_the_dequantizer)
{
    test_rng rng = {21};
    int checked = 0;
    for (int t = 0; t < GGTK_TENSOR_TYPE_COUNT; t++) {
        const ggtk_tensor_type_info *info = ggtk_tensor_type_info_get((ggtk_tensor_type)t);
        if (!info || !info->quantized || !inf_type_can_dequantize((ggtk_tensor_type)t))
            continue;
        const int64_t K = 512;
        inf_context *ctx = data_context(4);
        inf_tensor *table = inf_tensor_new_2d(ctx, (ggtk_tensor_type)t, K, 9);
        fill_blocks(table, &rng);
        inf_tensor *ids = inf_tensor_new_1d(ctx, GGTK_TENSOR_I32, 4);
        const int pick[4] = {8, 0, 3, 8};
        for (int i = 0; i < 4; i++)
            tensor_set(ids, i, 0, 0, 0, (float)pick[i]);
        inf_tensor *out = inf_get_rows(ctx, table, ids);
        CHECK_MSG(out && compute_graph(ctx, out, 2) == GGTK_OK, "%s: get_rows refused", info->name);
        float want[512];
        for (int i = 0; i < 4; i++) {
            inf_dequantize_row((ggtk_tensor_type)t, (const char *)table->data + pick[i] * table->nb[1], want, K);
            CHECK_MSG(memcmp(want, (const char *)out->data + i * out->nb[1], sizeof want) == 0,
                      "%s row %d differs from the dequantizer", info->name, pick[i]);
        }
        inf_context_free(ctx);
        checked++;
    }
    CHECK(checked >= 10);
}

/* The first 40 rows of the first matrix of each type in the real Gemma 3 Q4_K_M file (Q4_K,
 * Q6_K, Q5_0, Q8_0 ...), with 7 activation rows, at every level. */
TEST(test_mul_mat_multiplies_every_tensor_type_of_a_real_k_quant_file)
{
    ggtk_file *file = ggtk_open("models/gemma-3-270m-q4_k_m.gguf", GGTK_OPEN_MMAP, NULL);
    if (!file)
        SKIP("models/gemma-3-270m-q4_k_m.gguf is missing (make models)");
    bool seen[GGTK_TENSOR_TYPE_COUNT] = {false};
    int checked = 0;
    for (int64_t i = 0; i < ggtk_tensor_count(file); i++) {
        const ggtk_tensor_info *t = ggtk_tensor(file, i);
        if (t->n_dims != 2 || seen[t->type] || !ggtk_tensor_type_info_get(t->type)->quantized)
            continue;
        seen[t->type] = true;
        const mm_case c = {(int64_t)t->ne[0], t->ne[1] < 40 ? (int64_t)t->ne[1] : 40, 7, 1, 1, 2};
        check_cases(t->type, &c, 1, t->data);
        checked++;
    }
    ggtk_close(file);
    CHECK(checked >= 3);
}
