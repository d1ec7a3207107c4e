/* q3_k_avx512.c - Q3_K dequantization with AVX-512; the same floats as q3_k_scalar.c (the
 * scale times the code, minus 0, which changes no product, NaN included). */
#include "quant_kdequant_simd.h"

void inf_q3_K_to_float_avx512(const void *src, float *dst, int64_t n)
{
    const block_q3_K *in = src;
    for (int64_t b = 0; b < n / QUANT_KBLOCK; b++) {
        const float d = quant_fp16_to_fp32(in[b].d);
        for (int s = 0; s < QUANT_KBLOCK / 16; s++, dst += 16) {
            const int half = s / 8, pair = (s % 8) / 2, column = 16 * (s % 2);
            const __m128i mask = _mm_set1_epi8((char)(1u << (4 * half + pair)));
            const __m128i q = _mm_loadu_si128((const __m128i *)(in[b].qs + 32 * half + column));
            const __m128i low = _mm_and_si128(_mm_srl_epi16(q, _mm_cvtsi32_si128(2 * pair)),
                                              _mm_set1_epi8(3));
            /* 4 where the high-mask bit is clear */
            const __m128i h = _mm_loadu_si128((const __m128i *)(in[b].hmask + column));
            const __m128i set = _mm_cmpeq_epi8(_mm_and_si128(h, mask), mask);
            const __m128i codes = _mm_sub_epi8(low, _mm_andnot_si128(set, _mm_set1_epi8(4)));
            kdequant_avx512_16(codes, d * (float)(quant_q3_kscale(in[b].scales, s) - 32), 0.0f,
                                 dst);
        }
    }
}
