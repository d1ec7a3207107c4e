/* tq_scalar.c - TQ1_0 and TQ2_0 (ternary) dequantization: x = (t - 1) * d, t in {0, 1, 2}
 * (the code 3 of TQ2_0 gives 2 d, as in ggml). */
#include "quant_internal.h"
#include "quant_iqblocks.h"

/* Trit n (0 = most significant) of a TQ1_0 byte: the byte is a base-3 fraction in 1/256ths,
 * so multiplying by 3^n (mod 256) shifts digit n to the top and * 3 >> 8 reads it. */
static inline int tq1_trit(uint8_t byte, int n)
{
    static const uint8_t pow3[5] = {1, 3, 9, 27, 81};
    const uint8_t shifted = (uint8_t)(byte * pow3[n]);
    return (shifted * 3) >> 8;
}

/* Digits 0..ndigits-1 of `count` bytes, digit-major: all bytes' digit 0, then digit 1, ... */
static float *tq1_bytes(const uint8_t *bytes, int count, int ndigits, float d, float *dst)
{
    for (int n = 0; n < ndigits; n++)
        for (int m = 0; m < count; m++)
            *dst++ = (float)(tq1_trit(bytes[m], n) - 1) * d;
    return dst;
}

void inf_tq1_0_to_float_scalar(const void *src, float *dst, int64_t n)
{
    const block_tq1_0 *in = src;
    for (int64_t b = 0; b < n / QUANT_KBLOCK; b++) {
        const float d = quant_fp16_to_fp32(in[b].d);
        /* qs: 32 bytes of 5 trits (160 elements), 16 bytes of 5 (80); qh: 4 bytes of 4 (16) */
        dst = tq1_bytes(in[b].qs, 32, 5, d, dst);
        dst = tq1_bytes(in[b].qs + 32, 16, 5, d, dst);
        dst = tq1_bytes(in[b].qh, 4, 4, d, dst);
    }
}

void inf_tq2_0_to_float_scalar(const void *src, float *dst, int64_t n)
{
    const block_tq2_0 *in = src;
    for (int64_t b = 0; b < n / QUANT_KBLOCK; b++) {
        const float d = quant_fp16_to_fp32(in[b].d);
        /* each 32 bytes hold 128 elements: bit pair p of byte m is element 32 p + m */
        for (int j = 0; j < QUANT_KBLOCK / 4; j += 32)
            for (int p = 0; p < 4; p++)
                for (int m = 0; m < 32; m++)
                    *dst++ = (float)(((in[b].qs[j + m] >> (2 * p)) & 3) - 1) * d;
    }
}
