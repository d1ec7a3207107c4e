/* float_avx2.c - F16 (F16C) and BF16 row conversions with AVX2; same bits as float_scalar.c. */
#include "quant_avx2.h"

void inf_f16_to_float_avx2(const void *src, float *dst, int64_t n)
{
    const inf_fp16 *h = src;
    int64_t i = 0;
    for (; i + 8 <= n; i += 8) /* exact widening; NaNs come back quiet like the scalar code */
        _mm256_storeu_ps(dst + i, _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)(h + i))));
    inf_f16_to_float_scalar(h + i, dst + i, n - i);
}

void inf_f16_from_float_avx2(const float *src, void *dst, int64_t n)
{
    inf_fp16 *h = dst;
    int64_t i = 0;
    for (; i + 8 <= n; i += 8) {
        __m256 v = _mm256_loadu_ps(src + i);
        /* F16C keeps a NaN's payload where ggml writes 0x7E00: leave NaN groups to scalar */
        if (_mm256_movemask_ps(_mm256_cmp_ps(v, v, _CMP_UNORD_Q))) {
            inf_f16_from_float_scalar(src + i, h + i, 8);
            continue;
        }
        __m128i r = _mm256_cvtps_ph(v, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
        _mm_storeu_si128((__m128i *)(h + i), r);
    }
    inf_f16_from_float_scalar(src + i, h + i, n - i);
}

void inf_bf16_to_float_avx2(const void *src, float *dst, int64_t n)
{
    const inf_bf16 *h = src;
    int64_t i = 0;
    for (; i + 8 <= n; i += 8) {
        __m256i w = _mm256_cvtepu16_epi32(_mm_loadu_si128((const __m128i *)(h + i)));
        _mm256_storeu_ps(dst + i, _mm256_castsi256_ps(_mm256_slli_epi32(w, 16)));
    }
    inf_bf16_to_float_scalar(h + i, dst + i, n - i);
}

/* Round to nearest even on the bits, as the scalar code does; vcvtneps2bf16 would flush
 * denormal inputs to zero. NaN keeps its top half with the quiet bit set. */
static inline __m256i bf16_round8(__m256 v)
{
    __m256i x = _mm256_castps_si256(v);
    __m256i lsb = _mm256_and_si256(_mm256_srli_epi32(x, 16), _mm256_set1_epi32(1));
    __m256i rounded = _mm256_srli_epi32(
        _mm256_add_epi32(x, _mm256_add_epi32(lsb, _mm256_set1_epi32(0x7FFF))), 16);
    __m256i nan = _mm256_cmpgt_epi32(_mm256_and_si256(x, _mm256_set1_epi32(0x7FFFFFFF)),
                                     _mm256_set1_epi32(0x7F800000));
    __m256i quiet = _mm256_or_si256(_mm256_srli_epi32(x, 16), _mm256_set1_epi32(0x40));
    return _mm256_blendv_epi8(rounded, quiet, nan);
}

void inf_bf16_from_float_avx2(const float *src, void *dst, int64_t n)
{
    inf_bf16 *h = dst;
    int64_t i = 0;
    for (; i + 16 <= n; i += 16) {
        __m256i a = bf16_round8(_mm256_loadu_ps(src + i));
        __m256i b = bf16_round8(_mm256_loadu_ps(src + i + 8));
        /* lanes hold 0..0xFFFF, so the unsigned-saturating pack is exact; fix its lane order */
        __m256i packed = _mm256_permute4x64_epi64(_mm256_packus_epi32(a, b), 0xD8);
        _mm256_storeu_si256((__m256i *)(h + i), packed);
    }
    inf_bf16_from_float_scalar(src + i, h + i, n - i);
}
