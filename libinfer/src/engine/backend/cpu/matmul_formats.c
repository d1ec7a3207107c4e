/* matmul_formats.c - how each quantized weight type maps onto the integer path of the matrix
 * product (matmul.h): one table row per type, with the functions that decode a block of 32
 * columns into unsigned codes and into per-sub-block float scales and minimums. Each d and m is
 * computed exactly as the type's dequantizer computes it, so d * u + m (or d * (u - offset))
 * is the dequantized weight bit for bit. */
#include "matmul.h"
#include "engine/quant_kernels/quant_internal.h"
#include "engine/quant_kernels/quant_kblocks.h"

/* Blocks of 32 per K-type super-block. */
#define SUPER (QUANT_KBLOCK / MM_BLOCK)

static float half(inf_fp16 h)
{
    return quant_fp16_to_fp32(h);
}

static void nibbles(const uint8_t *qs, uint8_t u[MM_BLOCK])
{
    for (int e = 0; e < MM_BLOCK / 2; e++) {
        u[e] = qs[e] & 0x0F;
        u[e + MM_BLOCK / 2] = qs[e] >> 4;
    }
}

/* Q5_0/Q5_1: element e's low nibble as Q4's, its fifth bit bit e of qh. */
static void q5_codes(const uint8_t *qs, const uint8_t qh_bytes[4], uint8_t u[MM_BLOCK])
{
    uint32_t qh;
    memcpy(&qh, qh_bytes, sizeof qh);
    nibbles(qs, u);
    for (int e = 0; e < MM_BLOCK; e++)
        u[e] = (uint8_t)(u[e] | (((qh >> e) & 1) << 4));
}

static void codes_q8_0(const char *row, int64_t b, uint8_t u[MM_BLOCK])
{
    const block_q8_0 *blk = (const block_q8_0 *)row + b;
    for (int e = 0; e < MM_BLOCK; e++)
        u[e] = (uint8_t)blk->qs[e] ^ 0x80;
}

static void codes_q4_0(const char *row, int64_t b, uint8_t u[MM_BLOCK])
{
    nibbles(((const block_q4_0 *)row + b)->qs, u);
}

static void codes_q4_1(const char *row, int64_t b, uint8_t u[MM_BLOCK])
{
    nibbles(((const block_q4_1 *)row + b)->qs, u);
}

static void codes_q5_0(const char *row, int64_t b, uint8_t u[MM_BLOCK])
{
    const block_q5_0 *blk = (const block_q5_0 *)row + b;
    q5_codes(blk->qs, blk->qh, u);
}

static void codes_q5_1(const char *row, int64_t b, uint8_t u[MM_BLOCK])
{
    const block_q5_1 *blk = (const block_q5_1 *)row + b;
    q5_codes(blk->qs, blk->qh, u);
}

/* The legacy types' scale is their block's first fp16 field, Q4_1/Q5_1's minimum the second. */
static void scales_d(const char *row, int64_t b, size_t bytes, float *d, float *m)
{
    inf_fp16 h;
    memcpy(&h, row + (size_t)b * bytes, sizeof h);
    d[0] = half(h);
    m[0] = 0.0f;
}

static void scales_dm(const char *row, int64_t b, size_t bytes, float *d, float *m)
{
    inf_fp16 h[2];
    memcpy(h, row + (size_t)b * bytes, sizeof h);
    d[0] = half(h[0]);
    m[0] = half(h[1]);
}

static void scales_q8_0(const char *row, int64_t b, float *d, float *m)
{
    scales_d(row, b, sizeof(block_q8_0), d, m);
}

static void scales_q4_0(const char *row, int64_t b, float *d, float *m)
{
    scales_d(row, b, sizeof(block_q4_0), d, m);
}

static void scales_q5_0(const char *row, int64_t b, float *d, float *m)
{
    scales_d(row, b, sizeof(block_q5_0), d, m);
}

static void scales_q4_1(const char *row, int64_t b, float *d, float *m)
{
    scales_dm(row, b, sizeof(block_q4_1), d, m);
}

static void scales_q5_1(const char *row, int64_t b, float *d, float *m)
{
    scales_dm(row, b, sizeof(block_q5_1), d, m);
}

/* Q4_K/Q5_K: block j of a super-block is sub-block j, x = (d * sc) * q - (dmin * mn); the
 * codes are the low (even j) or high nibbles of qs[32 (j / 2) + e], Q5_K's fifth bit is bit j
 * of qh[e]. */
static void codes_q4_k(const char *row, int64_t b, uint8_t u[MM_BLOCK])
{
    const block_q4_K *blk = (const block_q4_K *)row + b / SUPER;
    const int j = (int)(b % SUPER), shift = 4 * (j % 2);
    const uint8_t *qs = blk->qs + 32 * (j / 2);
    for (int e = 0; e < MM_BLOCK; e++)
        u[e] = (qs[e] >> shift) & 0x0F;
}

static void codes_q5_k(const char *row, int64_t b, uint8_t u[MM_BLOCK])
{
    const block_q5_K *blk = (const block_q5_K *)row + b / SUPER;
    const int j = (int)(b % SUPER), shift = 4 * (j % 2);
    const uint8_t *qs = blk->qs + 32 * (j / 2);
    for (int e = 0; e < MM_BLOCK; e++)
        u[e] = (uint8_t)(((qs[e] >> shift) & 0x0F) | (((blk->qh[e] >> j) & 1) << 4));
}

static void kscale_min(const uint8_t *scales, inf_fp16 d, inf_fp16 dmin, int j, float *dl, float *ml)
{
    uint8_t sc, mn;
    quant_kscale_min(scales, j, &sc, &mn);
    *dl = half(d) * (float)sc;
    *ml = -(half(dmin) * (float)mn);
}

static void scales_q4_k(const char *row, int64_t b, float *d, float *m)
{
    const block_q4_K *blk = (const block_q4_K *)row + b / SUPER;
    kscale_min(blk->scales, blk->d, blk->dmin, (int)(b % SUPER), d, m);
}

static void scales_q5_k(const char *row, int64_t b, float *d, float *m)
{
    const block_q5_K *blk = (const block_q5_K *)row + b / SUPER;
    kscale_min(blk->scales, blk->d, blk->dmin, (int)(b % SUPER), d, m);
}

/* Q6_K: in each half h of 128 elements, block s (0..3) takes the low (s < 2) or high nibbles of
 * ql[64 h + 32 (s % 2) + e] and bits 2s, 2s+1 of qh[32 h + e]; its sub-blocks' scales are
 * 8h + 2s and 8h + 2s + 1. */
static void codes_q6_k(const char *row, int64_t b, uint8_t u[MM_BLOCK])
{
    const block_q6_K *blk = (const block_q6_K *)row + b / SUPER;
    const int j = (int)(b % SUPER), h = j / 4, s = j % 4, shift = 4 * (s / 2);
    const uint8_t *ql = blk->ql + 64 * h + 32 * (s % 2), *qh = blk->qh + 32 * h;
    for (int e = 0; e < MM_BLOCK; e++)
        u[e] = (uint8_t)(((ql[e] >> shift) & 0x0F) | (((qh[e] >> (2 * s)) & 3) << 4));
}

static void scales_q6_k(const char *row, int64_t b, float *d, float *m)
{
    const block_q6_K *blk = (const block_q6_K *)row + b / SUPER;
    const float dd = half(blk->d);
    for (int sub = 0; sub < 2; sub++) {
        d[sub] = dd * (float)blk->scales[2 * (b % SUPER) + sub];
        m[sub] = 0.0f;
    }
}

/* The 2-bit codes of Q2_K/Q3_K block j: bits 2 (j % 4) of qs[32 (j / 4) + e]. Q3_K's third bit
 * is bit j of hmask[e] (q - 4 * !hbit = u - 4); sub-blocks 2j and 2j + 1. */
static void two_bit_codes(const uint8_t *qs, int j, uint8_t u[MM_BLOCK])
{
    const uint8_t *q = qs + 32 * (j / 4);
    for (int e = 0; e < MM_BLOCK; e++)
        u[e] = (q[e] >> (2 * (j % 4))) & 3;
}

static void codes_q3_k(const char *row, int64_t b, uint8_t u[MM_BLOCK])
{
    const block_q3_K *blk = (const block_q3_K *)row + b / SUPER;
    const int j = (int)(b % SUPER);
    two_bit_codes(blk->qs, j, u);
    for (int e = 0; e < MM_BLOCK; e++)
        u[e] = (uint8_t)(u[e] | (((blk->hmask[e] >> j) & 1) << 2));
}

/* Q3_K's 6-bit scale i: low 4 bits in the low (i < 8) or high nibble of scales[i % 8], high 2
 * bits in bits 2 (i / 4) of scales[8 + i % 4]; stored with an offset of 32. */
static int q3_k_scale(const uint8_t *scales, int i)
{
    const int low = (scales[i % 8] >> (4 * (i / 8))) & 0x0F;
    const int high = (scales[8 + i % 4] >> (2 * (i / 4))) & 3;
    return (low | (high << 4)) - 32;
}

static void scales_q3_k(const char *row, int64_t b, float *d, float *m)
{
    const block_q3_K *blk = (const block_q3_K *)row + b / SUPER;
    const float dd = half(blk->d);
    for (int sub = 0; sub < 2; sub++) {
        d[sub] = dd * (float)q3_k_scale(blk->scales, 2 * (int)(b % SUPER) + sub);
        m[sub] = 0.0f;
    }
}

static void codes_q2_k(const char *row, int64_t b, uint8_t u[MM_BLOCK])
{
    two_bit_codes(((const block_q2_K *)row + b / SUPER)->qs, (int)(b % SUPER), u);
}

static void scales_q2_k(const char *row, int64_t b, float *d, float *m)
{
    const block_q2_K *blk = (const block_q2_K *)row + b / SUPER;
    const float dd = half(blk->d), dmin = half(blk->dmin);
    for (int sub = 0; sub < 2; sub++) {
        const uint8_t sc = blk->scales[2 * (b % SUPER) + sub];
        d[sub] = dd * (float)(sc & 0x0F);
        m[sub] = -(dmin * (float)(sc >> 4));
    }
}

#define FORMAT(t, s, aff, off, max, a, name) \
    [GGTK_TENSOR_##t] = {GGTK_TENSOR_##t, s, aff, off, max, MM_ACT_##a, codes_##name, scales_##name}

static const mm_weight_format formats[GGTK_TENSOR_TYPE_COUNT] = {
    FORMAT(Q8_0, 1, false, 128, 255, Q8_0, q8_0),
    FORMAT(Q4_0, 1, false, 8, 15, Q8_0, q4_0),
    FORMAT(Q5_0, 1, false, 16, 31, Q8_0, q5_0),
    FORMAT(Q4_1, 1, true, 0, 15, Q8_1, q4_1),
    FORMAT(Q5_1, 1, true, 0, 31, Q8_1, q5_1),
    FORMAT(Q4_K, 1, true, 0, 15, Q8_K, q4_k),
    FORMAT(Q5_K, 1, true, 0, 31, Q8_K, q5_k),
    FORMAT(Q6_K, 2, false, 32, 63, Q8_K, q6_k),
    FORMAT(Q3_K, 2, false, 4, 7, Q8_K, q3_k),
    FORMAT(Q2_K, 2, true, 0, 3, Q8_K, q2_k),
};

const mm_weight_format *mm_weight_format_get(ggtk_tensor_type type)
{
    if ((unsigned)type >= GGTK_TENSOR_TYPE_COUNT || !formats[type].codes)
        return NULL;
    return &formats[type];
}
