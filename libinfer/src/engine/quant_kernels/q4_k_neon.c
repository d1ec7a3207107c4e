/* q4_k_neon.c - Q4_K dequantization on arm64 NEON; the same floats as q4_k_scalar.c (a multiply
 * then a subtraction, never fused: the build uses -ffp-contract=off). */
#if defined(__ARM_NEON) && defined(__aarch64__)
#include "quant_kblocks.h"
#include "quant_neon.h"

/* dst[0..15] = (float)q[0..15] * d - m for codes 0..15. */
static inline void scale_sub_16(uint8x16_t q, float d, float m, float *dst)
{
    const float32x4_t vm = vdupq_n_f32(m);
    uint16x8_t lo = vmovl_u8(vget_low_u8(q)), hi = vmovl_u8(vget_high_u8(q));
    const uint16x4_t parts[4] = {vget_low_u16(lo), vget_high_u16(lo), vget_low_u16(hi),
                                 vget_high_u16(hi)};
    for (int i = 0; i < 4; i++) {
        float32x4_t x = vcvtq_f32_u32(vmovl_u16(parts[i]));
        vst1q_f32(dst + 4 * i, vsubq_f32(vmulq_n_f32(x, d), vm));
    }
}

void inf_q4_K_to_float_neon(const void *src, float *dst, int64_t n)
{
    const block_q4_K *in = src;
    const uint8x16_t low_nibble = vdupq_n_u8(0x0F);
    for (int64_t b = 0; b < n / QUANT_KBLOCK; b++, dst += QUANT_KBLOCK) {
        const float d = quant_fp16_to_fp32(in[b].d);
        const float dmin = quant_fp16_to_fp32(in[b].dmin);
        for (int s = 0; s < QUANT_KBLOCK / 32; s++) {
            uint8_t sc, m;
            quant_kscale_min(in[b].scales, s, &sc, &m);
            const float dl = d * (float)sc, ml = dmin * (float)m;
            const uint8_t *q = in[b].qs + 32 * (s / 2);
            for (int half = 0; half < 2; half++) {
                uint8x16_t v = vld1q_u8(q + 16 * half);
                v = s % 2 ? vshrq_n_u8(v, 4) : vandq_u8(v, low_nibble);
                scale_sub_16(v, dl, ml, dst + 32 * s + 16 * half);
            }
        }
    }
}
#else
/* ISO C forbids an empty translation unit; this file has code only on arm64. */
typedef int quant_q4_k_neon_unused;
#endif
