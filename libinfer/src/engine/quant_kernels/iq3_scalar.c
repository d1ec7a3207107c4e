/* iq3_scalar.c - IQ3_XXS and IQ3_S dequantization: groups of 4 elements are one point of a
 * codebook of magnitudes, with per-element signs and a scale per 32 elements; ggml's order. */
#include "iq_grids.h"
#include "quant_internal.h"
#include "quant_iqblocks.h"

/* dst[j] = scale * grid[j], negated where bit j of `signs` is set (ggml's multiplication by -1,
 * as compilers emit it). */
static inline void iq3_group(const uint8_t grid[4], unsigned signs, float scale, float *dst)
{
    for (int j = 0; j < 4; j++) {
        const float v = scale * (float)grid[j];
        dst[j] = (signs >> j) & 1 ? -v : v;
    }
}

void inf_iq3_xxs_to_float_scalar(const void *src, float *dst, int64_t n)
{
    const block_iq3_xxs *in = src;
    for (int64_t b = 0; b < n / QUANT_KBLOCK; b++) {
        const float d = quant_fp16_to_fp32(in[b].d);
        const uint8_t *qs = in[b].qs, *scales_and_signs = in[b].qs + QUANT_KBLOCK / 4;
        for (int ib = 0; ib < QUANT_KBLOCK / 32; ib++, qs += 8) {
            const uint32_t aux = quant_load_u32(scales_and_signs + 4 * ib);
            const float db = d * (0.5f + (float)(aux >> 28)) * 0.5f;
            for (int g = 0; g < 4; g++, dst += 8) {
                const uint8_t signs = quant_ksigns_iq2xs[(aux >> (7 * g)) & 127];
                iq3_group(quant_iq3xxs_grid[qs[2 * g]], signs, db, dst);
                iq3_group(quant_iq3xxs_grid[qs[2 * g + 1]], signs >> 4, db, dst + 4);
            }
        }
    }
}

void inf_iq3_s_to_float_scalar(const void *src, float *dst, int64_t n)
{
    const block_iq3_s *in = src;
    for (int64_t b = 0; b < n / QUANT_KBLOCK; b++) {
        const float d = quant_fp16_to_fp32(in[b].d);
        for (int ib = 0; ib < QUANT_KBLOCK / 32; ib++) {
            const int s = (in[b].scales[ib / 2] >> (4 * (ib % 2))) & 0x0F;
            const float db = d * (float)(1 + 2 * s);
            const uint8_t *qs = in[b].qs + 8 * ib, *signs = in[b].signs + 4 * ib;
            const int qh = in[b].qh[ib];
            /* the ninth index bit of grid point k (0..7) of these 32 elements is bit k of qh */
            for (int g = 0; g < 4; g++, dst += 8) {
                const int first = qs[2 * g] | ((qh << (8 - 2 * g)) & 256);
                const int second = qs[2 * g + 1] | ((qh << (7 - 2 * g)) & 256);
                iq3_group(quant_iq3s_grid[first], signs[g], db, dst);
                iq3_group(quant_iq3s_grid[second], signs[g] >> 4, db, dst + 4);
            }
        }
    }
}
