/* q6_k_quantize.c - Q6_K quantizers: 16 sub-blocks of 16 with symmetric 6-bit codes and int8
 * sub-block scales relative to the fp16 d. With an imatrix the sub-block searches are weighted
 * by the imatrix entries themselves (not by sqrt(sigma^2 + x^2) as the other K types). */
#include "kquant_quantize.h"

/* Scales from the 16 sub-block scales (the one of largest magnitude maps to -128), codes
 * recomputed from them, then packed: low nibbles in ql, high 2 bits in qh, in halves of 128. */
static void q6_k_finish(const float *x, const float *scales, int8_t *L, block_q6_K *y)
{
    float max_scale = 0.0f, max_abs_scale = 0.0f;
    for (int j = 0; j < 16; j++) {
        if (fabsf(scales[j]) > max_abs_scale) {
            max_abs_scale = fabsf(scales[j]);
            max_scale = scales[j];
        }
    }
    if (max_abs_scale < 1e-15f) { /* ggml's GROUP_MAX_EPS: an all-zero block */
        memset(y, 0, sizeof *y);
        return;
    }
    const float iscale = -128.0f / max_scale;
    y->d = quant_fp32_to_fp16(1 / iscale);
    for (int j = 0; j < 16; j++) {
        int l = kquant_nearest_int(iscale * scales[j]);
        y->scales[j] = (int8_t)(l < 127 ? l : 127);
    }
    const float d_all = quant_fp16_to_fp32(y->d);
    for (int j = 0; j < 16; j++) {
        const float d = d_all * (float)y->scales[j];
        if (d == 0.0f)
            continue;
        for (int i = 0; i < 16; i++) {
            int l = kquant_nearest_int(x[16 * j + i] / d);
            L[16 * j + i] = (int8_t)((l < -32 ? -32 : l > 31 ? 31 : l) + 32);
        }
    }
    for (int h = 0; h < QUANT_KBLOCK / 128; h++) {
        const int8_t *q = L + 128 * h;
        uint8_t *ql = y->ql + 64 * h, *qh = y->qh + 32 * h;
        for (int j = 0; j < 32; j++) {
            ql[j] = (uint8_t)((q[j] & 0x0F) | ((q[j + 64] & 0x0F) << 4));
            ql[j + 32] = (uint8_t)((q[j + 32] & 0x0F) | ((q[j + 96] & 0x0F) << 4));
            qh[j] = (uint8_t)((q[j] >> 4) | ((q[j + 32] >> 4) << 2) | ((q[j + 64] >> 4) << 4) |
                              ((q[j + 96] >> 4) << 6));
        }
    }
}

static void q6_k_reference(const float *x, void *block)
{
    int8_t L[QUANT_KBLOCK];
    float scales[16];
    for (int j = 0; j < 16; j++)
        scales[j] = kquant_symmetric_search(16, 32, x + 16 * j, L + 16 * j, NULL);
    q6_k_finish(x, scales, L, block);
}

static void q6_k_weighted(const float *x, const float *qw, float row_sigma2, void *block)
{
    (void)row_sigma2;
    int8_t L[QUANT_KBLOCK];
    float scales[16];
    for (int j = 0; j < 16; j++)
        scales[j] = kquant_symmetric_search(16, 32, x + 16 * j, L + 16 * j, qw + 16 * j);
    q6_k_finish(x, scales, L, block);
}

static const search_quant_type q6_k = {
    .block_size = QUANT_KBLOCK,
    .block_bytes = sizeof(block_q6_K),
    .reference = q6_k_reference,
    .weighted = q6_k_weighted,
    .d_offset = offsetof(block_q6_K, d),
    .min_offset = -1,
};

void inf_q6_k_from_float_scalar(const float *src, void *dst, int64_t n)
{
    search_quantize_reference(&q6_k, src, dst, n);
}

int64_t inf_q6_k_from_float_imatrix(const float *src, void *dst, int64_t n, const float *imatrix)
{
    return search_quantize_weighted(&q6_k, src, dst, n, imatrix);
}
