/* iq4_scalar.c - IQ4_NL and IQ4_XS dequantization: 4-bit codes mapped through a non-uniform table
 * of 16 levels, times the block scale (IQ4_NL) or a 6-bit sub-block scale (IQ4_XS). */
#include "iq_grids.h"
#include "quant_internal.h"
#include "quant_iqblocks.h"

/* dst[j] = scale * level(low nibble of qs[j]), dst[j + 16] = scale * level(high nibble). */
static inline void iq4_nibbles(const uint8_t qs[16], float scale, float *dst)
{
    for (int j = 0; j < 16; j++) {
        dst[j] = scale * (float)quant_kvalues_iq4nl[qs[j] & 0x0F];
        dst[j + 16] = scale * (float)quant_kvalues_iq4nl[qs[j] >> 4];
    }
}

void inf_iq4_nl_to_float_scalar(const void *src, float *dst, int64_t n)
{
    const block_iq4_nl *in = src;
    for (int64_t b = 0; b < n / QUANT_IQ_SMALL_BLOCK; b++, dst += QUANT_IQ_SMALL_BLOCK)
        iq4_nibbles(in[b].qs, quant_fp16_to_fp32(in[b].d), dst);
}

void inf_iq4_xs_to_float_scalar(const void *src, float *dst, int64_t n)
{
    const block_iq4_xs *in = src;
    for (int64_t b = 0; b < n / QUANT_KBLOCK; b++) {
        const float d = quant_fp16_to_fp32(in[b].d);
        const uint16_t scales_h = quant_load_u16(&in[b].scales_h);
        for (int ib = 0; ib < QUANT_KBLOCK / 32; ib++, dst += 32) {
            const int low = (in[b].scales_l[ib / 2] >> (4 * (ib % 2))) & 0x0F;
            const int high = (scales_h >> (2 * ib)) & 3;
            iq4_nibbles(in[b].qs + 16 * ib, d * (float)((low | (high << 4)) - 32), dst);
        }
    }
}
