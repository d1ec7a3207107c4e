/* float_avx512.c - F16 and BF16 row conversions with AVX-512; same bits as float_scalar.c. */
#include "quant_avx512.h"

void inf_f16_to_float_avx512(const void *src, float *dst, int64_t n)
{
    const inf_fp16 *h = src;
    int64_t i = 0;
    for (; i + 16 <= n; i += 16)
        _mm512_storeu_ps(dst + i, _mm512_cvtph_ps(_mm256_loadu_si256((const __m256i *)(h + i))));
    inf_f16_to_float_scalar(h + i, dst + i, n - i);
}

void inf_f16_from_float_avx512(const float *src, void *dst, int64_t n)
{
    inf_fp16 *h = dst;
    int64_t i = 0;
    for (; i + 16 <= n; i += 16) {
        __m512 v = _mm512_loadu_ps(src + i);
        /* vcvtps2ph keeps a NaN's payload where ggml writes 0x7E00: leave NaN groups to scalar */
        if (_mm512_cmp_ps_mask(v, v, _CMP_UNORD_Q)) {
            inf_f16_from_float_scalar(src + i, h + i, 16);
            continue;
        }
        __m256i r = _mm512_cvtps_ph(v, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
        _mm256_storeu_si256((__m256i *)(h + i), r);
    }
    inf_f16_from_float_scalar(src + i, h + i, n - i);
}

void inf_bf16_to_float_avx512(const void *src, float *dst, int64_t n)
{
    const inf_bf16 *h = src;
    int64_t i = 0;
    for (; i + 16 <= n; i += 16) {
        __m512i w = _mm512_cvtepu16_epi32(_mm256_loadu_si256((const __m256i *)(h + i)));
        _mm512_storeu_ps(dst + i, _mm512_castsi512_ps(_mm512_slli_epi32(w, 16)));
    }
    inf_bf16_to_float_scalar(h + i, dst + i, n - i);
}

void inf_bf16_from_float_avx512(const float *src, void *dst, int64_t n)
{
    inf_bf16 *h = dst;
    int64_t i = 0;
    for (; i + 16 <= n; i += 16) {
        /* integer round-to-nearest-even as the scalar code: vcvtneps2bf16 flushes denormals */
        __m512i x = _mm512_castps_si512(_mm512_loadu_ps(src + i));
        __m512i lsb = _mm512_and_si512(_mm512_srli_epi32(x, 16), _mm512_set1_epi32(1));
        __m512i rounded = _mm512_srli_epi32(
            _mm512_add_epi32(x, _mm512_add_epi32(lsb, _mm512_set1_epi32(0x7FFF))), 16);
        __mmask16 nan = _mm512_cmpgt_epu32_mask(
            _mm512_and_si512(x, _mm512_set1_epi32(0x7FFFFFFF)), _mm512_set1_epi32(0x7F800000));
        __m512i quiet = _mm512_or_si512(_mm512_srli_epi32(x, 16), _mm512_set1_epi32(0x40));
        __m512i r = _mm512_mask_blend_epi32(nan, rounded, quiet);
        _mm256_storeu_si256((__m256i *)(h + i), _mm512_cvtepi32_epi16(r));
    }
    inf_bf16_from_float_scalar(src + i, h + i, n - i);
}
