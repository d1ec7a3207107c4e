/* matmul_formats.c - how each quantized weight type maps onto the integer path of the matrix
 * product (matmul.h): one table row per type, with the function that decodes a block of 32
 * columns into unsigned codes and per-sub-block float scales and minimums. Each d and m is
 * computed exactly as the type's dequantizer computes it, so d * u + m (or d * (u - offset))
 * is the dequantized weight bit for bit. */
#include "matmul.h"
#include "engine/quant_kernels/quant_internal.h"
#include "engine/quant_kernels/quant_kblocks.h"

/* Blocks of 32 per K-type super-block. */
#define SUPER (QUANT_KBLOCK / MM_BLOCK)

static void unpack_q8_0(const char *row, int64_t b, uint8_t u[MM_BLOCK], float *d, float *m)
{
    const block_q8_0 *blk = (const block_q8_0 *)row + b;
    for (int e = 0; e < MM_BLOCK; e++)
        u[e] = (uint8_t)blk->qs[e] ^ 0x80;
    d[0] = inf_fp16_to_fp32(blk->d);
    m[0] = 0.0f;
}

static void nibbles(const uint8_t *qs, uint8_t u[MM_BLOCK])
{
    for (int e = 0; e < MM_BLOCK / 2; e++) {
        u[e] = qs[e] & 0x0F;
        u[e + MM_BLOCK / 2] = qs[e] >> 4;
    }
}

static void unpack_q4_0(const char *row, int64_t b, uint8_t u[MM_BLOCK], float *d, float *m)
{
    const block_q4_0 *blk = (const block_q4_0 *)row + b;
    nibbles(blk->qs, u);
    d[0] = inf_fp16_to_fp32(blk->d);
    m[0] = 0.0f;
}

static void unpack_q4_1(const char *row, int64_t b, uint8_t u[MM_BLOCK], float *d, float *m)
{
    const block_q4_1 *blk = (const block_q4_1 *)row + b;
    nibbles(blk->qs, u);
    d[0] = inf_fp16_to_fp32(blk->d);
    m[0] = inf_fp16_to_fp32(blk->m);
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

static void unpack_q5_0(const char *row, int64_t b, uint8_t u[MM_BLOCK], float *d, float *m)
{
    const block_q5_0 *blk = (const block_q5_0 *)row + b;
    q5_codes(blk->qs, blk->qh, u);
    d[0] = inf_fp16_to_fp32(blk->d);
    m[0] = 0.0f;
}

static void unpack_q5_1(const char *row, int64_t b, uint8_t u[MM_BLOCK], float *d, float *m)
{
    const block_q5_1 *blk = (const block_q5_1 *)row + b;
    q5_codes(blk->qs, blk->qh, u);
    d[0] = inf_fp16_to_fp32(blk->d);
    m[0] = inf_fp16_to_fp32(blk->m);
}

/* Q4_K/Q5_K: block j of a super-block is sub-block j, x = (d * sc) * q - (dmin * mn). */
static void kscale_min(const uint8_t *scales, inf_fp16 d, inf_fp16 dmin, int j, float *dl, float *ml)
{
    uint8_t sc, mn;
    quant_kscale_min(scales, j, &sc, &mn);
    *dl = inf_fp16_to_fp32(d) * (float)sc;
    *ml = -(inf_fp16_to_fp32(dmin) * (float)mn);
}

static void unpack_q4_k(const char *row, int64_t b, uint8_t u[MM_BLOCK], float *d, float *m)
{
    const block_q4_K *blk = (const block_q4_K *)row + b / SUPER;
    const int j = (int)(b % SUPER);
    const uint8_t *qs = blk->qs + 32 * (j / 2);
    const int shift = 4 * (j % 2);
    for (int e = 0; e < MM_BLOCK; e++)
        u[e] = (qs[e] >> shift) & 0x0F;
    kscale_min(blk->scales, blk->d, blk->dmin, j, d, m);
}

static void unpack_q5_k(const char *row, int64_t b, uint8_t u[MM_BLOCK], float *d, float *m)
{
    const block_q5_K *blk = (const block_q5_K *)row + b / SUPER;
    const int j = (int)(b % SUPER);
    const uint8_t *qs = blk->qs + 32 * (j / 2);
    const int shift = 4 * (j % 2);
    for (int e = 0; e < MM_BLOCK; e++)
        u[e] = (uint8_t)(((qs[e] >> shift) & 0x0F) | (((blk->qh[e] >> j) & 1) << 4));
    kscale_min(blk->scales, blk->d, blk->dmin, j, d, m);
}

/* Q6_K: in each half of 128 elements, block s (0..3) takes the low (s < 2) or high nibbles of
 * ql[64 h + 32 (s % 2) + l] and bits 2s, 2s+1 of qh[32 h + l]; sub-block scales 8h + 2s + l/16. */
static void unpack_q6_k(const char *row, int64_t b, uint8_t u[MM_BLOCK], float *d, float *m)
{
    const block_q6_K *blk = (const block_q6_K *)row + b / SUPER;
    const int j = (int)(b % SUPER), h = j / 4, s = j % 4;
    const uint8_t *ql = blk->ql + 64 * h + 32 * (s % 2), *qh = blk->qh + 32 * h;
    const int shift = 4 * (s / 2);
    for (int e = 0; e < MM_BLOCK; e++)
        u[e] = (uint8_t)(((ql[e] >> shift) & 0x0F) | (((qh[e] >> (2 * s)) & 3) << 4));
    const float dd = inf_fp16_to_fp32(blk->d);
    for (int half = 0; half < 2; half++) {
        d[half] = dd * (float)blk->scales[8 * h + 2 * s + half];
        m[half] = 0.0f;
    }
}

/* The 2-bit codes of Q2_K/Q3_K block j: bits 2 (j % 4) of qs[32 (j / 4) + l]. */
static void two_bit_codes(const uint8_t *qs, int j, uint8_t u[MM_BLOCK])
{
    const uint8_t *q = qs + 32 * (j / 4);
    for (int e = 0; e < MM_BLOCK; e++)
        u[e] = (q[e] >> (2 * (j % 4))) & 3;
}

/* Q3_K's 6-bit scale i: low 4 bits in the low (i < 8) or high nibble of scales[i % 8], high 2
 * bits in bits 2 (i / 4) of scales[8 + i % 4]; stored with an offset of 32. */
static int q3_k_scale(const uint8_t *scales, int i)
{
    const int low = (scales[i % 8] >> (4 * (i / 8))) & 0x0F;
    const int high = (scales[8 + i % 4] >> (2 * (i / 4))) & 3;
    return (low | (high << 4)) - 32;
}

static void unpack_q3_k(const char *row, int64_t b, uint8_t u[MM_BLOCK], float *d, float *m)
{
    const block_q3_K *blk = (const block_q3_K *)row + b / SUPER;
    const int j = (int)(b % SUPER);
    two_bit_codes(blk->qs, j, u);
    for (int e = 0; e < MM_BLOCK; e++)
        u[e] = (uint8_t)(u[e] | (((blk->hmask[e] >> j) & 1) << 2)); /* q - 4 * !hbit = u - 4 */
    const float dd = inf_fp16_to_fp32(blk->d);
    for (int half = 0; half < 2; half++) {
        d[half] = dd * (float)q3_k_scale(blk->scales, 2 * j + half);
        m[half] = 0.0f;
    }
}

static void unpack_q2_k(const char *row, int64_t b, uint8_t u[MM_BLOCK], float *d, float *m)
{
    const block_q2_K *blk = (const block_q2_K *)row + b / SUPER;
    const int j = (int)(b % SUPER);
    two_bit_codes(blk->qs, j, u);
    const float dd = inf_fp16_to_fp32(blk->d), dmin = inf_fp16_to_fp32(blk->dmin);
    for (int half = 0; half < 2; half++) {
        const uint8_t sc = blk->scales[2 * j + half];
        d[half] = dd * (float)(sc & 0x0F);
        m[half] = -(dmin * (float)(sc >> 4));
    }
}

#define FORMAT(t, s, aff, off, max, a, fn) \
    [GGTK_TENSOR_##t] = {GGTK_TENSOR_##t, s, aff, off, max, MM_ACT_##a, fn}

static const mm_weight_format formats[GGTK_TENSOR_TYPE_COUNT] = {
    FORMAT(Q8_0, 1, false, 128, 255, Q8_0, unpack_q8_0),
    FORMAT(Q4_0, 1, false, 8, 15, Q8_0, unpack_q4_0),
    FORMAT(Q5_0, 1, false, 16, 31, Q8_0, unpack_q5_0),
    FORMAT(Q4_1, 1, true, 0, 15, Q8_1, unpack_q4_1),
    FORMAT(Q5_1, 1, true, 0, 31, Q8_1, unpack_q5_1),
    FORMAT(Q4_K, 1, true, 0, 15, Q8_F32, unpack_q4_k),
    FORMAT(Q5_K, 1, true, 0, 31, Q8_F32, unpack_q5_k),
    FORMAT(Q6_K, 2, false, 32, 63, Q8_F32, unpack_q6_k),
    FORMAT(Q3_K, 2, false, 4, 7, Q8_F32, unpack_q3_k),
    FORMAT(Q2_K, 2, true, 0, 3, Q8_F32, unpack_q2_k),
};

const mm_weight_format *mm_weight_format_get(ggtk_tensor_type type)
{
    if ((unsigned)type >= GGTK_TENSOR_TYPE_COUNT || !formats[type].unpack)
        return NULL;
    return &formats[type];
}
