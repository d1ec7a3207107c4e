/* q6_k_avx512.c - Q6_K dequantization with AVX-512; the same floats as q6_k_scalar.c: each
 * 16 elements' factor d * scale is rounded once, then multiplied by the codes, as there. */
#include "quant_kdequant_simd.h"

void inf_q6_K_to_float_avx512(const void *src, float *dst, int64_t n)
{
    const block_q6_K *in = src;
    for (int64_t b = 0; b < n / QUANT_KBLOCK; b++) {
        const float d = quant_fp16_to_fp32(in[b].d);
        for (int h = 0; h < 2; h++) {
            const int8_t *scales = in[b].scales + 8 * h;
            for (int k = 0; k < 4; k++, dst += 32) {
                __m256i codes = kdequant_q6_codes(in[b].ql + 64 * h, in[b].qh + 32 * h, k);
                /* minus 0: a no-op for every product, NaN included, as the scalar kernel */
                kdequant_avx512_16(_mm256_castsi256_si128(codes), d * (float)scales[2 * k],
                                     0.0f, dst);
                kdequant_avx512_16(_mm256_extracti128_si256(codes, 1),
                                     d * (float)scales[2 * k + 1], 0.0f, dst + 16);
            }
        }
    }
}
