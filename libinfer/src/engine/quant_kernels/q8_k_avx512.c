/* q8_k_avx512.c - Q8_K dequantization with AVX-512; the same floats as q8_k_scalar.c (d * q,
 * minus 0, which changes no product, NaN included). */
#include "quant_kdequant_simd.h"

void inf_q8_K_to_float_avx512(const void *src, float *dst, int64_t n)
{
    const block_q8_K *in = src;
    for (int64_t b = 0; b < n / QUANT_KBLOCK; b++, dst += QUANT_KBLOCK) {
        float d;
        memcpy(&d, &in[b].d, sizeof d);
        for (int j = 0; j < QUANT_KBLOCK; j += 32)
            kdequant_avx512_32(_mm256_loadu_si256((const __m256i *)(in[b].qs + j)), d, 0.0f,
                                 dst + j);
    }
}
