/* q2_k_avx512.c - Q2_K dequantization with AVX-512; the same floats as q2_k_scalar.c. */
#include "quant_kdequant_simd.h"

void inf_q2_K_to_float_avx512(const void *src, float *dst, int64_t n)
{
    const block_q2_K *in = src;
    for (int64_t b = 0; b < n / QUANT_KBLOCK; b++) {
        const float d = quant_fp16_to_fp32(in[b].d);
        const float dmin = quant_fp16_to_fp32(in[b].dmin);
        for (int s = 0; s < QUANT_KBLOCK / 16; s++, dst += 16) {
            const int half = s / 8, pair = (s % 8) / 2;
            const uint8_t *bytes = in[b].qs + 32 * half + 16 * (s % 2);
            const __m128i q = _mm_loadu_si128((const __m128i *)bytes);
            const __m128i codes = _mm_and_si128(_mm_srl_epi16(q, _mm_cvtsi32_si128(2 * pair)),
                                                _mm_set1_epi8(3));
            kdequant_avx512_16(codes, d * (float)(in[b].scales[s] & 0x0F),
                                 dmin * (float)(in[b].scales[s] >> 4), dst);
        }
    }
}
