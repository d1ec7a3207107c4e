/* q5_1_scalar.c - reference Q5_1: as Q4_1 with 32 codes, fifth bits kept apart in qh. */
#include "quant_internal.h"

void inf_q5_1_from_float_scalar(const float *src, void *dst, int64_t n)
{
    block_q5_1 *out = dst;
    for (int64_t b = 0; b < n / QUANT_BLOCK; b++, src += QUANT_BLOCK) {
        if (!quant_block_is_finite(src)) {
            quant_nan_block(&out[b], sizeof out[b], 2);
            continue;
        }
        float min, max;
        quant_block_min_max(src, &min, &max);
        const float d = (max - min) / 31;
        const float id = quant_inverse_scale(d);
        out[b].d = quant_fp32_to_fp16(d);
        out[b].m = quant_fp32_to_fp16(min);
        uint32_t qh = 0;
        /* no cap: (max - min) * id + 0.5 stays below 32 (as in ggml) */
        for (int j = 0; j < QUANT_BLOCK / 2; j++)
            quant_put_q5(out[b].qs, &qh, j, quant_trunc_u8((src[j] - min) * id + 0.5f),
                         quant_trunc_u8((src[j + QUANT_BLOCK / 2] - min) * id + 0.5f));
        memcpy(out[b].qh, &qh, sizeof qh);
    }
}

void inf_q5_1_to_float_scalar(const void *src, float *dst, int64_t n)
{
    const block_q5_1 *in = src;
    for (int64_t b = 0; b < n / QUANT_BLOCK; b++, dst += QUANT_BLOCK) {
        const float d = quant_fp16_to_fp32(in[b].d);
        const float m = quant_fp16_to_fp32(in[b].m);
        uint32_t qh;
        memcpy(&qh, in[b].qh, sizeof qh);
        for (int j = 0; j < QUANT_BLOCK; j++)
            dst[j] = (float)quant_q5_code(in[b].qs, qh, j) * d + m;
    }
}
