/* quant_neon.h - NEON helpers shared by the arm64 kernels, each equal bit for bit to the scalar
 * helper of quant_internal.h that it replaces. Included only under __ARM_NEON && __aarch64__. */
#ifndef INF_QUANT_NEON_H
#define INF_QUANT_NEON_H

#include <arm_neon.h>

#include "quant_internal.h"

/* The bits of the block's largest |x|: QUANT_INF_BITS or more when the block holds NaN or Inf
 * (it must then be stored as quant_nan_block before anything else looks at it). Clearing the
 * sign bit turns -0 into +0, as the scalar scan's fabs does. */
static inline uint32_t quant_neon_block_amax_bits(const float32x4_t v[8])
{
    const uint32x4_t magnitude = vdupq_n_u32(0x7FFFFFFF);
    uint32x4_t m = vandq_u32(vreinterpretq_u32_f32(v[0]), magnitude);
    for (int i = 1; i < 8; i++)
        m = vmaxq_u32(m, vandq_u32(vreinterpretq_u32_f32(v[i]), magnitude));
    return vmaxvq_u32(m);
}

/* Zero the lanes of `i` (converted from `v`) where v >= 2^31: vcvt saturates those to
 * INT32_MAX, x86's conversion (which quant_trunc_i32 spells out) gives INT32_MIN, whose low
 * byte is 0. Below -2^31 both give INT32_MIN and NaN gives 0 here, low byte 0 either way. */
static inline int32x4_t quant_neon_fix_overflow(float32x4_t v, int32x4_t i)
{
    uint32x4_t big = vcgeq_f32(v, vdupq_n_f32(2147483648.0f));
    return vbicq_s32(i, vreinterpretq_s32_u32(big));
}

/* Low bytes of 16 int32 lanes, as the scalar code's cast through uint8_t keeps them. */
static inline int8x16_t quant_neon_low_bytes(int32x4_t a, int32x4_t b, int32x4_t c, int32x4_t d)
{
    int16x8_t ab = vcombine_s16(vmovn_s32(a), vmovn_s32(b));
    int16x8_t cd = vcombine_s16(vmovn_s32(c), vmovn_s32(d));
    return vcombine_s8(vmovn_s16(ab), vmovn_s16(cd));
}

/* dst[0..15] = (float)q[0..15] * d; the int8 to float conversion is exact. */
static inline void quant_neon_scale_16(int8x16_t q, float d, float *dst)
{
    int16x8_t lo = vmovl_s8(vget_low_s8(q)), hi = vmovl_s8(vget_high_s8(q));
    vst1q_f32(dst + 0, vmulq_n_f32(vcvtq_f32_s32(vmovl_s16(vget_low_s16(lo))), d));
    vst1q_f32(dst + 4, vmulq_n_f32(vcvtq_f32_s32(vmovl_s16(vget_high_s16(lo))), d));
    vst1q_f32(dst + 8, vmulq_n_f32(vcvtq_f32_s32(vmovl_s16(vget_low_s16(hi))), d));
    vst1q_f32(dst + 12, vmulq_n_f32(vcvtq_f32_s32(vmovl_s16(vget_high_s16(hi))), d));
}

#endif
