/* iq1_scalar.c - IQ1_S and IQ1_M dequantization: groups of 8 elements are one point of a grid
 * of {-1, 0, 1} shifted by +-1/8, times an odd 3-bit sub-block multiplier; ggml's order. */
#include "iq_grids.h"
#include "quant_internal.h"
#include "quant_iqblocks.h"

/* The shift of every grid point (ggml's IQ1S_DELTA and IQ1M_DELTA). */
#define IQ1_DELTA 0.125f

/* dst[j] = scale * (grid[j] + delta). */
static inline void iq1_group(const int8_t grid[8], float delta, float scale, float *dst)
{
    for (int j = 0; j < 8; j++)
        dst[j] = scale * ((float)grid[j] + delta);
}

void inf_iq1_s_to_float_scalar(const void *src, float *dst, int64_t n)
{
    const block_iq1_s *in = src;
    for (int64_t b = 0; b < n / QUANT_KBLOCK; b++) {
        const float d = quant_fp16_to_fp32(in[b].d);
        for (int ib = 0; ib < QUANT_KBLOCK / 32; ib++) {
            const uint16_t qh = quant_load_u16(&in[b].qh[ib]);
            const float dl = d * (float)(2 * ((qh >> 12) & 7) + 1);
            const float delta = qh & 0x8000 ? -IQ1_DELTA : IQ1_DELTA;
            for (int g = 0; g < 4; g++, dst += 8) {
                const int index = in[b].qs[4 * ib + g] | (((qh >> (3 * g)) & 7) << 8);
                iq1_group(quant_iq1s_grid[index], delta, dl, dst);
            }
        }
    }
}

void inf_iq1_m_to_float_scalar(const void *src, float *dst, int64_t n)
{
    const block_iq1_m *in = src;
    for (int64_t b = 0; b < n / QUANT_KBLOCK; b++) {
        uint16_t sc[4];
        for (int i = 0; i < 4; i++)
            sc[i] = quant_load_u16(in[b].scales + 2 * i);
        /* the fp16 scale's four nibbles are the top nibbles of the four words, lowest first */
        const inf_fp16 d16 = (inf_fp16)((sc[0] >> 12) | ((sc[1] >> 8) & 0x00F0) |
                                        ((sc[2] >> 4) & 0x0F00) | (sc[3] & 0xF000));
        const float d = quant_fp16_to_fp32(d16);
        for (int ib = 0; ib < QUANT_KBLOCK / 32; ib++) {
            const uint8_t *qs = in[b].qs + 4 * ib, *qh = in[b].qh + 2 * ib;
            const int shift = 6 * (ib % 2);
            const float dl[2] = {d * (float)(2 * ((sc[ib / 2] >> shift) & 7) + 1),
                                 d * (float)(2 * ((sc[ib / 2] >> (shift + 3)) & 7) + 1)};
            /* group g: high index bits and delta sign in nibble g % 2 of qh[g / 2] */
            for (int g = 0; g < 4; g++, dst += 8) {
                const int nibble = (qh[g / 2] >> (4 * (g % 2))) & 0x0F;
                const int index = qs[g] | ((nibble & 7) << 8);
                const float delta = nibble & 8 ? -IQ1_DELTA : IQ1_DELTA;
                iq1_group(quant_iq1s_grid[index], delta, dl[g / 2], dst);
            }
        }
    }
}
