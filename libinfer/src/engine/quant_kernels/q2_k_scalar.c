/* q2_k_scalar.c - reference Q2_K dequantization: 16 sub-blocks of 16 with a 4-bit scale and a
 * 4-bit min each, x = (d * scale) * q - dmin * min, in ggml's order of operations. */
#include "quant_kblocks.h"
#include "quant_internal.h"

void inf_q2_K_to_float_scalar(const void *src, float *dst, int64_t n)
{
    const block_q2_K *in = src;
    for (int64_t b = 0; b < n / QUANT_KBLOCK; b++, dst += QUANT_KBLOCK) {
        const float d = quant_fp16_to_fp32(in[b].d);
        const float dmin = quant_fp16_to_fp32(in[b].dmin);
        /* sub-block s covers elements 16 s .. 16 s + 15; its codes are bit pair `pair` of 16
         * consecutive bytes of its half's 32 (sub-blocks alternate between the two 16s) */
        for (int s = 0; s < QUANT_KBLOCK / 16; s++) {
            const int half = s / 8, pair = (s % 8) / 2, offset = 32 * half + 16 * (s % 2);
            const float dl = d * (float)(in[b].scales[s] & 0x0F);
            const float ml = dmin * (float)(in[b].scales[s] >> 4);
            for (int l = 0; l < 16; l++) {
                const int q = (in[b].qs[offset + l] >> (2 * pair)) & 3;
                dst[16 * s + l] = dl * (float)q - ml;
            }
        }
    }
}
