/* q8_0_avx512.c - Q8_0 and Q8_1 with AVX-512; same bytes and floats as the scalar files. */
#include "quant_avx512.h"

/* Codes roundf(x * id) of a block as 32 bytes, in element order. */
static __m256i block_codes_q8(const __m512 v[2], float id)
{
    const __m512 vid = _mm512_set1_ps(id);
    __m512i q0 = _mm512_cvttps_epi32(avx512_round_half_away(_mm512_mul_ps(v[0], vid)));
    __m512i q1 = _mm512_cvttps_epi32(avx512_round_half_away(_mm512_mul_ps(v[1], vid)));
    return avx512_low_bytes(q0, q1);
}

/* Quantize one finite block whose largest |x| is amax into qs (Q8_0 and Q8_1 share the codes);
 * returns the codes, *d the scale. */
static __m256i quantize_block_q8(const __m512 v[2], float amax, int8_t qs[QUANT_BLOCK], float *d)
{
    *d = amax / 127;
    __m256i codes = block_codes_q8(v, quant_inverse_scale(*d));
    _mm256_storeu_si256((__m256i *)qs, codes);
    return codes;
}

void inf_q8_0_from_float_avx512(const float *src, void *dst, int64_t n)
{
    block_q8_0 *out = dst;
    for (int64_t b = 0; b < n / QUANT_BLOCK; b++, src += QUANT_BLOCK) {
        __m512 v[2];
        avx512_load_block(src, v);
        const uint32_t amax = avx512_block_amax_bits(v);
        if (amax >= QUANT_INF_BITS) {
            quant_nan_block(&out[b], sizeof out[b], 1);
            continue;
        }
        float d;
        quantize_block_q8(v, quant_f32_from_bits(amax), out[b].qs, &d);
        out[b].d = quant_fp32_to_fp16(d);
    }
}

void inf_q8_1_from_float_avx512(const float *src, void *dst, int64_t n)
{
    block_q8_1 *out = dst;
    for (int64_t b = 0; b < n / QUANT_BLOCK; b++, src += QUANT_BLOCK) {
        __m512 v[2];
        avx512_load_block(src, v);
        const uint32_t amax = avx512_block_amax_bits(v);
        if (amax >= QUANT_INF_BITS) {
            quant_nan_block(&out[b], sizeof out[b], 2);
            continue;
        }
        float d;
        __m256i codes = quantize_block_q8(v, quant_f32_from_bits(amax), out[b].qs, &d);
        int sum = _mm512_reduce_add_epi32(_mm512_cvtepi8_epi32(_mm256_castsi256_si128(codes))) +
                  _mm512_reduce_add_epi32(_mm512_cvtepi8_epi32(_mm256_extracti128_si256(codes, 1)));
        out[b].d = quant_fp32_to_fp16(d);
        out[b].s = quant_fp32_to_fp16((float)sum * d);
    }
}

void inf_q8_0_to_float_avx512(const void *src, float *dst, int64_t n)
{
    const block_q8_0 *in = src;
    for (int64_t b = 0; b < n / QUANT_BLOCK; b++, dst += QUANT_BLOCK) {
        __m256i codes = _mm256_loadu_si256((const __m256i *)in[b].qs);
        avx512_store_dequant(codes, quant_fp16_to_fp32(in[b].d), 0.0f, false, dst);
    }
}

void inf_q8_1_to_float_avx512(const void *src, float *dst, int64_t n)
{
    const block_q8_1 *in = src;
    for (int64_t b = 0; b < n / QUANT_BLOCK; b++, dst += QUANT_BLOCK) {
        __m256i codes = _mm256_loadu_si256((const __m256i *)in[b].qs);
        avx512_store_dequant(codes, quant_fp16_to_fp32(in[b].d), 0.0f, false, dst);
    }
}
