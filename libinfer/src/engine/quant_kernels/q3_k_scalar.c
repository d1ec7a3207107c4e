/* q3_k_scalar.c - reference Q3_K dequantization: 16 sub-blocks of 16 with a 6-bit signed scale
 * each, x = (d * (scale - 32)) * q with q = low 2 bits - 4 when the high-mask bit is clear. */
#include "quant_kblocks.h"
#include "quant_internal.h"

void inf_q3_K_to_float_scalar(const void *src, float *dst, int64_t n)
{
    const block_q3_K *in = src;
    for (int64_t b = 0; b < n / QUANT_KBLOCK; b++, dst += QUANT_KBLOCK) {
        const float d = quant_fp16_to_fp32(in[b].d);
        /* as in Q2_K: sub-block s reads bit pair `pair` of 16 bytes of its half; the high bit
         * of those elements is bit (4 * half + pair) of the matching hmask bytes */
        for (int s = 0; s < QUANT_KBLOCK / 16; s++) {
            const int half = s / 8, pair = (s % 8) / 2, column = 16 * (s % 2);
            const uint8_t mask = (uint8_t)(1u << (4 * half + pair));
            const float dl = d * (float)(quant_q3_kscale(in[b].scales, s) - 32);
            for (int l = 0; l < 16; l++) {
                int q = (in[b].qs[32 * half + column + l] >> (2 * pair)) & 3;
                q -= (in[b].hmask[column + l] & mask) ? 0 : 4;
                dst[16 * s + l] = dl * (float)q;
            }
        }
    }
}
