/* q8_k_quantize.c - Q8_K, the 8-bit form activations take when they meet K-quant weights:
 * codes round(-127 x / max) with max the element of largest magnitude (with its sign), d a
 * float, and the sums of each 16 codes precomputed for the dot products. */
#include "kquant_quantize.h"

static void q8_k_block(const float *x, block_q8_K *y)
{
    float max = 0.0f, amax = 0.0f;
    for (int j = 0; j < QUANT_KBLOCK; j++) {
        if (fabsf(x[j]) > amax) {
            amax = fabsf(x[j]);
            max = x[j];
        }
    }
    memset(y, 0, sizeof *y); /* ggml leaves bsums of an all-zero block unwritten; ours are 0 */
    if (amax == 0.0f)
        return;
    const float iscale = -127.0f / max;
    for (int j = 0; j < QUANT_KBLOCK; j++) {
        int v = kquant_nearest_int(iscale * x[j]);
        y->qs[j] = (int8_t)(v < 127 ? v : 127);
    }
    for (int j = 0; j < QUANT_KBLOCK / 16; j++) {
        int sum = 0;
        for (int i = 0; i < 16; i++)
            sum += y->qs[16 * j + i];
        y->bsums[j] = (int16_t)sum;
    }
    y->d = 1 / iscale;
}

/* A super-block holding NaN or +-Inf: d NaN, codes and sums 0, so a dot product with it is
 * NaN (the float counterpart of the fp16 NaN block of the other types). */
static void q8_k_nan_block(block_q8_K *y)
{
    memset(y, 0, sizeof *y);
    y->d = quant_f32_from_bits(0x7FC00000u);
}

void inf_q8_k_from_float_scalar(const float *src, void *dst, int64_t n)
{
    block_q8_K *out = dst;
    for (int64_t b = 0; b < n / QUANT_KBLOCK; b++, src += QUANT_KBLOCK) {
        bool finite = true;
        for (int j = 0; j < QUANT_KBLOCK; j++)
            finite &= fabsf(src[j]) <= FLT_MAX;
        if (finite)
            q8_k_block(src, &out[b]);
        else
            q8_k_nan_block(&out[b]);
    }
}
