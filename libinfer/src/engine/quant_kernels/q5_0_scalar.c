/* q5_0_scalar.c - reference Q5_0: as Q4_0 with 32 codes; the fifth bit of each code is kept
 * apart in qh (bit j belongs to element j). */
#include "quant_internal.h"

void inf_q5_0_from_float_scalar(const float *src, void *dst, int64_t n)
{
    block_q5_0 *out = dst;
    for (int64_t b = 0; b < n / QUANT_BLOCK; b++, src += QUANT_BLOCK) {
        if (!quant_block_is_finite(src)) {
            quant_nan_block(&out[b], sizeof out[b], 1);
            continue;
        }
        const float d = quant_block_signed_max(src) / -16;
        const float id = quant_inverse_scale(d);
        out[b].d = quant_fp32_to_fp16(d);
        uint32_t qh = 0;
        for (int j = 0; j < QUANT_BLOCK / 2; j++)
            quant_put_q5(out[b].qs, &qh, j, quant_capped_code(src[j] * id + 16.5f, 31),
                         quant_capped_code(src[j + QUANT_BLOCK / 2] * id + 16.5f, 31));
        memcpy(out[b].qh, &qh, sizeof qh);
    }
}

void inf_q5_0_to_float_scalar(const void *src, float *dst, int64_t n)
{
    const block_q5_0 *in = src;
    for (int64_t b = 0; b < n / QUANT_BLOCK; b++, dst += QUANT_BLOCK) {
        const float d = quant_fp16_to_fp32(in[b].d);
        uint32_t qh;
        memcpy(&qh, in[b].qh, sizeof qh);
        for (int j = 0; j < QUANT_BLOCK; j++)
            dst[j] = (float)(quant_q5_code(in[b].qs, qh, j) - 16) * d;
    }
}
