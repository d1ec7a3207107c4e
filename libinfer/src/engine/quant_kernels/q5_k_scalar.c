/* q5_k_scalar.c - reference Q5_K dequantization: Q4_K's scales and mins with a fifth code bit
 * (bit s of qh[l] for element 32 s + l), x = (d * scale) * q - dmin * min. */
#include "quant_kblocks.h"
#include "quant_internal.h"

void inf_q5_K_to_float_scalar(const void *src, float *dst, int64_t n)
{
    const block_q5_K *in = src;
    for (int64_t b = 0; b < n / QUANT_KBLOCK; b++, dst += QUANT_KBLOCK) {
        const float d = quant_fp16_to_fp32(in[b].d);
        const float dmin = quant_fp16_to_fp32(in[b].dmin);
        for (int s = 0; s < QUANT_KBLOCK / 32; s++) {
            uint8_t sc, m;
            quant_kscale_min(in[b].scales, s, &sc, &m);
            const float dl = d * (float)sc, ml = dmin * (float)m;
            const uint8_t *q = in[b].qs + 32 * (s / 2);
            const int shift = 4 * (s % 2);
            for (int l = 0; l < 32; l++) {
                const int code = ((q[l] >> shift) & 0x0F) | (((in[b].qh[l] >> s) & 1) << 4);
                dst[32 * s + l] = dl * (float)code - ml;
            }
        }
    }
}
