/* iq2_scalar.c - IQ2_XXS, IQ2_XS and IQ2_S dequantization: groups of 8 elements are one point of
 * a codebook of magnitudes with 8 signs, times a 4-bit sub-block scale; ggml's operation order. */
#include "iq_grids.h"
#include "quant_internal.h"
#include "quant_iqblocks.h"

/* dst[j] = scale * grid[j], negated where bit j of `signs` is set. ggml multiplies by -1, which
 * compilers turn into this negation; the two differ only in the sign of a NaN. */
static inline void iq2_group(const uint8_t grid[8], uint8_t signs, float scale, float *dst)
{
    for (int j = 0; j < 8; j++) {
        const float v = scale * (float)grid[j];
        dst[j] = (signs >> j) & 1 ? -v : v;
    }
}

/* The IQ2 scale of a 4-bit field s: d * (0.5 + s) * 0.25, left to right. */
static inline float iq2_scale(float d, unsigned s)
{
    return d * (0.5f + (float)s) * 0.25f;
}

void inf_iq2_xxs_to_float_scalar(const void *src, float *dst, int64_t n)
{
    const block_iq2_xxs *in = src;
    for (int64_t b = 0; b < n / QUANT_KBLOCK; b++) {
        const float d = quant_fp16_to_fp32(in[b].d);
        const uint8_t *qs = (const uint8_t *)in[b].qs;
        /* per 32 elements: 4 grid-index bytes, then a uint32 of 4 x 7 sign bits and the scale */
        for (int ib = 0; ib < QUANT_KBLOCK / 32; ib++, qs += 8) {
            const uint32_t aux = quant_load_u32(qs + 4);
            const float db = iq2_scale(d, aux >> 28);
            for (int g = 0; g < 4; g++, dst += 8)
                iq2_group(quant_iq2xxs_grid[qs[g]], quant_ksigns_iq2xs[(aux >> (7 * g)) & 127],
                          db, dst);
        }
    }
}

void inf_iq2_xs_to_float_scalar(const void *src, float *dst, int64_t n)
{
    const block_iq2_xs *in = src;
    for (int64_t b = 0; b < n / QUANT_KBLOCK; b++) {
        const float d = quant_fp16_to_fp32(in[b].d);
        const uint8_t *qs = (const uint8_t *)in[b].qs;
        for (int ib = 0; ib < QUANT_KBLOCK / 32; ib++) {
            const float db[2] = {iq2_scale(d, in[b].scales[ib] & 0x0F),
                                 iq2_scale(d, in[b].scales[ib] >> 4)};
            for (int g = 0; g < 4; g++, dst += 8) {
                const uint16_t q = quant_load_u16(qs + 2 * (4 * ib + g));
                iq2_group(quant_iq2xs_grid[q & 511], quant_ksigns_iq2xs[q >> 9], db[g / 2], dst);
            }
        }
    }
}

void inf_iq2_s_to_float_scalar(const void *src, float *dst, int64_t n)
{
    const block_iq2_s *in = src;
    for (int64_t b = 0; b < n / QUANT_KBLOCK; b++) {
        const float d = quant_fp16_to_fp32(in[b].d);
        const uint8_t *signs = in[b].qs + QUANT_KBLOCK / 8;
        for (int ib = 0; ib < QUANT_KBLOCK / 32; ib++) {
            const float db[2] = {iq2_scale(d, in[b].scales[ib] & 0x0F),
                                 iq2_scale(d, in[b].scales[ib] >> 4)};
            for (int g = 0; g < 4; g++, dst += 8) {
                const int index = in[b].qs[4 * ib + g] | ((in[b].qh[ib] << (8 - 2 * g)) & 0x300);
                iq2_group(quant_iq2s_grid[index], signs[4 * ib + g], db[g / 2], dst);
            }
        }
    }
}
