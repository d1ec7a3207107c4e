/* q4_0_scalar.c - reference Q4_0: the scale maps the block's largest-magnitude value (with its
 * sign) to -8, so that value is stored exactly and the other 15 codes cover the rest. */
#include <math.h>

#include "quant_internal.h"

void inf_q4_0_from_float_scalar(const float *src, void *dst, int64_t n)
{
    block_q4_0 *out = dst;
    for (int64_t b = 0; b < n / QUANT_BLOCK; b++, src += QUANT_BLOCK) {
        float amax = 0.0f, max = 0.0f; /* first element of largest magnitude wins ties */
        for (int j = 0; j < QUANT_BLOCK; j++) {
            if (amax < fabsf(src[j])) {
                amax = fabsf(src[j]);
                max = src[j];
            }
        }
        const float d = max / -8;
        const float id = d != 0.0f ? 1.0f / d : 0.0f;
        out[b].d = quant_fp32_to_fp16(d);
        for (int j = 0; j < QUANT_BLOCK / 2; j++) {
            /* (int8_t) cast, then clamp the one code (16) that the exact maximum's sign yields */
            int8_t lo = (int8_t)quant_trunc_u8(src[j] * id + 8.5f);
            int8_t hi = (int8_t)quant_trunc_u8(src[j + QUANT_BLOCK / 2] * id + 8.5f);
            uint8_t qlo = (uint8_t)(lo < 15 ? lo : 15);
            uint8_t qhi = (uint8_t)(hi < 15 ? hi : 15);
            out[b].qs[j] = (uint8_t)(qlo | (qhi << 4));
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
