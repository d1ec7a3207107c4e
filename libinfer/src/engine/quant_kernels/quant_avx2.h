/* quant_avx2.h - AVX2 building blocks shared by the *_avx2.c and *_avx512.c kernels. Each one
 * reproduces a step of the scalar reference exactly; the comments say why each is exact.
 * Include only from files compiled with -mavx2 -mfma -mf16c. */
#ifndef INF_QUANT_AVX2_H
#define INF_QUANT_AVX2_H

#include <immintrin.h>

#include "quant_internal.h"

/* A 32-element block of floats as vectors (legacy_quant_body.h names it for every level). */
typedef __m256 avx2_block_vectors[4];

static inline __m256 avx2_abs(__m256 v)
{
    return _mm256_andnot_ps(_mm256_set1_ps(-0.0f), v);
}

static inline float avx2_hmax(__m256 v)
{
    __m128 m = _mm_max_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
    m = _mm_max_ps(m, _mm_movehl_ps(m, m));
    m = _mm_max_ss(m, _mm_movehdup_ps(m));
    return _mm_cvtss_f32(m);
}

static inline float avx2_hmin(__m256 v)
{
    __m128 m = _mm_min_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
    m = _mm_min_ps(m, _mm_movehl_ps(m, m));
    m = _mm_min_ss(m, _mm_movehdup_ps(m));
    return _mm_cvtss_f32(m);
}

/* The bits of |x| of 8 elements (sign cleared: -0 becomes +0, as fabsf does). */
static inline __m256i avx2_magnitude_bits(__m256 v)
{
    return _mm256_and_si256(_mm256_castps_si256(v), _mm256_set1_epi32(0x7FFFFFFF));
}

/* All-ones lanes where |v| has the bits in `bits`. */
static inline __m256 avx2_magnitude_is(__m256 v, __m256i bits)
{
    return _mm256_castsi256_ps(_mm256_cmpeq_epi32(avx2_magnitude_bits(v), bits));
}

/* The bits of the block's largest |x|: QUANT_INF_BITS or more when the block holds NaN or Inf
 * (it must then be stored as quant_nan_block before anything else looks at it). */
static inline uint32_t avx2_block_amax_bits(const __m256 v[4])
{
    __m256i m01 = _mm256_max_epi32(avx2_magnitude_bits(v[0]), avx2_magnitude_bits(v[1]));
    __m256i m23 = _mm256_max_epi32(avx2_magnitude_bits(v[2]), avx2_magnitude_bits(v[3]));
    __m256i m = _mm256_max_epi32(m01, m23);
    __m128i h = _mm_max_epi32(_mm256_castsi256_si128(m), _mm256_extracti128_si256(m, 1));
    h = _mm_max_epi32(h, _mm_shuffle_epi32(h, 0x4E));
    h = _mm_max_epi32(h, _mm_shuffle_epi32(h, 0xB1));
    return (uint32_t)_mm_cvtsi128_si32(h);
}

/* Bit j set where element j of the block satisfies `mask` (one __m256 mask per 8 elements). */
static inline uint32_t avx2_block_bits(__m256 m0, __m256 m1, __m256 m2, __m256 m3)
{
    return (uint32_t)_mm256_movemask_ps(m0) | (uint32_t)_mm256_movemask_ps(m1) << 8 |
           (uint32_t)_mm256_movemask_ps(m2) << 16 | (uint32_t)_mm256_movemask_ps(m3) << 24;
}

/* The first element whose magnitude has the bits amax_bits (from avx2_block_amax_bits), as the
 * scalar loop's strict `<` picks it; +0 for an all-zero block (the loop never updates its
 * initial 0.0f, even for -0.0 elements). amax_bits is some element's |x|, so bits is never 0;
 * comparing bits, not floats, reuses the magnitudes avx2_block_amax_bits computed. */
static inline float avx2_block_signed_max(const float *x, const __m256 v[4], uint32_t amax_bits)
{
    if (amax_bits == 0)
        return 0.0f;
    const __m256i a = _mm256_set1_epi32((int)amax_bits);
    uint32_t bits = avx2_block_bits(avx2_magnitude_is(v[0], a), avx2_magnitude_is(v[1], a),
                                    avx2_magnitude_is(v[2], a), avx2_magnitude_is(v[3], a));
    return x[__builtin_ctz(bits)];
}

/* A zero extreme (min or max) must carry the sign of the first zero element, as the scalar
 * loop's strict compares keep it; vector min/max may return either zero. Called only when an
 * extreme of a finite block is zero, so some element is and bits is never 0. */
static inline float avx2_first_zero(const float *x, const __m256 v[4])
{
    __m256 z = _mm256_setzero_ps();
    uint32_t bits = avx2_block_bits(
        _mm256_cmp_ps(v[0], z, _CMP_EQ_OQ), _mm256_cmp_ps(v[1], z, _CMP_EQ_OQ),
        _mm256_cmp_ps(v[2], z, _CMP_EQ_OQ), _mm256_cmp_ps(v[3], z, _CMP_EQ_OQ));
    return x[__builtin_ctz(bits)];
}

/* Minimum and maximum of a finite block with the scalar loop's choice of signed zero. */
static inline void avx2_block_min_max(const float *x, const __m256 v[4], float *min, float *max)
{
    *min = avx2_hmin(_mm256_min_ps(_mm256_min_ps(v[0], v[1]), _mm256_min_ps(v[2], v[3])));
    *max = avx2_hmax(_mm256_max_ps(_mm256_max_ps(v[0], v[1]), _mm256_max_ps(v[2], v[3])));
    if (*min == 0.0f)
        *min = avx2_first_zero(x, v);
    if (*max == 0.0f)
        *max = avx2_first_zero(x, v);
}

/* roundf(): half away from zero. x - trunc(x) is exact in float, so comparing that fraction
 * with 0.5 decides exactly (adding 0.5 and truncating would round 0.49999997 up). Inf and NaN
 * pass through unchanged, as roundf leaves them. */
static inline __m256 avx2_round_half_away(__m256 v)
{
    __m256 t = _mm256_round_ps(v, _MM_FROUND_TO_ZERO | _MM_FROUND_NO_EXC);
    __m256 frac = avx2_abs(_mm256_sub_ps(v, t));
    __m256 step = _mm256_or_ps(_mm256_and_ps(v, _mm256_set1_ps(-0.0f)), _mm256_set1_ps(1.0f));
    __m256 up = _mm256_cmp_ps(frac, _mm256_set1_ps(0.5f), _CMP_GE_OQ);
    return _mm256_add_ps(t, _mm256_and_ps(up, step));
}

/* The low bytes of 32 int32 lanes, in element order: the x86 float-to-8-bit cast keeps the low
 * byte (quant_trunc_u8), so mask first and the unsigned-saturating packs never saturate. */
static inline __m256i avx2_pack_low_bytes(__m256i a, __m256i b, __m256i c, __m256i d)
{
    const __m256i low = _mm256_set1_epi32(0xFF);
    __m256i ab = _mm256_packus_epi32(_mm256_and_si256(a, low), _mm256_and_si256(b, low));
    __m256i cd = _mm256_packus_epi32(_mm256_and_si256(c, low), _mm256_and_si256(d, low));
    __m256i bytes = _mm256_packus_epi16(ab, cd);
    /* the packs interleave 128-bit lanes: dwords come out as a0 b0 c0 d0 a1 b1 c1 d1 */
    return _mm256_permutevar8x32_epi32(bytes, _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7));
}

/* Codes trunc(x * id + offset) of a block, one byte per element in element order. Multiply
 * then add, never fused, as the reference rounds x * id to float first. */
static inline __m256i avx2_block_codes(const __m256 v[4], float id, float offset)
{
    const __m256 vid = _mm256_set1_ps(id), off = _mm256_set1_ps(offset);
    __m256i q[4];
    for (int k = 0; k < 4; k++)
        q[k] = _mm256_cvttps_epi32(_mm256_add_ps(_mm256_mul_ps(v[k], vid), off));
    return avx2_pack_low_bytes(q[0], q[1], q[2], q[3]);
}

/* Codes roundf(x * id) of a block as 32 bytes, in element order (Q8_0 and Q8_1). */
static inline __m256i avx2_block_codes_rounded(const __m256 v[4], float id)
{
    const __m256 vid = _mm256_set1_ps(id);
    __m256i q[4];
    for (int k = 0; k < 4; k++)
        q[k] = _mm256_cvttps_epi32(avx2_round_half_away(_mm256_mul_ps(v[k], vid)));
    return avx2_pack_low_bytes(q[0], q[1], q[2], q[3]);
}

/* The sum of 32 signed codes: 1 * code pairs to int16, then pairs of those to int32. */
static inline int32_t avx2_code_sum(__m256i codes)
{
    __m256i pairs = _mm256_maddubs_epi16(_mm256_set1_epi8(1), codes);
    __m256i quads = _mm256_madd_epi16(pairs, _mm256_set1_epi16(1));
    __m128i s = _mm_add_epi32(_mm256_castsi256_si128(quads), _mm256_extracti128_si256(quads, 1));
    s = _mm_add_epi32(s, _mm_shuffle_epi32(s, 0x4E));
    s = _mm_add_epi32(s, _mm_shuffle_epi32(s, 0xB1));
    return _mm_cvtsi128_si32(s);
}

/* As avx2_block_codes with the minimum subtracted first: trunc((x - min) * id + offset). */
static inline __m256i avx2_block_codes_from_min(const __m256 v[4], float min, float id,
                                                float offset)
{
    const __m256 vmin = _mm256_set1_ps(min), vid = _mm256_set1_ps(id);
    const __m256 off = _mm256_set1_ps(offset);
    __m256i q[4];
    for (int k = 0; k < 4; k++)
        q[k] = _mm256_cvttps_epi32(
            _mm256_add_ps(_mm256_mul_ps(_mm256_sub_ps(v[k], vmin), vid), off));
    return avx2_pack_low_bytes(q[0], q[1], q[2], q[3]);
}

/* 16 bytes: element j's code in the low nibble (kept whole, as the reference ORs it unmasked
 * when `mask_low` is false) and element j + 16's low nibble in the high nibble. */
static inline __m128i avx2_pack_nibbles(__m256i codes, bool mask_low)
{
    __m128i lo = _mm256_castsi256_si128(codes);
    __m128i hi = _mm256_extracti128_si256(codes, 1);
    if (mask_low)
        lo = _mm_and_si128(lo, _mm_set1_epi8(0x0F));
    return _mm_or_si128(lo, _mm_and_si128(_mm_slli_epi16(hi, 4), _mm_set1_epi8((char)0xF0)));
}

/* Bit j = bit 4 of code j: shifting bit 4 to bit 7 of each byte lets movemask collect them. */
static inline uint32_t avx2_fifth_bits(__m256i codes)
{
    return (uint32_t)_mm256_movemask_epi8(_mm256_slli_epi16(codes, 3));
}

/* 32 bytes, byte j = 0x10 when bit j of qh is set: the fifth bit of each Q5 code. */
static inline __m256i avx2_expand_fifth_bits(uint32_t qh)
{
    const __m256i shuffle = _mm256_setr_epi64x(0, 0x0101010101010101LL, 0x0202020202020202LL,
                                               0x0303030303030303LL);
    const __m256i bit = _mm256_set1_epi64x((long long)0x8040201008040201ULL);
    __m256i bytes = _mm256_shuffle_epi8(_mm256_set1_epi32((int)qh), shuffle);
    __m256i set = _mm256_cmpeq_epi8(_mm256_and_si256(bytes, bit), bit);
    return _mm256_and_si256(set, _mm256_set1_epi8(0x10));
}

/* Store 32 floats (float)code[j] * d (+ m when add_min): multiply then add, as the reference. */
static inline void avx2_store_dequant(__m256i codes, float d, float m, bool add_min, float *dst)
{
    const __m256 vd = _mm256_set1_ps(d), vm = _mm256_set1_ps(m);
    __m128i halves[2] = {_mm256_castsi256_si128(codes), _mm256_extracti128_si256(codes, 1)};
    for (int h = 0; h < 2; h++) {
        __m256 a = _mm256_cvtepi32_ps(_mm256_cvtepi8_epi32(halves[h]));
        __m256 b = _mm256_cvtepi32_ps(_mm256_cvtepi8_epi32(_mm_srli_si128(halves[h], 8)));
        a = _mm256_mul_ps(a, vd);
        b = _mm256_mul_ps(b, vd);
        if (add_min) {
            a = _mm256_add_ps(a, vm);
            b = _mm256_add_ps(b, vm);
        }
        _mm256_storeu_ps(dst + 16 * h, a);
        _mm256_storeu_ps(dst + 16 * h + 8, b);
    }
}

/* 32 bytes of 4-bit codes in element order: low nibbles are elements 0-15, high 16-31. */
static inline __m256i avx2_unpack_nibbles(const uint8_t qs[16])
{
    __m128i packed = _mm_loadu_si128((const __m128i *)qs);
    const __m128i low = _mm_set1_epi8(0x0F);
    __m128i lo = _mm_and_si128(packed, low);
    __m128i hi = _mm_and_si128(_mm_srli_epi16(packed, 4), low);
    return _mm256_set_m128i(hi, lo);
}

/* Store a Q4 block's codes: capped at 15 as the reference's MIN(15, (int8_t)code) (a signed
 * byte minimum), then two per byte. */
static inline void avx2_store_q4(__m256i codes, uint8_t qs[QUANT_BLOCK / 2])
{
    codes = _mm256_min_epi8(codes, _mm256_set1_epi8(15));
    _mm_storeu_si128((__m128i *)qs, avx2_pack_nibbles(codes, false));
}

/* Store a Q5 block's codes: low nibbles two per byte, fifth bits in qh. */
static inline void avx2_store_q5(__m256i codes, uint8_t qs[QUANT_BLOCK / 2], uint8_t qh[4])
{
    uint32_t bits = avx2_fifth_bits(codes);
    memcpy(qh, &bits, sizeof bits);
    _mm_storeu_si128((__m128i *)qs, avx2_pack_nibbles(codes, true));
}

/* The 32 five-bit codes of a Q5 block, one byte each in element order. */
static inline __m256i avx2_load_q5(const uint8_t qs[QUANT_BLOCK / 2], const uint8_t qh[4])
{
    uint32_t bits;
    memcpy(&bits, qh, sizeof bits);
    return _mm256_or_si256(avx2_unpack_nibbles(qs), avx2_expand_fifth_bits(bits));
}

/* How far ahead of the block being quantized to prefetch, in floats. The kernels are bound by
 * the latency of streaming the input from memory; the hardware prefetcher alone leaves one core
 * at about half of what it can read. 16 blocks (2 KiB) ahead was the best of 8/16/32/64
 * blocks in tests/bench/bench_quant (about 1.8x single-thread throughput over no prefetch). */
#define QUANT_PREFETCH_FLOATS (QUANT_BLOCK * 16)

/* Prefetch the two cache lines of the block QUANT_PREFETCH_FLOATS ahead; a prefetch past the
 * end of the input is harmless (it never faults). */
static inline void quant_prefetch_ahead(const float *x)
{
    _mm_prefetch((const char *)(x + QUANT_PREFETCH_FLOATS), _MM_HINT_T0);
    _mm_prefetch((const char *)(x + QUANT_PREFETCH_FLOATS + 16), _MM_HINT_T0);
}

static inline void avx2_load_block(const float *x, __m256 v[4])
{
    quant_prefetch_ahead(x);
    for (int k = 0; k < 4; k++)
        v[k] = _mm256_loadu_ps(x + 8 * k);
}

#endif
