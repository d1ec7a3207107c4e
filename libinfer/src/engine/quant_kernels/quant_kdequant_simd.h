/* quant_kdequant_simd.h - the step every K-quant SIMD dequantizer ends with: 32 int8 codes to
 * floats (float)q * scale - min, multiply then subtract as the scalar kernels do (never fused,
 * never as an addition of -min, which would flip a NaN min's sign). Include only from *_avx2.c
 * and *_avx512.c files; the AVX-512 version exists where the file is compiled for it. */
#ifndef INF_QUANT_KDEQUANT_SIMD_H
#define INF_QUANT_KDEQUANT_SIMD_H

#include <immintrin.h>

#include "quant_internal.h"
#include "quant_kblocks.h"

/* dst[0..7] = (float)codes[0..7] * d - m, codes the low 8 bytes of `bytes`. */
static inline void kdequant_avx2_8(__m128i bytes, __m256 d, __m256 m, float *dst)
{
    __m256 q = _mm256_cvtepi32_ps(_mm256_cvtepi8_epi32(bytes));
    _mm256_storeu_ps(dst, _mm256_sub_ps(_mm256_mul_ps(q, d), m));
}

/* dst[0..15] = (float)codes[0..15] * d - m. */
static inline void kdequant_avx2_16(__m128i codes, float d, float m, float *dst)
{
    const __m256 vd = _mm256_set1_ps(d), vm = _mm256_set1_ps(m);
    kdequant_avx2_8(codes, vd, vm, dst);
    kdequant_avx2_8(_mm_srli_si128(codes, 8), vd, vm, dst + 8);
}

/* dst[0..31] = (float)codes[0..31] * d - m. */
static inline void kdequant_avx2_32(__m256i codes, float d, float m, float *dst)
{
    kdequant_avx2_16(_mm256_castsi256_si128(codes), d, m, dst);
    kdequant_avx2_16(_mm256_extracti128_si256(codes, 1), d, m, dst + 16);
}

#if defined(__AVX512F__)
/* dst[0..15] = (float)codes[0..15] * d - m. */
static inline void kdequant_avx512_16(__m128i codes, float d, float m, float *dst)
{
    __m512 q = _mm512_cvtepi32_ps(_mm512_cvtepi8_epi32(codes));
    _mm512_storeu_ps(dst, _mm512_sub_ps(_mm512_mul_ps(q, _mm512_set1_ps(d)), _mm512_set1_ps(m)));
}

/* dst[0..31] = (float)codes[0..31] * d - m. */
static inline void kdequant_avx512_32(__m256i codes, float d, float m, float *dst)
{
    kdequant_avx512_16(_mm256_castsi256_si128(codes), d, m, dst);
    kdequant_avx512_16(_mm256_extracti128_si256(codes, 1), d, m, dst + 16);
}
#endif

/* The 32 nibbles (low when shift is 0, high when 4) of 32 bytes, one per byte. */
static inline __m256i kdequant_nibbles(const uint8_t *q, int shift)
{
    __m256i v = _mm256_loadu_si256((const __m256i *)q);
    return _mm256_and_si256(_mm256_srl_epi16(v, _mm_cvtsi32_si128(shift)), _mm256_set1_epi8(0x0F));
}

/* Byte l: 0x10 when bit `bit` of qh[l] is set (the fifth bit of a Q5_K code), l 0..31. */
static inline __m256i kdequant_fifth_bits(const uint8_t qh[32], int bit)
{
    __m256i v = _mm256_loadu_si256((const __m256i *)qh);
    v = _mm256_srl_epi16(v, _mm_cvtsi32_si128(bit));
    return _mm256_slli_epi16(_mm256_and_si256(v, _mm256_set1_epi8(1)), 4);
}

/* The 32 codes q - 32 of quarter k (0..3) of a Q6_K half: low bits from nibble k / 2 of
 * ql[32 (k % 2) + l], high bits from bit pair k of qh[l]. */
static inline __m256i kdequant_q6_codes(const uint8_t *ql, const uint8_t *qh, int k)
{
    __m256i low = kdequant_nibbles(ql + 32 * (k % 2), 4 * (k / 2));
    __m256i high = _mm256_loadu_si256((const __m256i *)qh);
    high = _mm256_and_si256(_mm256_srl_epi16(high, _mm_cvtsi32_si128(2 * k)),
                            _mm256_set1_epi8(3));
    __m256i q = _mm256_or_si256(low, _mm256_slli_epi16(high, 4));
    return _mm256_sub_epi8(q, _mm256_set1_epi8(32));
}

#endif
