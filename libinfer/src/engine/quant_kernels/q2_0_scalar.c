/* q2_0_scalar.c - Q2_0 dequantization: four 2-bit codes per byte (element j in bit pair j % 4
 * of byte j / 4), x = (q - 1) * d. */
#include "quant_internal.h"
#include "quant_iqblocks.h"

void inf_q2_0_to_float_scalar(const void *src, float *dst, int64_t n)
{
    const block_q2_0 *in = src;
    for (int64_t b = 0; b < n / QUANT_Q2_0_BLOCK; b++, dst += QUANT_Q2_0_BLOCK) {
        const float d = quant_fp16_to_fp32(in[b].d);
        for (int j = 0; j < QUANT_Q2_0_BLOCK; j++)
            dst[j] = (float)(((in[b].qs[j / 4] >> (2 * (j % 4))) & 3) - 1) * d;
    }
}
