/* q2_k_quantize.c - Q2_K quantizers: 16 sub-blocks of 16 with 2-bit codes, each sub-block its
 * own 4-bit scale and 4-bit minimum relative to the super-block's fp16 d and dmin. */
#include "kquant_quantize.h"

/* Recompute every code from the stored (rounded) scales and pack them; a sub-block whose scale
 * rounded to zero keeps the search's codes. */
static void q2_k_requantize(const float *x, uint8_t *L, block_q2_K *y)
{
    const float d_all = quant_fp16_to_fp32(y->d), dmin_all = quant_fp16_to_fp32(y->dmin);
    for (int j = 0; j < QUANT_KBLOCK / 16; j++) {
        const float d = d_all * (float)(y->scales[j] & 0x0F);
        if (d == 0.0f)
            continue;
        const float dm = dmin_all * (float)(y->scales[j] >> 4);
        for (int i = 0; i < 16; i++) {
            int l = kquant_nearest_int((x[16 * j + i] + dm) / d);
            L[16 * j + i] = (uint8_t)(l < 0 ? 0 : l > 3 ? 3 : l);
        }
    }
    kquant_pack_2bit(L, y->qs);
}

/* Sub-block fits weighted by |x| (absolute error), then the 16 scales and 16 minimums
 * quantized linearly to 4 bits against the largest of each. */
static void q2_k_reference(const float *x, void *block)
{
    block_q2_K *y = block;
    uint8_t L[QUANT_KBLOCK];
    float weights[16], mins[16], scales[16];
    float max_scale = 0.0f, max_min = 0.0f;
    for (int j = 0; j < 16; j++) {
        for (int i = 0; i < 16; i++)
            weights[i] = fabsf(x[16 * j + i]);
        scales[j] = kquant_min_search(16, 3, x + 16 * j, weights, L + 16 * j, &mins[j], -0.5f,
                                      0.1f, 15, true);
        if (scales[j] > max_scale)
            max_scale = scales[j];
        if (mins[j] > max_min)
            max_min = mins[j];
    }
    if (max_scale > 0) {
        const float iscale = 15.0f / max_scale;
        for (int j = 0; j < 16; j++)
            y->scales[j] = (uint8_t)kquant_nearest_int(iscale * scales[j]);
        y->d = quant_fp32_to_fp16(max_scale / 15.0f);
    } else {
        memset(y->scales, 0, sizeof y->scales);
        y->d = quant_fp32_to_fp16(0.0f);
    }
    if (max_min > 0) {
        const float iscale = 15.0f / max_min;
        for (int j = 0; j < 16; j++)
            y->scales[j] |= (uint8_t)((unsigned)kquant_nearest_int(iscale * mins[j]) << 4);
        y->dmin = quant_fp32_to_fp16(max_min / 15.0f);
    } else {
        y->dmin = quant_fp32_to_fp16(0.0f);
    }
    q2_k_requantize(x, L, y);
}

/* Weights qw * sqrt(sigma^2 + x^2) (sigma^2 the super-block's mean square), squared error,
 * and the 4-bit scales and minimums themselves fitted by a weighted search. */
static void q2_k_weighted(const float *x, const float *qw, float row_sigma2, void *block)
{
    (void)row_sigma2;
    block_q2_K *y = block;
    uint8_t L[QUANT_KBLOCK], Ls[16], Lm[16];
    float weight[16], mins[16], scales[16], sw[16];
    float sumx2 = 0.0f;
    for (int j = 0; j < QUANT_KBLOCK; j++)
        sumx2 += x[j] * x[j];
    const float sigma2 = sumx2 / (float)QUANT_KBLOCK;
    for (int j = 0; j < 16; j++) {
        sw[j] = 0.0f;
        for (int i = 0; i < 16; i++) {
            weight[i] = qw[16 * j + i] * sqrtf(sigma2 + x[16 * j + i] * x[16 * j + i]);
            sw[j] += weight[i];
        }
        scales[j] = kquant_min_search(16, 3, x + 16 * j, weight, L + 16 * j, &mins[j], -0.9f,
                                      0.05f, 36, false);
    }
    y->d = quant_fp32_to_fp16(kquant_positive_search(16, 15, scales, Ls, sw));
    y->dmin = quant_fp32_to_fp16(kquant_positive_search(16, 15, mins, Lm, sw));
    for (int j = 0; j < 16; j++)
        y->scales[j] = (uint8_t)(Ls[j] | (Lm[j] << 4));
    q2_k_requantize(x, L, y);
}

static const search_quant_type q2_k = {
    .block_size = QUANT_KBLOCK,
    .block_bytes = sizeof(block_q2_K),
    .reference = q2_k_reference,
    .weighted = q2_k_weighted,
    .d_offset = offsetof(block_q2_K, d),
    .min_offset = offsetof(block_q2_K, dmin),
};

void inf_q2_k_from_float_scalar(const float *src, void *dst, int64_t n)
{
    search_quantize_reference(&q2_k, src, dst, n);
}

int64_t inf_q2_k_from_float_imatrix(const float *src, void *dst, int64_t n, const float *imatrix)
{
    return search_quantize_weighted(&q2_k, src, dst, n, imatrix);
}
