/* q4_1_scalar.c - reference Q4_1: 16 evenly spaced codes from the block's minimum to its
 * maximum. */
#include "quant_internal.h"

void inf_q4_1_from_float_scalar(const float *src, void *dst, int64_t n)
{
    block_q4_1 *out = dst;
    for (int64_t b = 0; b < n / QUANT_BLOCK; b++, src += QUANT_BLOCK) {
        if (!quant_block_is_finite(src)) {
            quant_nan_block(&out[b], sizeof out[b], 2);
            continue;
        }
        float min, max;
        quant_block_min_max(src, &min, &max);
        const float d = (max - min) / 15;
        const float id = quant_inverse_scale(d);
        out[b].d = quant_fp32_to_fp16(d);
        out[b].m = quant_fp32_to_fp16(min);
        for (int j = 0; j < QUANT_BLOCK / 2; j++) {
            uint8_t lo = quant_capped_code((src[j] - min) * id + 0.5f, 15);
            uint8_t hi = quant_capped_code((src[j + QUANT_BLOCK / 2] - min) * id + 0.5f, 15);
            out[b].qs[j] = (uint8_t)(lo | (hi << 4));
        }
    }
}

void inf_q4_1_to_float_scalar(const void *src, float *dst, int64_t n)
{
    const block_q4_1 *in = src;
    for (int64_t b = 0; b < n / QUANT_BLOCK; b++, dst += QUANT_BLOCK) {
        const float d = quant_fp16_to_fp32(in[b].d);
        const float m = quant_fp16_to_fp32(in[b].m);
        for (int j = 0; j < QUANT_BLOCK / 2; j++) {
            dst[j] = (float)(in[b].qs[j] & 0x0F) * d + m;
            dst[j + QUANT_BLOCK / 2] = (float)(in[b].qs[j] >> 4) * d + m;
        }
    }
}
