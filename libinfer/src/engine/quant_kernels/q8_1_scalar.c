/* q8_1_scalar.c - reference Q8_1: Q8_0 plus s = d * sum(q), which lets a dot product with a
 * Q4_1/Q5_1 row add the minimum's contribution once per block. */
#include "quant_internal.h"

void inf_q8_1_from_float_scalar(const float *src, void *dst, int64_t n)
{
    block_q8_1 *out = dst;
    for (int64_t b = 0; b < n / QUANT_BLOCK; b++, src += QUANT_BLOCK) {
        if (!quant_block_is_finite(src)) {
            quant_nan_block(&out[b], sizeof out[b], 2);
            continue;
        }
        const float d = quant_block_amax(src) / 127;
        const float id = quant_inverse_scale(d);
        out[b].d = quant_fp32_to_fp16(d);
        int sum = 0;
        for (int j = 0; j < QUANT_BLOCK; j++) {
            out[b].qs[j] = quant_q8_code(src[j] * id);
            sum += out[b].qs[j];
        }
        out[b].s = quant_fp32_to_fp16((float)sum * d);
    }
}

void inf_q8_1_to_float_scalar(const void *src, float *dst, int64_t n)
{
    const block_q8_1 *in = src;
    for (int64_t b = 0; b < n / QUANT_BLOCK; b++, dst += QUANT_BLOCK) {
        const float d = quant_fp16_to_fp32(in[b].d);
        for (int j = 0; j < QUANT_BLOCK; j++)
            dst[j] = (float)in[b].qs[j] * d;
    }
}
