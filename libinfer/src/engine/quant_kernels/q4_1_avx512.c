/* q4_1_avx512.c - Q4_1 with AVX-512; same bytes and floats as q4_1_scalar.c. A block is
 * two 16-lane vectors; the byte-level packing is shared with the AVX2 version. */
#include "quant_avx512.h"

void inf_q4_1_from_float_avx512(const float *src, void *dst, int64_t n)
{
    block_q4_1 *out = dst;
    for (int64_t b = 0; b < n / QUANT_BLOCK; b++, src += QUANT_BLOCK) {
        __m512 v[2];
        avx512_load_block(src, v);
        if (avx512_block_amax_bits(v) >= QUANT_INF_BITS) {
            quant_nan_block(&out[b], sizeof out[b], 2);
            continue;
        }
        float min, max;
        avx512_block_min_max(src, v, &min, &max);
        const float d = (max - min) / 15;
        out[b].d = quant_fp32_to_fp16(d);
        out[b].m = quant_fp32_to_fp16(min);
        __m256i codes = avx512_block_codes_from_min(v, min, quant_inverse_scale(d), 0.5f);
        avx2_store_q4(codes, out[b].qs);
    }
}

void inf_q4_1_to_float_avx512(const void *src, float *dst, int64_t n)
{
    const block_q4_1 *in = src;
    for (int64_t b = 0; b < n / QUANT_BLOCK; b++, dst += QUANT_BLOCK) {
        avx512_store_dequant(avx2_unpack_nibbles(in[b].qs), quant_fp16_to_fp32(in[b].d),
                             quant_fp16_to_fp32(in[b].m), true, dst);
    }
}
