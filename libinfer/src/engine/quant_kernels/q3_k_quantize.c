/* q3_k_quantize.c - Q3_K quantizers: 16 sub-blocks of 16 with symmetric 3-bit codes (low 2 bits
 * in qs, high bit in hmask) and signed 6-bit sub-block scales relative to the fp16 d. */
#include "kquant_quantize.h"

/* Store the 6-bit code l (0..63) of sub-block j: low nibbles in bytes 0..7 (sub-blocks 8..15
 * in the high halves), the top two bits in bytes 8..11. */
static void q3_k_put_scale(uint8_t *scales, int j, int l)
{
    if (j < 8)
        scales[j] = (uint8_t)(l & 0x0F);
    else
        scales[j - 8] |= (uint8_t)((l & 0x0F) << 4);
    scales[8 + j % 4] |= (uint8_t)((l >> 4) << (2 * (j / 4)));
}

/* The signed scale (-32..31) of sub-block j. */
static int q3_k_scale(const uint8_t *scales, int j)
{
    int low = j < 8 ? scales[j] & 0x0F : scales[j - 8] >> 4;
    return (low | (((scales[8 + j % 4] >> (2 * (j / 4))) & 3) << 4)) - 32;
}

/* Recompute the codes from the stored scales (a zero sub-block scale keeps the search's codes,
 * which are already offset by 4), then split off the high bits and pack. */
static void q3_k_requantize(const float *x, int8_t *L, block_q3_K *y)
{
    const float d_all = quant_fp16_to_fp32(y->d);
    for (int j = 0; j < QUANT_KBLOCK / 16; j++) {
        const float d = d_all * (float)q3_k_scale(y->scales, j);
        if (d == 0.0f)
            continue;
        for (int i = 0; i < 16; i++) {
            int l = kquant_nearest_int(x[16 * j + i] / d);
            L[16 * j + i] = (int8_t)((l < -4 ? -4 : l > 3 ? 3 : l) + 4);
        }
    }
    uint8_t codes[QUANT_KBLOCK];
    memset(y->hmask, 0, sizeof y->hmask);
    for (int j = 0; j < QUANT_KBLOCK; j++) {
        codes[j] = (uint8_t)L[j];
        if (L[j] > 3) {
            y->hmask[j % 32] |= (uint8_t)(1u << (j / 32));
            codes[j] = (uint8_t)(L[j] - 4);
        }
    }
    kquant_pack_2bit(codes, y->qs);
}

/* Sub-block scales by kquant_q3_search, then quantized to 6 bits against the scale of largest
 * magnitude (with its sign, so that one maps to -32). */
static void q3_k_reference(const float *x, void *block)
{
    block_q3_K *y = block;
    int8_t L[QUANT_KBLOCK];
    float scales[16];
    float max_scale = 0.0f, amax = 0.0f;
    for (int j = 0; j < 16; j++) {
        scales[j] = kquant_q3_search(16, 4, x + 16 * j, L + 16 * j);
        if (fabsf(scales[j]) > amax) {
            amax = fabsf(scales[j]);
            max_scale = scales[j];
        }
    }
    memset(y->scales, 0, sizeof y->scales);
    if (max_scale != 0.0f) {
        const float iscale = -32.0f / max_scale;
        for (int j = 0; j < 16; j++) {
            int8_t l = (int8_t)kquant_nearest_int(iscale * scales[j]);
            q3_k_put_scale(y->scales, j, (l < -32 ? -32 : l > 31 ? 31 : l) + 32);
        }
        y->d = quant_fp32_to_fp16(1 / iscale);
    } else {
        y->d = quant_fp32_to_fp16(0.0f);
    }
    q3_k_requantize(x, L, y);
}

/* Weights qw * sqrt(sigma^2 + x^2) with sigma^2 twice the mean square, a weighted symmetric
 * search per sub-block, and the 16 scales fitted by a search weighted with each sub-block's
 * total weight. */
static void q3_k_weighted(const float *x, const float *qw, float row_sigma2, void *block)
{
    (void)row_sigma2;
    block_q3_K *y = block;
    int8_t L[QUANT_KBLOCK], Ls[16];
    float scales[16], weight[16], sw[16];
    float sumx2 = 0.0f;
    for (int j = 0; j < QUANT_KBLOCK; j++)
        sumx2 += x[j] * x[j];
    const float sigma2 = 2 * sumx2 / (float)QUANT_KBLOCK;
    for (int j = 0; j < 16; j++) {
        float sumw = 0.0f;
        for (int i = 0; i < 16; i++) {
            weight[i] = qw[16 * j + i] * sqrtf(sigma2 + x[16 * j + i] * x[16 * j + i]);
            sumw += weight[i];
        }
        sw[j] = sumw;
        scales[j] = kquant_symmetric_search(16, 4, x + 16 * j, L + 16 * j, weight);
    }
    memset(y->scales, 0, sizeof y->scales);
    const float d_block = kquant_symmetric_search(16, 32, scales, Ls, sw);
    for (int j = 0; j < 16; j++)
        q3_k_put_scale(y->scales, j, Ls[j]);
    y->d = quant_fp32_to_fp16(d_block);
    q3_k_requantize(x, L, y);
}

static const search_quant_type q3_k = {
    .block_size = QUANT_KBLOCK,
    .block_bytes = sizeof(block_q3_K),
    .reference = q3_k_reference,
    .weighted = q3_k_weighted,
    .d_offset = offsetof(block_q3_K, d),
    .min_offset = -1,
};

void inf_q3_k_from_float_scalar(const float *src, void *dst, int64_t n)
{
    search_quantize_reference(&q3_k, src, dst, n);
}

int64_t inf_q3_k_from_float_imatrix(const float *src, void *dst, int64_t n, const float *imatrix)
{
    return search_quantize_weighted(&q3_k, src, dst, n, imatrix);
}
