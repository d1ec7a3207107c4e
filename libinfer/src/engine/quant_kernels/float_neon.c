/* float_neon.c - F16 and BF16 rows on arm64 NEON, bit-identical to float_scalar.c. The hardware
 * converters round to nearest even with denormals kept (Linux leaves FPCR.FZ16 and FPCR.DN
 * clear); only a NaN's payload differs, which float-to-half fixes up below. */
#if defined(__ARM_NEON) && defined(__aarch64__)
#include "quant_neon.h"

void inf_f16_to_float_neon(const void *src, float *dst, int64_t n)
{
    const inf_fp16 *h = src;
    int64_t i = 0;
    /* Half to float is exact, and a NaN comes back quiet with its payload, as the scalar code. */
    for (; i + 4 <= n; i += 4)
        vst1q_f32(dst + i, vcvt_f32_f16(vreinterpret_f16_u16(vld1_u16(h + i))));
    for (; i < n; i++)
        dst[i] = quant_fp16_to_fp32(h[i]);
}

/* Four floats to halves; a NaN becomes sign | 0x7E00 (payload dropped, as the scalar code). */
static inline uint16x4_t f16_from_4(float32x4_t x)
{
    uint16x4_t h = vreinterpret_u16_f16(vcvt_f16_f32(x));
    uint16x4_t nan = vmovn_u32(vmvnq_u32(vceqq_f32(x, x)));
    uint16x4_t sign = vshrn_n_u32(vandq_u32(vreinterpretq_u32_f32(x), vdupq_n_u32(0x80000000)), 16);
    return vbsl_u16(nan, vorr_u16(sign, vdup_n_u16(0x7E00)), h);
}

void inf_f16_from_float_neon(const float *src, void *dst, int64_t n)
{
    inf_fp16 *h = dst;
    int64_t i = 0;
    for (; i + 4 <= n; i += 4)
        vst1_u16(h + i, f16_from_4(vld1q_f32(src + i)));
    for (; i < n; i++)
        h[i] = quant_fp32_to_fp16(src[i]);
}

void inf_bf16_to_float_neon(const void *src, float *dst, int64_t n)
{
    const inf_bf16 *h = src;
    int64_t i = 0;
    for (; i + 4 <= n; i += 4)
        vst1q_f32(dst + i, vreinterpretq_f32_u32(vshll_n_u16(vld1_u16(h + i), 16)));
    for (; i < n; i++)
        dst[i] = quant_bf16_to_fp32(h[i]);
}

/* Four floats to bfloat16 with the scalar code's integer rounding (ties to even) and quiet NaN. */
static inline uint16x4_t bf16_from_4(float32x4_t x)
{
    uint32x4_t u = vreinterpretq_u32_f32(x);
    uint32x4_t odd = vandq_u32(vshrq_n_u32(u, 16), vdupq_n_u32(1));
    uint16x4_t rounded = vshrn_n_u32(vaddq_u32(vaddq_u32(u, vdupq_n_u32(0x7FFF)), odd), 16);
    uint16x4_t quiet = vorr_u16(vshrn_n_u32(u, 16), vdup_n_u16(0x40));
    uint16x4_t nan = vmovn_u32(vmvnq_u32(vceqq_f32(x, x)));
    return vbsl_u16(nan, quiet, rounded);
}

void inf_bf16_from_float_neon(const float *src, void *dst, int64_t n)
{
    inf_bf16 *h = dst;
    int64_t i = 0;
    for (; i + 4 <= n; i += 4)
        vst1_u16(h + i, bf16_from_4(vld1q_f32(src + i)));
    for (; i < n; i++)
        h[i] = quant_fp32_to_bf16(src[i]);
}
#else
/* ISO C forbids an empty translation unit; this file has code only on arm64. */
typedef int quant_float_neon_unused;
#endif
