/* quant_avx512.h - AVX-512 building blocks for the *_avx512.c kernels: a 32-element block is
 * two 16-lane vectors. Each step reproduces the scalar reference exactly, like quant_avx2.h
 * (whose byte-level helpers these kernels reuse). Include only from *_avx512.c files. */
#ifndef INF_QUANT_AVX512_H
#define INF_QUANT_AVX512_H

#include "quant_avx2.h"

/* A 32-element block of floats as vectors (legacy_quant_body.h names it for every level). */
typedef __m512 avx512_block_vectors[2];

static inline void avx512_load_block(const float *x, __m512 v[2])
{
    quant_prefetch_ahead(x);
    v[0] = _mm512_loadu_ps(x);
    v[1] = _mm512_loadu_ps(x + 16);
}

/* The bits of |x| of 16 elements (sign cleared). */
static inline __m512i avx512_magnitude_bits(__m512 v)
{
    return _mm512_and_si512(_mm512_castps_si512(v), _mm512_set1_epi32(0x7FFFFFFF));
}

/* The bits of the block's largest |x|, QUANT_INF_BITS or more for NaN or Inf (see
 * avx2_block_amax_bits). */
static inline uint32_t avx512_block_amax_bits(const __m512 v[2])
{
    return (uint32_t)_mm512_reduce_max_epi32(
        _mm512_max_epi32(avx512_magnitude_bits(v[0]), avx512_magnitude_bits(v[1])));
}

/* The first element whose magnitude has the bits amax_bits, +0 for an all-zero block (see
 * avx2_block_signed_max: bits is never 0). */
static inline float avx512_block_signed_max(const float *x, const __m512 v[2], uint32_t amax_bits)
{
    if (amax_bits == 0)
        return 0.0f;
    const __m512i a = _mm512_set1_epi32((int)amax_bits);
    uint32_t bits = (uint32_t)_mm512_cmpeq_epi32_mask(avx512_magnitude_bits(v[0]), a) |
                    (uint32_t)_mm512_cmpeq_epi32_mask(avx512_magnitude_bits(v[1]), a) << 16;
    return x[__builtin_ctz(bits)];
}

/* Minimum and maximum of a finite block with the scalar loop's choice of signed zero (see
 * quant_avx2.h). */
static inline void avx512_block_min_max(const float *x, const __m512 v[2], float *min,
                                        float *max)
{
    *min = _mm512_reduce_min_ps(_mm512_min_ps(v[0], v[1]));
    *max = _mm512_reduce_max_ps(_mm512_max_ps(v[0], v[1]));
    if (*min == 0.0f || *max == 0.0f) {
        __m512 z = _mm512_setzero_ps();
        uint32_t bits = (uint32_t)_mm512_cmp_ps_mask(v[0], z, _CMP_EQ_OQ) |
                        (uint32_t)_mm512_cmp_ps_mask(v[1], z, _CMP_EQ_OQ) << 16;
        float first_zero = x[__builtin_ctz(bits)];
        if (*min == 0.0f)
            *min = first_zero;
        if (*max == 0.0f)
            *max = first_zero;
    }
}

/* roundf() exactly: compare the exact fraction x - trunc(x) with 0.5 (see quant_avx2.h). */
static inline __m512 avx512_round_half_away(__m512 v)
{
    __m512 t = _mm512_roundscale_ps(v, _MM_FROUND_TO_ZERO | _MM_FROUND_NO_EXC);
    __m512 frac = _mm512_abs_ps(_mm512_sub_ps(v, t));
    __m512 step = _mm512_or_ps(_mm512_and_ps(v, _mm512_set1_ps(-0.0f)), _mm512_set1_ps(1.0f));
    __mmask16 up = _mm512_cmp_ps_mask(frac, _mm512_set1_ps(0.5f), _CMP_GE_OQ);
    return _mm512_mask_add_ps(t, up, t, step);
}

/* Low bytes of two vectors of int32 codes, elements 0-15 then 16-31: vpmovdb truncates, which
 * is the x86 float-to-8-bit cast's low byte (quant_trunc_u8). */
static inline __m256i avx512_low_bytes(__m512i lo, __m512i hi)
{
    return _mm256_set_m128i(_mm512_cvtepi32_epi8(hi), _mm512_cvtepi32_epi8(lo));
}

/* trunc(x * id + offset) of a block as 32 bytes; multiply then add, never fused. */
static inline __m256i avx512_block_codes(const __m512 v[2], float id, float offset)
{
    const __m512 vid = _mm512_set1_ps(id), off = _mm512_set1_ps(offset);
    __m512i q0 = _mm512_cvttps_epi32(_mm512_add_ps(_mm512_mul_ps(v[0], vid), off));
    __m512i q1 = _mm512_cvttps_epi32(_mm512_add_ps(_mm512_mul_ps(v[1], vid), off));
    return avx512_low_bytes(q0, q1);
}

/* roundf(x * id) of a block as 32 bytes (Q8_0 and Q8_1). */
static inline __m256i avx512_block_codes_rounded(const __m512 v[2], float id)
{
    const __m512 vid = _mm512_set1_ps(id);
    __m512i q0 = _mm512_cvttps_epi32(avx512_round_half_away(_mm512_mul_ps(v[0], vid)));
    __m512i q1 = _mm512_cvttps_epi32(avx512_round_half_away(_mm512_mul_ps(v[1], vid)));
    return avx512_low_bytes(q0, q1);
}

/* trunc((x - min) * id + offset) of a block as 32 bytes. */
static inline __m256i avx512_block_codes_from_min(const __m512 v[2], float min, float id,
                                                  float offset)
{
    const __m512 vmin = _mm512_set1_ps(min), vid = _mm512_set1_ps(id);
    const __m512 off = _mm512_set1_ps(offset);
    __m512i q0 = _mm512_cvttps_epi32(
        _mm512_add_ps(_mm512_mul_ps(_mm512_sub_ps(v[0], vmin), vid), off));
    __m512i q1 = _mm512_cvttps_epi32(
        _mm512_add_ps(_mm512_mul_ps(_mm512_sub_ps(v[1], vmin), vid), off));
    return avx512_low_bytes(q0, q1);
}

/* Store 32 floats (float)code[j] * d (+ m when add_min), multiply then add. */
static inline void avx512_store_dequant(__m256i codes, float d, float m, bool add_min,
                                        float *dst)
{
    const __m512 vd = _mm512_set1_ps(d), vm = _mm512_set1_ps(m);
    __m512 a = _mm512_cvtepi32_ps(_mm512_cvtepi8_epi32(_mm256_castsi256_si128(codes)));
    __m512 b = _mm512_cvtepi32_ps(_mm512_cvtepi8_epi32(_mm256_extracti128_si256(codes, 1)));
    a = _mm512_mul_ps(a, vd);
    b = _mm512_mul_ps(b, vd);
    if (add_min) {
        a = _mm512_add_ps(a, vm);
        b = _mm512_add_ps(b, vm);
    }
    _mm512_storeu_ps(dst, a);
    _mm512_storeu_ps(dst + 16, b);
}

#endif
