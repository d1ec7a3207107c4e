/* q1_0_scalar.c - Q1_0 dequantization: one bit per element, x = +d when set and -d when clear. */
#include "quant_internal.h"
#include "quant_iqblocks.h"

void inf_q1_0_to_float_scalar(const void *src, float *dst, int64_t n)
{
    const block_q1_0 *in = src;
    for (int64_t b = 0; b < n / QUANT_Q1_0_BLOCK; b++, dst += QUANT_Q1_0_BLOCK) {
        const float d = quant_fp16_to_fp32(in[b].d);
        for (int j = 0; j < QUANT_Q1_0_BLOCK; j++)
            dst[j] = (in[b].qs[j / 8] >> (j % 8)) & 1 ? d : -d;
    }
}
