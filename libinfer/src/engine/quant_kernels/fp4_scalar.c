/* fp4_scalar.c - MXFP4 and NVFP4 dequantization: 4-bit E2M1 codes (doubled, from
 * quant_kvalues_fp4) times a half-scale, an E8M0 power of two (MXFP4) or an unsigned E4M3 value
 * per 16 elements (NVFP4). Every product is exact. */
#include "iq_grids.h"
#include "quant_internal.h"
#include "quant_iqblocks.h"

/* Half of 2^(e - 127), the E8M0 scale, halved to undo the doubled code values; exponents 0
 * and 1 give the denormals 2^-128 and 2^-127. 0xFF (NaN in E8M0) reads as 2^127, as in ggml. */
static float e8m0_half(uint8_t e)
{
    return quant_f32_from_bits(e < 2 ? 0x00200000u << e : (uint32_t)(e - 1) << 23);
}

/* Half of an unsigned E4M3 value (4 exponent bits, bias 7, 3 mantissa bits); bit 7 is ignored
 * and 0x7F (NaN) reads as 0, as in ggml. */
static float ue4m3_half(uint8_t x)
{
    if (x == 0 || x == 0x7F)
        return 0.0f;
    const int exponent = (x >> 3) & 0x0F, mantissa = x & 7;
    /* (8 + m) * 2^(e - 11) for normals, m * 2^-10 for denormals: both exact */
    if (exponent == 0)
        return (float)mantissa * 0x1p-10f;
    return (float)(8 + mantissa) * quant_f32_from_bits((uint32_t)(exponent - 11 + 127) << 23);
}

/* dst[j] = value(low nibble of qs[j]) * d, dst[j + half] = value(high nibble) * d. */
static void fp4_nibbles(const uint8_t *qs, int half, float d, float *dst)
{
    for (int j = 0; j < half; j++) {
        dst[j] = (float)quant_kvalues_fp4[qs[j] & 0x0F] * d;
        dst[j + half] = (float)quant_kvalues_fp4[qs[j] >> 4] * d;
    }
}

void inf_mxfp4_to_float_scalar(const void *src, float *dst, int64_t n)
{
    const block_mxfp4 *in = src;
    for (int64_t b = 0; b < n / QUANT_IQ_SMALL_BLOCK; b++, dst += QUANT_IQ_SMALL_BLOCK)
        fp4_nibbles(in[b].qs, QUANT_IQ_SMALL_BLOCK / 2, e8m0_half(in[b].e), dst);
}

void inf_nvfp4_to_float_scalar(const void *src, float *dst, int64_t n)
{
    const block_nvfp4 *in = src;
    for (int64_t b = 0; b < n / QUANT_NVFP4_BLOCK; b++)
        for (int s = 0; s < QUANT_NVFP4_BLOCK / 16; s++, dst += 16)
            fp4_nibbles(in[b].qs + 8 * s, 8, ue4m3_half(in[b].d[s]), dst);
}
