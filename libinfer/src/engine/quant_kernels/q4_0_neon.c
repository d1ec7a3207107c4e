/* q4_0_neon.c - Q4_0 on arm64 NEON, byte-identical to q4_0_scalar.c: codes are x * id + 8.5
 * (a multiply then an add, never fused) truncated, reduced to x86's low byte, capped at 15. */
#if defined(__ARM_NEON) && defined(__aarch64__)
#include "quant_neon.h"

/* The finite block's element of largest magnitude with its sign: the first one whose |x|
 * equals the maximum, as the scalar scan's strict `<` keeps; +0 for an all-zero block. */
static float block_signed_max(const float *src, float amax)
{
    if (amax == 0.0f)
        return 0.0f;
    int j = 0;
    while (fabsf(src[j]) != amax)
        j++;
    return src[j];
}

/* The codes of 4 elements, as quant_capped_code(x * id + 8.5f, 15) gives them, widened. */
static inline int32x4_t q4_codes(float32x4_t x, float id)
{
    float32x4_t v = vaddq_f32(vmulq_n_f32(x, id), vdupq_n_f32(8.5f));
    return quant_neon_fix_overflow(v, vcvtq_s32_f32(v));
}

void inf_q4_0_from_float_neon(const float *src, void *dst, int64_t n)
{
    block_q4_0 *out = dst;
    for (int64_t b = 0; b < n / QUANT_BLOCK; b++, src += QUANT_BLOCK) {
        float32x4_t x[8];
        for (int i = 0; i < 8; i++)
            x[i] = vld1q_f32(src + 4 * i);
        const uint32_t amax = quant_neon_block_amax_bits(x);
        if (amax >= QUANT_INF_BITS) {
            quant_nan_block(&out[b], sizeof out[b], 1);
            continue;
        }
        const float d = block_signed_max(src, quant_f32_from_bits(amax)) / -8;
        const float id = quant_inverse_scale(d);
        out[b].d = quant_fp32_to_fp16(d);
        int8x16_t cap = vdupq_n_s8(15);
        int8x16_t lo = vminq_s8(quant_neon_low_bytes(q4_codes(x[0], id), q4_codes(x[1], id),
                                                     q4_codes(x[2], id), q4_codes(x[3], id)),
                                cap);
        int8x16_t hi = vminq_s8(quant_neon_low_bytes(q4_codes(x[4], id), q4_codes(x[5], id),
                                                     q4_codes(x[6], id), q4_codes(x[7], id)),
                                cap);
        /* lo keeps all 8 bits, as the scalar `lo | (hi << 4)` does for a negative code. */
        uint8x16_t packed = vorrq_u8(vreinterpretq_u8_s8(lo), vshlq_n_u8(vreinterpretq_u8_s8(hi), 4));
        vst1q_u8(out[b].qs, packed);
    }
}

void inf_q4_0_to_float_neon(const void *src, float *dst, int64_t n)
{
    const block_q4_0 *in = src;
    const int8x16_t eight = vdupq_n_s8(8);
    for (int64_t b = 0; b < n / QUANT_BLOCK; b++, dst += QUANT_BLOCK) {
        const float d = quant_fp16_to_fp32(in[b].d);
        uint8x16_t qs = vld1q_u8(in[b].qs);
        int8x16_t lo = vsubq_s8(vreinterpretq_s8_u8(vandq_u8(qs, vdupq_n_u8(0x0F))), eight);
        int8x16_t hi = vsubq_s8(vreinterpretq_s8_u8(vshrq_n_u8(qs, 4)), eight);
        quant_neon_scale_16(lo, d, dst);
        quant_neon_scale_16(hi, d, dst + 16);
    }
}
#else
/* ISO C forbids an empty translation unit; this file has code only on arm64. */
typedef int quant_q4_0_neon_unused;
#endif
