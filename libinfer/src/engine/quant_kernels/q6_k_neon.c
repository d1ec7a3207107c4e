/* q6_k_neon.c - Q6_K dequantization on arm64 NEON; the same floats as q6_k_scalar.c: each 16
 * elements' factor d * scale is rounded once, then multiplied by the codes, as there. */
#if defined(__ARM_NEON) && defined(__aarch64__)
#include "quant_kblocks.h"
#include "quant_neon.h"

void inf_q6_K_to_float_neon(const void *src, float *dst, int64_t n)
{
    const block_q6_K *in = src;
    for (int64_t b = 0; b < n / QUANT_KBLOCK; b++) {
        const float d = quant_fp16_to_fp32(in[b].d);
        for (int h = 0; h < 2; h++) {
            const uint8_t *ql = in[b].ql + 64 * h, *qh = in[b].qh + 32 * h;
            const int8_t *scales = in[b].scales + 8 * h;
            /* quarter k, elements 16 i .. 16 i + 15: nibble k / 2 of ql[32 (k % 2) + l], bit
             * pair k of qh[l] */
            for (int k = 0; k < 4; k++)
                for (int i = 0; i < 2; i++, dst += 16) {
                    uint8x16_t low = vld1q_u8(ql + 32 * (k % 2) + 16 * i);
                    low = k / 2 ? vshrq_n_u8(low, 4) : vandq_u8(low, vdupq_n_u8(0x0F));
                    uint8x16_t high = vld1q_u8(qh + 16 * i);
                    switch (k) { /* shift counts must be constants */
                    case 0: break;
                    case 1: high = vshrq_n_u8(high, 2); break;
                    case 2: high = vshrq_n_u8(high, 4); break;
                    default: high = vshrq_n_u8(high, 6); break;
                    }
                    high = vshlq_n_u8(vandq_u8(high, vdupq_n_u8(3)), 4);
                    int8x16_t q = vreinterpretq_s8_u8(vorrq_u8(low, high));
                    q = vsubq_s8(q, vdupq_n_s8(32));
                    quant_neon_scale_16(q, d * (float)scales[2 * k + i], dst);
                }
        }
    }
}
#else
/* ISO C forbids an empty translation unit; this file has code only on arm64. */
typedef int quant_q6_k_neon_unused;
#endif
