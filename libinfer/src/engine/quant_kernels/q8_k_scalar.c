/* q8_k_scalar.c - reference Q8_K dequantization: x = d * q with a float32 d (Q8_K is the form
 * activations take for K-quant products; files do not normally store it). */
#include "quant_kblocks.h"
#include "quant_internal.h"

void inf_q8_K_to_float_scalar(const void *src, float *dst, int64_t n)
{
    const block_q8_K *in = src;
    for (int64_t b = 0; b < n / QUANT_KBLOCK; b++, dst += QUANT_KBLOCK) {
        float d;
        memcpy(&d, &in[b].d, sizeof d);
        for (int j = 0; j < QUANT_KBLOCK; j++)
            dst[j] = d * (float)in[b].qs[j];
    }
}
