/* float_convert.cuh - fp16 and bf16 conversions for kernels, bit for bit those of the CPU backend
 * (inf_fp16_to_fp32() and friends, quant_internal.h): round to nearest even, denormals kept,
 * overflow to infinity, NaN made quiet the same way. Integer code rather than the __half
 * intrinsics, so that NaN payloads and signs come out as on the CPU on every GPU and in the
 * emulator; tests/cuda/test_cuda_math.c compares them with the CPU's. C11 and CUDA C++. */
#ifndef INF_CUDA_FLOAT_CONVERT_CUH
#define INF_CUDA_FLOAT_CONVERT_CUH

#include "float_ops.cuh"

static inline INF_CUDA_HD float cuda_fp16_to_fp32(uint16_t h)
{
    const uint32_t sign = (uint32_t)(h & 0x8000) << 16;
    const uint32_t exponent = (h >> 10) & 0x1F, mantissa = h & 0x3FF;
    if (exponent == 0x1F) /* infinity, or NaN made quiet */
        return cuda_float_from_bits(sign | 0x7F800000 | (mantissa << 13) |
                                    (mantissa ? 0x400000 : 0));
    if (exponent != 0)
        return cuda_float_from_bits(sign | ((exponent + 112) << 23) | (mantissa << 13));
    /* zero or denormal: mantissa * 2^-24 is exact */
    const float magnitude = cuda_mul((float)mantissa, 0x1p-24f);
    return sign ? -magnitude : magnitude;
}

static inline INF_CUDA_HD uint16_t cuda_fp32_to_fp16(float f)
{
    const uint32_t x = cuda_float_bits(f);
    const uint16_t sign = (uint16_t)((x >> 16) & 0x8000);
    const uint32_t ax = x & 0x7FFFFFFF;
    if (ax > 0x7F800000) /* NaN */
        return (uint16_t)(sign | 0x7E00);
    if (ax >= 0x477FF000) /* >= 65520 rounds to infinity */
        return (uint16_t)(sign | 0x7C00);
    if (ax >= 0x38800000) { /* a normal half: drop 13 bits with ties to even, rebias */
        const uint32_t rounded = ax + 0xFFF + ((ax >> 13) & 1);
        return (uint16_t)(sign | (uint16_t)((rounded - 0x38000000) >> 13));
    }
    if (ax <= 0x33000000) /* at most 2^-25 (a tie with zero, the even one) */
        return sign;
    /* a denormal half: the value in units of 2^-24, to nearest even */
    const int shift = 126 - (int)(ax >> 23);
    const uint32_t mantissa = (ax & 0x7FFFFF) | 0x800000;
    uint32_t q = mantissa >> shift;
    const uint32_t rest = mantissa & ((1u << shift) - 1), half = 1u << (shift - 1);
    if (rest > half || (rest == half && (q & 1)))
        q++;
    return (uint16_t)(sign | (uint16_t)q);
}

static inline INF_CUDA_HD float cuda_bf16_to_fp32(uint16_t h)
{
    return cuda_float_from_bits((uint32_t)h << 16);
}

static inline INF_CUDA_HD uint16_t cuda_fp32_to_bf16(float f)
{
    const uint32_t x = cuda_float_bits(f);
    if ((x & 0x7FFFFFFF) > 0x7F800000) /* NaN: the upper half, made quiet */
        return (uint16_t)((x >> 16) | 0x40);
    return (uint16_t)((x + 0x7FFF + ((x >> 16) & 1)) >> 16);
}

#endif
