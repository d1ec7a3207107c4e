/* q8_k_quantize_avx2.c - Q8_K with AVX2 (the AVX-512 level uses it too): the same bytes as
 * q8_k_quantize.c, which it hands the super-blocks it does not take (non-finite, zero, tiny).
 * Activations meeting K-quant weights go through it on every matrix product. */
#include "kquant_quantize.h"
#include "quant_avx2.h"
#include "quant_kblocks.h"

/* The codes of 8 elements for the reciprocal scale iscale, as the scalar Q8_K code rounds them:
 * add 1.5 * 2^23 and take the low mantissa bits, then clamp at 127. */
static inline __m256i q8_k_codes(const float *x, __m256 iscale)
{
    const __m256 shifted = _mm256_add_ps(_mm256_mul_ps(iscale, _mm256_loadu_ps(x)),
                                         _mm256_set1_ps(12582912.0f));
    const __m256i low = _mm256_and_si256(_mm256_castps_si256(shifted), _mm256_set1_epi32(0x007FFFFF));
    return _mm256_min_epi32(_mm256_sub_epi32(low, _mm256_set1_epi32(0x00400000)),
                            _mm256_set1_epi32(127));
}

/* (Vectors are loaded where used, never kept in arrays: GCC spills such arrays in 128-bit halves
 * and the 256-bit reloads then stall store forwarding.) */
void inf_q8_k_from_float_avx2(const float *x, void *dst, int64_t n)
{
    const __m256i order = _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7);
    block_q8_K *out = dst;
    for (int64_t sb = 0; sb < n / QUANT_KBLOCK; sb++) {
        const float *xs = x + sb * QUANT_KBLOCK;
        block_q8_K *y = &out[sb];
        __m256i top = _mm256_setzero_si256();
        for (int e = 0; e < QUANT_KBLOCK; e += 8)
            top = _mm256_max_epi32(top, avx2_magnitude_bits(_mm256_loadu_ps(xs + e)));
        __m128i t = _mm_max_epi32(_mm256_castsi256_si128(top), _mm256_extracti128_si256(top, 1));
        t = _mm_max_epi32(t, _mm_shuffle_epi32(t, 0x4E));
        t = _mm_max_epi32(t, _mm_shuffle_epi32(t, 0xB1));
        const uint32_t amax = (uint32_t)_mm_cvtsi128_si32(t);
        /* Non-finite, zero, or so small that -127 / max overflows: the scalar code's rules. */
        if (amax >= QUANT_INF_BITS || amax < quant_f32_bits(0x1p-120f)) {
            inf_q8_k_from_float_scalar(xs, y, QUANT_KBLOCK);
            continue;
        }
        /* The signed max is the first element of largest magnitude, as the scalar loop's strict
         * compare picks it. */
        const __m256i a = _mm256_set1_epi32((int)amax);
        int first = 0;
        uint32_t hits;
        while (!(hits = (uint32_t)_mm256_movemask_ps(avx2_magnitude_is(_mm256_loadu_ps(xs + first), a))))
            first += 8; /* amax is some element's magnitude: this ends */
        const float iscale = -127.0f / xs[first + __builtin_ctz(hits)];
        const __m256 is = _mm256_set1_ps(iscale);
        for (int e = 0; e < QUANT_KBLOCK; e += 32) {
            /* codes are within [-127, 127] here, so the saturating packs are plain narrowing */
            const __m256i lo = _mm256_packs_epi32(q8_k_codes(xs + e, is), q8_k_codes(xs + e + 8, is));
            const __m256i hi = _mm256_packs_epi32(q8_k_codes(xs + e + 16, is), q8_k_codes(xs + e + 24, is));
            const __m256i w = _mm256_packs_epi16(lo, hi);
            _mm256_storeu_si256((__m256i *)(y->qs + e), _mm256_permutevar8x32_epi32(w, order));
        }
        for (int j = 0; j < QUANT_KBLOCK / 16; j++) {
            int sum = 0;
            for (int i = 0; i < 16; i++)
                sum += y->qs[16 * j + i];
            y->bsums[j] = (int16_t)sum;
        }
        y->d = 1.0f / iscale;
    }
}
