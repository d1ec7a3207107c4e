/* q4_k_scalar.c - reference Q4_K dequantization: 8 sub-blocks of 32 with 6-bit scale and min,
 * x = (d * scale) * q - dmin * min, in ggml's order of operations. */
#include "quant_kblocks.h"
#include "quant_internal.h"

void inf_q4_K_to_float_scalar(const void *src, float *dst, int64_t n)
{
    const block_q4_K *in = src;
    for (int64_t b = 0; b < n / QUANT_KBLOCK; b++, dst += QUANT_KBLOCK) {
        const float d = quant_fp16_to_fp32(in[b].d);
        const float dmin = quant_fp16_to_fp32(in[b].dmin);
        for (int s = 0; s < QUANT_KBLOCK / 32; s++) {
            uint8_t sc, m;
            quant_kscale_min(in[b].scales, s, &sc, &m);
            const float dl = d * (float)sc, ml = dmin * (float)m;
            /* sub-blocks 2p and 2p + 1 share bytes 32p .. 32p + 31: low, then high nibbles */
            const uint8_t *q = in[b].qs + 32 * (s / 2);
            const int shift = 4 * (s % 2);
            for (int l = 0; l < 32; l++)
                dst[32 * s + l] = dl * (float)((q[l] >> shift) & 0x0F) - ml;
        }
    }
}
