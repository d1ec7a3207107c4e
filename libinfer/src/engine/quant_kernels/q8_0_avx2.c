/* q8_0_avx2.c - Q8_0 and Q8_1 with AVX2; same bytes and floats as q8_0_scalar.c/q8_1_scalar.c. */
#include "quant_avx2.h"

/* Codes roundf(x * id) of a block as 32 bytes, in element order. */
static __m256i block_codes_q8(const __m256 v[4], float id)
{
    const __m256 vid = _mm256_set1_ps(id);
    __m256i q[4];
    for (int k = 0; k < 4; k++)
        q[k] = _mm256_cvttps_epi32(avx2_round_half_away(_mm256_mul_ps(v[k], vid)));
    return avx2_pack_low_bytes(q[0], q[1], q[2], q[3]);
}

/* Quantize one finite block whose largest |x| is amax into qs (Q8_0 and Q8_1 share the codes);
 * returns the codes, *d the scale. */
static __m256i quantize_block_q8(const __m256 v[4], float amax, int8_t qs[QUANT_BLOCK], float *d)
{
    *d = amax / 127;
    __m256i codes = block_codes_q8(v, quant_inverse_scale(*d));
    _mm256_storeu_si256((__m256i *)qs, codes);
    return codes;
}

void inf_q8_0_from_float_avx2(const float *src, void *dst, int64_t n)
{
    block_q8_0 *out = dst;
    for (int64_t b = 0; b < n / QUANT_BLOCK; b++, src += QUANT_BLOCK) {
        __m256 v[4];
        avx2_load_block(src, v);
        const uint32_t amax = avx2_block_amax_bits(v);
        if (amax >= QUANT_INF_BITS) {
            quant_nan_block(&out[b], sizeof out[b], 1);
            continue;
        }
        float d;
        quantize_block_q8(v, quant_f32_from_bits(amax), out[b].qs, &d);
        out[b].d = quant_fp32_to_fp16(d);
    }
}

void inf_q8_1_from_float_avx2(const float *src, void *dst, int64_t n)
{
    block_q8_1 *out = dst;
    for (int64_t b = 0; b < n / QUANT_BLOCK; b++, src += QUANT_BLOCK) {
        __m256 v[4];
        avx2_load_block(src, v);
        const uint32_t amax = avx2_block_amax_bits(v);
        if (amax >= QUANT_INF_BITS) {
            quant_nan_block(&out[b], sizeof out[b], 2);
            continue;
        }
        float d;
        __m256i codes = quantize_block_q8(v, quant_f32_from_bits(amax), out[b].qs, &d);
        /* sum of the signed bytes: 1 * q pairs to int16, then pairs of those to int32 */
        __m256i pairs = _mm256_maddubs_epi16(_mm256_set1_epi8(1), codes);
        __m256i quads = _mm256_madd_epi16(pairs, _mm256_set1_epi16(1));
        __m128i s = _mm_add_epi32(_mm256_castsi256_si128(quads),
                                  _mm256_extracti128_si256(quads, 1));
        s = _mm_add_epi32(s, _mm_shuffle_epi32(s, 0x4E));
        s = _mm_add_epi32(s, _mm_shuffle_epi32(s, 0xB1));
        out[b].d = quant_fp32_to_fp16(d);
        out[b].s = quant_fp32_to_fp16((float)_mm_cvtsi128_si32(s) * d);
    }
}

void inf_q8_0_to_float_avx2(const void *src, float *dst, int64_t n)
{
    const block_q8_0 *in = src;
    for (int64_t b = 0; b < n / QUANT_BLOCK; b++, dst += QUANT_BLOCK) {
        __m256i codes = _mm256_loadu_si256((const __m256i *)in[b].qs);
        avx2_store_dequant(codes, quant_fp16_to_fp32(in[b].d), 0.0f, false, dst);
    }
}

void inf_q8_1_to_float_avx2(const void *src, float *dst, int64_t n)
{
    const block_q8_1 *in = src;
    for (int64_t b = 0; b < n / QUANT_BLOCK; b++, dst += QUANT_BLOCK) {
        __m256i codes = _mm256_loadu_si256((const __m256i *)in[b].qs);
        avx2_store_dequant(codes, quant_fp16_to_fp32(in[b].d), 0.0f, false, dst);
    }
}
