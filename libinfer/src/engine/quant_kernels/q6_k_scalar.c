/* q6_k_scalar.c - reference Q6_K dequantization: 16 sub-blocks of 16 with int8 scales,
 * x = (d * scale) * (q - 32), q 6-bit, in ggml's order of operations. */
#include "quant_kblocks.h"
#include "quant_internal.h"

void inf_q6_K_to_float_scalar(const void *src, float *dst, int64_t n)
{
    const block_q6_K *in = src;
    for (int64_t b = 0; b < n / QUANT_KBLOCK; b++, dst += QUANT_KBLOCK) {
        const float d = quant_fp16_to_fp32(in[b].d);
        /* Each half of 128 elements has 64 ql and 32 qh bytes. Element 32 k + l of the half
         * (k 0..3, l 0..31) takes nibble k / 2 of ql[l + 32 (k % 2)] and bit pair k of qh[l]. */
        for (int h = 0; h < 2; h++) {
            const uint8_t *ql = in[b].ql + 64 * h, *qh = in[b].qh + 32 * h;
            const int8_t *scales = in[b].scales + 8 * h;
            float *y = dst + 128 * h;
            for (int k = 0; k < 4; k++)
                for (int l = 0; l < 32; l++) {
                    const int low = (ql[l + 32 * (k % 2)] >> (4 * (k / 2))) & 0x0F;
                    const int q = (low | (((qh[l] >> (2 * k)) & 3) << 4)) - 32;
                    y[32 * k + l] = d * (float)scales[2 * k + l / 16] * (float)q;
                }
        }
    }
}
