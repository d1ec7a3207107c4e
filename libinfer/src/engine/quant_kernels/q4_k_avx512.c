/* q4_k_avx512.c - Q4_K dequantization with AVX-512; the same floats as q4_k_scalar.c. */
#include "quant_kdequant_simd.h"

void inf_q4_K_to_float_avx512(const void *src, float *dst, int64_t n)
{
    const block_q4_K *in = src;
    for (int64_t b = 0; b < n / QUANT_KBLOCK; b++, dst += QUANT_KBLOCK) {
        const float d = quant_fp16_to_fp32(in[b].d);
        const float dmin = quant_fp16_to_fp32(in[b].dmin);
        for (int s = 0; s < QUANT_KBLOCK / 32; s++) {
            uint8_t sc, m;
            quant_kscale_min(in[b].scales, s, &sc, &m);
            __m256i codes = kdequant_nibbles(in[b].qs + 32 * (s / 2), 4 * (s % 2));
            kdequant_avx512_32(codes, d * (float)sc, dmin * (float)m, dst + 32 * s);
        }
    }
}
