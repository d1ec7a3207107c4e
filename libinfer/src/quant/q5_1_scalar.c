/* q5_1_scalar.c - reference Q5_1: as Q4_1 with 32 codes, fifth bits kept apart in qh. */
#include <float.h>

#include "quant_internal.h"

void inf_q5_1_from_float_scalar(const float *src, void *dst, int64_t n)
{
    block_q5_1 *out = dst;
    for (int64_t b = 0; b < n / QUANT_BLOCK; b++, src += QUANT_BLOCK) {
        float min = FLT_MAX, max = -FLT_MAX;
        for (int j = 0; j < QUANT_BLOCK; j++) {
            if (src[j] < min)
                min = src[j];
            if (src[j] > max)
                max = src[j];
        }
        const float d = (max - min) / 31;
        const float id = d != 0.0f ? 1.0f / d : 0.0f;
        out[b].d = quant_fp32_to_fp16(d);
        out[b].m = quant_fp32_to_fp16(min);
        uint32_t qh = 0;
        for (int j = 0; j < QUANT_BLOCK / 2; j++) {
            /* no clamp: (max - min) * id + 0.5 stays below 32 (as in ggml) */
            uint8_t qlo = quant_trunc_u8((src[j] - min) * id + 0.5f);
            uint8_t qhi = quant_trunc_u8((src[j + QUANT_BLOCK / 2] - min) * id + 0.5f);
            out[b].qs[j] = (uint8_t)((qlo & 0x0F) | ((qhi & 0x0F) << 4));
            qh |= (uint32_t)((qlo >> 4) & 1) << j;
            qh |= (uint32_t)((qhi >> 4) & 1) << (j + QUANT_BLOCK / 2);
        }
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
        for (int j = 0; j < QUANT_BLOCK / 2; j++) {
            int lo = (in[b].qs[j] & 0x0F) | (int)(((qh >> j) & 1) << 4);
            int hi = (in[b].qs[j] >> 4) | (int)(((qh >> (j + QUANT_BLOCK / 2)) & 1) << 4);
            dst[j] = (float)lo * d + m;
            dst[j + QUANT_BLOCK / 2] = (float)hi * d + m;
        }
    }
}
