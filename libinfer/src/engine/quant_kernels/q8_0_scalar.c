/* q8_0_scalar.c - reference Q8_0: symmetric 8-bit codes, d = max|x| / 127, codes rounded half
 * away from zero (roundf, spelled out by quant_round_i32). */
#include "quant_internal.h"

void inf_q8_0_from_float_scalar(const float *src, void *dst, int64_t n)
{
    block_q8_0 *out = dst;
    for (int64_t b = 0; b < n / QUANT_BLOCK; b++, src += QUANT_BLOCK) {
        if (!quant_block_is_finite(src)) {
            quant_nan_block(&out[b], sizeof out[b], 1);
            continue;
        }
        const float d = quant_block_amax(src) / 127;
        const float id = quant_inverse_scale(d);
        out[b].d = quant_fp32_to_fp16(d);
        for (int j = 0; j < QUANT_BLOCK; j++)
            out[b].qs[j] = quant_q8_code(src[j] * id);
    }
}

void inf_q8_0_to_float_scalar(const void *src, float *dst, int64_t n)
{
    const block_q8_0 *in = src;
    for (int64_t b = 0; b < n / QUANT_BLOCK; b++, dst += QUANT_BLOCK) {
        const float d = quant_fp16_to_fp32(in[b].d);
        for (int j = 0; j < QUANT_BLOCK; j++)
            dst[j] = (float)in[b].qs[j] * d;
    }
}
