/* matmul_check.c - the NEON matrix-product kernels against the scalar ones under qemu (part of
 * neon_check). The CPU backend's driver needs the whole engine, so this file drives the kernels
 * itself the way op_mul_mat.c does: activations quantized to the format the weight type meets
 * and packed in groups, weight panels packed a reduction chunk at a time, later chunks added
 * (codes of one byte: neither level widens them, see mm_kernels.wide_q8_0).
 * The integer path must give the same floats bit for bit at both levels; the float path (fused
 * at NEON, not in the scalar reference) must stay within a rounding bound. */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <ggtk/inf_quant.h>
#include <ggtk/inf_simd.h>
#include "engine/backend/cpu/matmul.h"
#include "engine/quant_kernels/quant_internal.h"
#include "engine/quant_kernels/quant_kblocks.h"
#include "matmul_check.h"

static uint32_t rng_state = 0x2545F491u;

static uint32_t rng_next(void)
{
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 17;
    rng_state ^= rng_state << 5;
    return rng_state;
}

/* Random block bytes (every code pattern), each block redrawn until it dequantizes to finite
 * values below 100 (random fp16 scales are often huge or NaN). */
static void fill_weights(ggtk_tensor_type type, uint8_t *w, int64_t blocks)
{
    const ggtk_tensor_type_info *info = ggtk_tensor_type_info_get(type);
    float x[QUANT_KBLOCK];
    for (int64_t b = 0; b < blocks; b++) {
        uint8_t *blk = w + (size_t)b * info->block_bytes;
        for (int ok = 0; !ok;) {
            for (uint32_t i = 0; i < info->block_bytes; i++)
                blk[i] = (uint8_t)(rng_next() >> 24);
            inf_dequantize_row(type, blk, x, info->block_size);
            ok = 1;
            for (uint32_t i = 0; i < info->block_size; i++)
                ok &= fabsf(x[i]) < 100.0f;
        }
    }
}

/* One activation block's codes, scale and per-sub-block words into slot j of a packed group
 * block of g rows (matmul.h's layout; op_mul_mat.c's put_act_block). */
static void put_block(const mm_weight_format *f, int g, const int8_t *qs, float d, float q81_s,
                      uint8_t *blk, int j)
{
    for (int grp = 0; grp < MM_BLOCK / 4; grp++)
        memcpy(blk + ((size_t)grp * g + j) * 4, qs + 4 * grp, 4);
    float *dslot = (float *)(blk + (size_t)g * MM_BLOCK);
    dslot[j] = d;
    char *words = (char *)(dslot + g);
    const int size = MM_BLOCK / f->subs;
    for (int sub = 0; sub < f->subs; sub++) {
        int32_t sum = 0;
        for (int e = 0; e < size; e++)
            sum += qs[sub * size + e];
        const float s = f->act == MM_ACT_Q8_1 ? q81_s : d * (float)sum;
        const int32_t start = -f->offset * sum;
        memcpy(words + 4 * ((size_t)sub * g + j), f->affine ? (const void *)&s : (const void *)&start, 4);
    }
}

/* Quantize activation row x (K elements) as format f wants it, into slot j of a packed group. */
static void pack_act_row(const mm_weight_format *f, const float *x, int64_t K, int g, uint8_t *group,
                         int j)
{
    const int64_t nb = K / MM_BLOCK;
    const size_t bytes = mm_act_block_bytes(g, f->subs, 1);
    void *q = malloc((size_t)nb * sizeof(block_q8_1) + sizeof(block_q8_K) * (size_t)(K / QUANT_KBLOCK + 1));
    if (f->act == MM_ACT_Q8_K) {
        inf_quantize_row(GGTK_TENSOR_Q8_K, x, q, K);
        for (int64_t b = 0; b < nb; b++) {
            const block_q8_K *sb = (const block_q8_K *)q + b / (QUANT_KBLOCK / MM_BLOCK);
            put_block(f, g, sb->qs + b % (QUANT_KBLOCK / MM_BLOCK) * MM_BLOCK, sb->d, 0.0f,
                      group + (size_t)b * bytes, j);
        }
    } else if (f->act == MM_ACT_Q8_1) {
        inf_quantize_row(GGTK_TENSOR_Q8_1, x, q, K);
        for (int64_t b = 0; b < nb; b++) {
            const block_q8_1 *blk = (const block_q8_1 *)q + b;
            put_block(f, g, blk->qs, quant_fp16_to_fp32(blk->d), quant_fp16_to_fp32(blk->s),
                      group + (size_t)b * bytes, j);
        }
    } else {
        inf_quantize_row(GGTK_TENSOR_Q8_0, x, q, K);
        for (int64_t b = 0; b < nb; b++) {
            const block_q8_0 *blk = (const block_q8_0 *)q + b;
            put_block(f, g, blk->qs, quant_fp16_to_fp32(blk->d), 0.0f, group + (size_t)b * bytes, j);
        }
    }
    free(q);
}

/* dst[n * M + m] = row m of W (M rows of `row_bytes`) times row n of X (N x K) with kernels k,
 * quantized path. */
static void product_q(const mm_kernels *k, const mm_weight_format *f, const uint8_t *w,
                      size_t row_bytes, int64_t M, const float *x, int64_t N, int64_t K, float *dst)
{
    const int P = k->panel_rows, G = k->q_group;
    const int64_t nb = K / MM_BLOCK, groups = (N + G - 1) / G;
    const int64_t chunks = (nb + MM_Q_CHUNK_BLOCKS - 1) / MM_Q_CHUNK_BLOCKS;
    const int64_t chunk = (nb + chunks - 1) / chunks;
    const size_t block_bytes = mm_act_block_bytes(G, f->subs, 1), group_bytes = (size_t)nb * block_bytes;
    uint8_t *act = calloc((size_t)groups, group_bytes);
    for (int64_t n = 0; n < groups * G; n++) {
        static const float zeros[4096];
        pack_act_row(f, n < N ? x + n * K : zeros, K, G, act + (size_t)(n / G) * group_bytes, (int)(n % G));
    }
    uint8_t *qs = malloc((size_t)chunk * P * MM_BLOCK);
    float *d = malloc((size_t)chunk * 2 * P * sizeof *d), *m = malloc((size_t)chunk * 2 * P * sizeof *m);
    for (int64_t m0 = 0; m0 < M; m0 += P) {
        const int rows = (int)(M - m0 < P ? M - m0 : P);
        for (int64_t c0 = 0; c0 < nb; c0 += chunk) {
            const int64_t len = nb - c0 < chunk ? nb - c0 : chunk;
            k->pack_q(f, (const char *)w + (size_t)m0 * row_bytes, row_bytes, rows, c0, len, P, qs, d, m);
            for (int64_t gi = 0; gi < groups; gi++) {
                const int nr = (int)(N - gi * G < G ? N - gi * G : G);
                k->gemm_q(f, qs, d, m, act + (size_t)gi * group_bytes + (size_t)c0 * block_bytes, len,
                          nr, dst + gi * G * M + m0, (size_t)M * sizeof(float), rows,
                          c0 > 0 ? MM_ADD : MM_STORE);
            }
        }
    }
    free(act);
    free(qs);
    free(d);
    free(m);
}

/* The same for F32 weights on the float path (one chunk: K <= MM_F_CHUNK here). */
static void product_f(const mm_kernels *k, const float *w, int64_t M, const float *x, int64_t N,
                      int64_t K, float *dst)
{
    const int P = k->panel_rows, G = k->f_group;
    const int64_t groups = (N + G - 1) / G;
    float *panel = malloc((size_t)K * P * sizeof *panel), *group = malloc((size_t)K * G * sizeof *group);
    for (int64_t m0 = 0; m0 < M; m0 += P) {
        const int rows = (int)(M - m0 < P ? M - m0 : P);
        k->pack_f(GGTK_TENSOR_F32, (const char *)(w + m0 * K), sizeof(float), (size_t)K * sizeof(float),
                  rows, K, P, panel);
        for (int64_t gi = 0; gi < groups; gi++) {
            const float *rows_x[64];
            const int nr = (int)(N - gi * G < G ? N - gi * G : G);
            for (int j = 0; j < G; j++)
                rows_x[j] = j < nr ? x + (gi * G + j) * K : NULL;
            k->pack_act_f(rows_x, G, K, group);
            k->gemm_f(panel, group, K, nr, dst + gi * G * M + m0, (size_t)M * sizeof(float), rows, MM_STORE);
        }
    }
    free(panel);
    free(group);
}

static void fill_floats(float *x, int64_t n)
{
    for (int64_t i = 0; i < n; i++)
        x[i] = (float)(rng_next() >> 8) * 0x1p-23f - 1.0f;
}

/* Every integer-path type on a few shapes (K of one and of several reduction chunks, M and N not
 * multiples of the tiles, a single activation row): NEON's floats equal scalar's. */
static int check_quantized(void)
{
    static const int64_t shapes[][3] = {{256, 13, 1}, {768, 37, 7}, {1792, 21, 9}};
    int bad = 0;
    for (int t = 0; t < GGTK_TENSOR_TYPE_COUNT; t++) {
        const mm_weight_format *f = mm_weight_format_get((ggtk_tensor_type)t);
        if (!f)
            continue;
        const ggtk_tensor_type_info *info = ggtk_tensor_type_info_get(f->type);
        int64_t differ = 0, total = 0;
        for (size_t si = 0; si < sizeof shapes / sizeof shapes[0]; si++) {
            const int64_t K = shapes[si][0], M = shapes[si][1], N = shapes[si][2];
            const size_t row_bytes = (size_t)(K / info->block_size) * info->block_bytes;
            uint8_t *w = malloc(row_bytes * (size_t)M);
            float *x = malloc((size_t)(N * K) * sizeof *x);
            float *ya = malloc((size_t)(N * M) * sizeof *ya), *yb = malloc((size_t)(N * M) * sizeof *yb);
            fill_weights(f->type, w, (int64_t)M * K / info->block_size);
            fill_floats(x, N * K);
            product_q(&mm_kernels_scalar, f, w, row_bytes, M, x, N, K, ya);
            product_q(&mm_kernels_neon, f, w, row_bytes, M, x, N, K, yb);
            for (int64_t i = 0; i < N * M; i++) {
                if (memcmp(&ya[i], &yb[i], sizeof ya[i]) != 0 && differ++ == 0)
                    fprintf(stderr, "%s K=%" PRId64 ": dst[%" PRId64 "] = %.9g, scalar %.9g\n",
                            info->name, K, i, yb[i], ya[i]);
            }
            total += N * M;
            free(w);
            free(x);
            free(ya);
            free(yb);
        }
        printf("%-5s matmul: %" PRId64 " products, %" PRId64 " differ from scalar\n", info->name,
               total, differ);
        bad |= differ != 0;
    }
    return bad;
}

/* F32 weights: NEON gives scalar's bits (both fuse each multiply-add, in k order), and both are
 * within 2 K roundings of sum |w x| of the exact product. */
static int check_float(void)
{
    const int64_t K = 384, M = 19, N = 11;
    float *w = malloc((size_t)(M * K) * sizeof *w), *x = malloc((size_t)(N * K) * sizeof *x);
    float *ya = malloc((size_t)(N * M) * sizeof *ya), *yb = malloc((size_t)(N * M) * sizeof *yb);
    fill_floats(w, M * K);
    fill_floats(x, N * K);
    product_f(&mm_kernels_scalar, w, M, x, N, K, ya);
    product_f(&mm_kernels_neon, w, M, x, N, K, yb);
    int64_t outside = 0, differ = 0;
    for (int64_t i = 0; i < N * M; i++)
        differ += memcmp(&ya[i], &yb[i], sizeof ya[i]) != 0;
    for (int64_t n = 0; n < N; n++) {
        for (int64_t i = 0; i < M; i++) {
            double exact = 0, mag = 0;
            for (int64_t k = 0; k < K; k++) {
                exact += (double)w[i * K + k] * x[n * K + k];
                mag += fabs((double)w[i * K + k] * x[n * K + k]);
            }
            const double bound = 0x1p-24 * mag * 2.0 * (double)K;
            outside += fabs(yb[n * M + i] - exact) > bound || fabs(ya[n * M + i] - exact) > bound;
        }
    }
    printf("f32   matmul: %" PRId64 " products, %" PRId64 " differ from scalar, %" PRId64
           " outside the rounding bound\n", N * M, differ, outside);
    free(w);
    free(x);
    free(ya);
    free(yb);
    return outside != 0 || differ != 0;
}

int matmul_check(void)
{
    int bad = check_quantized() | check_float();
#if defined(__ARM_FEATURE_DOTPROD)
    printf("matmul kernels: NEON with the dot-product extension (sdot)\n");
#else
    printf("matmul kernels: NEON without the dot-product extension (smull/sadalp)\n");
#endif
    if (mm_kernels_get() != &mm_kernels_neon) {
        fprintf(stderr, "the matmul table does not pick the NEON kernels at the NEON level\n");
        bad = 1;
    }
    return bad;
}
