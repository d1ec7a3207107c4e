/* q4_0_avx512.c - Q4_0 with AVX-512; same bytes and floats as q4_0_scalar.c. A block is
 * two 16-lane vectors; the byte-level packing is shared with the AVX2 version. */
#include "quant_avx512.h"

void inf_q4_0_from_float_avx512(const float *src, void *dst, int64_t n)
{
    block_q4_0 *out = dst;
    for (int64_t b = 0; b < n / QUANT_BLOCK; b++, src += QUANT_BLOCK) {
        __m512 v[2];
        avx512_load_block(src, v);
        const uint32_t amax = avx512_block_amax_bits(v);
        if (amax >= QUANT_INF_BITS) {
            quant_nan_block(&out[b], sizeof out[b], 1);
            continue;
        }
        const float d = avx512_block_signed_max(src, v, amax) / -8;
        out[b].d = quant_fp32_to_fp16(d);
        avx2_store_q4(avx512_block_codes(v, quant_inverse_scale(d), 8.5f), out[b].qs);
    }
}

void inf_q4_0_to_float_avx512(const void *src, float *dst, int64_t n)
{
    const block_q4_0 *in = src;
    for (int64_t b = 0; b < n / QUANT_BLOCK; b++, dst += QUANT_BLOCK) {
        __m256i codes = _mm256_sub_epi8(avx2_unpack_nibbles(in[b].qs), _mm256_set1_epi8(8));
        avx512_store_dequant(codes, quant_fp16_to_fp32(in[b].d), 0.0f, false, dst);
    }
}
