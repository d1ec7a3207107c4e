/* q5_0_avx2.c - Q5_0 with AVX2; same bytes and floats as q5_0_scalar.c. */
#include "quant_avx2.h"

void inf_q5_0_from_float_avx2(const float *src, void *dst, int64_t n)
{
    block_q5_0 *out = dst;
    for (int64_t b = 0; b < n / QUANT_BLOCK; b++, src += QUANT_BLOCK) {
        __m256 v[4];
        avx2_load_block(src, v);
        const float d = avx2_block_signed_max(src, v, avx2_block_amax(v)) / -16;
        const float id = d != 0.0f ? 1.0f / d : 0.0f;
        out[b].d = quant_fp32_to_fp16(d);
        __m256i codes = _mm256_min_epi8(avx2_block_codes(v, id, 16.5f), _mm256_set1_epi8(31));
        uint32_t qh = avx2_fifth_bits(codes);
        memcpy(out[b].qh, &qh, sizeof qh);
        _mm_storeu_si128((__m128i *)out[b].qs, avx2_pack_nibbles(codes, true));
    }
}

void inf_q5_0_to_float_avx2(const void *src, float *dst, int64_t n)
{
    const block_q5_0 *in = src;
    for (int64_t b = 0; b < n / QUANT_BLOCK; b++, dst += QUANT_BLOCK) {
        uint32_t qh;
        memcpy(&qh, in[b].qh, sizeof qh);
        __m256i codes = _mm256_or_si256(avx2_unpack_nibbles(in[b].qs), avx2_expand_fifth_bits(qh));
        codes = _mm256_sub_epi8(codes, _mm256_set1_epi8(16));
        avx2_store_dequant(codes, quant_fp16_to_fp32(in[b].d), 0.0f, false, dst);
    }
}
