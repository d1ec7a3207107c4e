/* q4_0_scalar.c - reference Q4_0: the scale maps the block's largest-magnitude value (with its
 * sign) to -8, so that value is stored exactly and the other 15 codes cover the rest. */
#include "quant_internal.h"

void inf_q4_0_from_float_scalar(const float *src, void *dst, int64_t n)
{
    block_q4_0 *out = dst;
    for (int64_t b = 0; b < n / QUANT_BLOCK; b++, src += QUANT_BLOCK) {
        if (!quant_block_is_finite(src)) {
            quant_nan_block(&out[b], sizeof out[b], 1);
            continue;
        }
        const float d = quant_block_signed_max(src) / -8;
        const float id = quant_inverse_scale(d);
        out[b].d = quant_fp32_to_fp16(d);
        for (int j = 0; j < QUANT_BLOCK / 2; j++) {
            uint8_t lo = quant_capped_code(src[j] * id + 8.5f, 15);
            uint8_t hi = quant_capped_code(src[j + QUANT_BLOCK / 2] * id + 8.5f, 15);
            out[b].qs[j] = (uint8_t)(lo | (hi << 4));
        }
    }
}

void inf_q4_0_to_float_scalar(const void *src, float *dst, int64_t n)
{
    const block_q4_0 *in = src;
    for (int64_t b = 0; b < n / QUANT_BLOCK; b++, dst += QUANT_BLOCK) {
        const float d = quant_fp16_to_fp32(in[b].d);
        for (int j = 0; j < QUANT_BLOCK / 2; j++) {
            dst[j] = (float)((in[b].qs[j] & 0x0F) - 8) * d;
            dst[j + QUANT_BLOCK / 2] = (float)((in[b].qs[j] >> 4) - 8) * d;
        }
    }
}
