/* q8_0_neon.c - Q8_0 on arm64 NEON, byte-identical to q8_0_scalar.c: vcvtaq rounds half away
 * from zero exactly as roundf does, and out-of-range products are fixed up to x86's low byte. */
#if defined(__ARM_NEON) && defined(__aarch64__)
#include "quant_neon.h"

/* The codes of 4 products x * id, as quant_q8_code gives them. */
static inline int32x4_t q8_codes(float32x4_t x, float id)
{
    float32x4_t v = vmulq_n_f32(x, id);
    return quant_neon_fix_overflow(v, vcvtaq_s32_f32(v));
}

void inf_q8_0_from_float_neon(const float *src, void *dst, int64_t n)
{
    block_q8_0 *out = dst;
    for (int64_t b = 0; b < n / QUANT_BLOCK; b++, src += QUANT_BLOCK) {
        float32x4_t x[8];
        for (int i = 0; i < 8; i++)
            x[i] = vld1q_f32(src + 4 * i);
        const uint32_t amax = quant_neon_block_amax_bits(x);
        if (amax >= QUANT_INF_BITS) {
            quant_nan_block(&out[b], sizeof out[b], 1);
            continue;
        }
        const float d = quant_f32_from_bits(amax) / 127;
        const float id = quant_inverse_scale(d);
        out[b].d = quant_fp32_to_fp16(d);
        for (int h = 0; h < 2; h++) {
            const float32x4_t *xh = x + 4 * h;
            int8x16_t q = quant_neon_low_bytes(q8_codes(xh[0], id), q8_codes(xh[1], id),
                                               q8_codes(xh[2], id), q8_codes(xh[3], id));
            vst1q_s8(out[b].qs + 16 * h, q);
        }
    }
}

void inf_q8_0_to_float_neon(const void *src, float *dst, int64_t n)
{
    const block_q8_0 *in = src;
    for (int64_t b = 0; b < n / QUANT_BLOCK; b++, dst += QUANT_BLOCK) {
        const float d = quant_fp16_to_fp32(in[b].d);
        quant_neon_scale_16(vld1q_s8(in[b].qs), d, dst);
        quant_neon_scale_16(vld1q_s8(in[b].qs + 16), d, dst + 16);
    }
}
#else
/* ISO C forbids an empty translation unit; this file has code only on arm64. */
typedef int quant_q8_0_neon_unused;
#endif
