/* q5_0_scalar.c - reference Q5_0: as Q4_0 with 32 codes; the fifth bit of each code is kept
 * apart in qh (bit j belongs to element j). */
#include <math.h>

#include "quant_internal.h"

void inf_q5_0_from_float_scalar(const float *src, void *dst, int64_t n)
{
    block_q5_0 *out = dst;
    for (int64_t b = 0; b < n / QUANT_BLOCK; b++, src += QUANT_BLOCK) {
        float amax = 0.0f, max = 0.0f;
        for (int j = 0; j < QUANT_BLOCK; j++) {
            if (amax < fabsf(src[j])) {
                amax = fabsf(src[j]);
                max = src[j];
            }
        }
        const float d = max / -16;
        const float id = d != 0.0f ? 1.0f / d : 0.0f;
        out[b].d = quant_fp32_to_fp16(d);
        uint32_t qh = 0;
        for (int j = 0; j < QUANT_BLOCK / 2; j++) {
            int8_t lo = (int8_t)quant_trunc_u8(src[j] * id + 16.5f);
            int8_t hi = (int8_t)quant_trunc_u8(src[j + QUANT_BLOCK / 2] * id + 16.5f);
            uint8_t qlo = (uint8_t)(lo < 31 ? lo : 31);
            uint8_t qhi = (uint8_t)(hi < 31 ? hi : 31);
            out[b].qs[j] = (uint8_t)((qlo & 0x0F) | ((qhi & 0x0F) << 4));
            qh |= (uint32_t)((qlo >> 4) & 1) << j;
            qh |= (uint32_t)((qhi >> 4) & 1) << (j + QUANT_BLOCK / 2);
        }
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
        for (int j = 0; j < QUANT_BLOCK / 2; j++) {
            int lo = (in[b].qs[j] & 0x0F) | (int)(((qh >> j) & 1) << 4);
            int hi = (in[b].qs[j] >> 4) | (int)(((qh >> (j + QUANT_BLOCK / 2)) & 1) << 4);
            dst[j] = (float)(lo - 16) * d;
            dst[j + QUANT_BLOCK / 2] = (float)(hi - 16) * d;
        }
    }
}
