/* kdequant_x86.h - the bodies of the K-quant dequantizers at one x86 level, written once for
 * AVX2 and AVX-512: kdequant_avx2.c and kdequant_avx512.c each define KDQ_NAME(prefix) (the
 * function name at their level) and KDQ_16 / KDQ_32 (the level's last step, codes times scale
 * minus min, from quant_kdequant_simd.h), then include this file. Each function gives the same
 * floats as its scalar kernel (q*_k_scalar.c). */

/* Q2_K dequantization; the same floats as q2_k_scalar.c. */
void KDQ_NAME(q2_k)(const void *src, float *dst, int64_t n)
{
    const block_q2_K *in = src;
    for (int64_t b = 0; b < n / QUANT_KBLOCK; b++) {
        const float d = quant_fp16_to_fp32(in[b].d);
        const float dmin = quant_fp16_to_fp32(in[b].dmin);
        for (int s = 0; s < QUANT_KBLOCK / 16; s++, dst += 16) {
            const int half = s / 8, pair = (s % 8) / 2;
            const uint8_t *bytes = in[b].qs + 32 * half + 16 * (s % 2);
            const __m128i q = _mm_loadu_si128((const __m128i *)bytes);
            const __m128i codes = _mm_and_si128(_mm_srl_epi16(q, _mm_cvtsi32_si128(2 * pair)),
                                                _mm_set1_epi8(3));
            KDQ_16(codes, d * (float)(in[b].scales[s] & 0x0F),
                   dmin * (float)(in[b].scales[s] >> 4), dst);
        }
    }
}

/* Q3_K dequantization; the same floats as q3_k_scalar.c (the * scale times the code, minus 0,
 * which changes no product, NaN included). */
void KDQ_NAME(q3_k)(const void *src, float *dst, int64_t n)
{
    const block_q3_K *in = src;
    for (int64_t b = 0; b < n / QUANT_KBLOCK; b++) {
        const float d = quant_fp16_to_fp32(in[b].d);
        for (int s = 0; s < QUANT_KBLOCK / 16; s++, dst += 16) {
            const int half = s / 8, pair = (s % 8) / 2, column = 16 * (s % 2);
            const __m128i mask = _mm_set1_epi8((char)(1u << (4 * half + pair)));
            const __m128i q = _mm_loadu_si128((const __m128i *)(in[b].qs + 32 * half + column));
            const __m128i low = _mm_and_si128(_mm_srl_epi16(q, _mm_cvtsi32_si128(2 * pair)),
                                              _mm_set1_epi8(3));
            /* 4 where the high-mask bit is clear */
            const __m128i h = _mm_loadu_si128((const __m128i *)(in[b].hmask + column));
            const __m128i set = _mm_cmpeq_epi8(_mm_and_si128(h, mask), mask);
            const __m128i codes = _mm_sub_epi8(low, _mm_andnot_si128(set, _mm_set1_epi8(4)));
            KDQ_16(codes, d * (float)(quant_q3_kscale(in[b].scales, s) - 32), 0.0f, dst);
        }
    }
}

/* Q4_K dequantization; the same floats as q4_k_scalar.c. */
void KDQ_NAME(q4_k)(const void *src, float *dst, int64_t n)
{
    const block_q4_K *in = src;
    for (int64_t b = 0; b < n / QUANT_KBLOCK; b++, dst += QUANT_KBLOCK) {
        const float d = quant_fp16_to_fp32(in[b].d);
        const float dmin = quant_fp16_to_fp32(in[b].dmin);
        for (int s = 0; s < QUANT_KBLOCK / 32; s++) {
            uint8_t sc, m;
            quant_kscale_min(in[b].scales, s, &sc, &m);
            __m256i codes = kdequant_nibbles(in[b].qs + 32 * (s / 2), 4 * (s % 2));
            KDQ_32(codes, d * (float)sc, dmin * (float)m, dst + 32 * s);
        }
    }
}

/* Q5_K dequantization; the same floats as q5_k_scalar.c. */
void KDQ_NAME(q5_k)(const void *src, float *dst, int64_t n)
{
    const block_q5_K *in = src;
    for (int64_t b = 0; b < n / QUANT_KBLOCK; b++, dst += QUANT_KBLOCK) {
        const float d = quant_fp16_to_fp32(in[b].d);
        const float dmin = quant_fp16_to_fp32(in[b].dmin);
        for (int s = 0; s < QUANT_KBLOCK / 32; s++) {
            uint8_t sc, m;
            quant_kscale_min(in[b].scales, s, &sc, &m);
            __m256i codes = _mm256_or_si256(kdequant_nibbles(in[b].qs + 32 * (s / 2), 4 * (s % 2)),
                                            kdequant_fifth_bits(in[b].qh, s));
            KDQ_32(codes, d * (float)sc, dmin * (float)m, dst + 32 * s);
        }
    }
}

/* Q6_K dequantization; the same floats as q6_k_scalar.c: each * 16 elements' factor d * scale is
 * rounded once, then multiplied by the codes, as there. */
void KDQ_NAME(q6_k)(const void *src, float *dst, int64_t n)
{
    const block_q6_K *in = src;
    for (int64_t b = 0; b < n / QUANT_KBLOCK; b++) {
        const float d = quant_fp16_to_fp32(in[b].d);
        for (int h = 0; h < 2; h++) {
            const int8_t *scales = in[b].scales + 8 * h;
            for (int k = 0; k < 4; k++, dst += 32) {
                __m256i codes = kdequant_q6_codes(in[b].ql + 64 * h, in[b].qh + 32 * h, k);
                /* minus 0: a no-op for every product, NaN included, as the scalar kernel */
                KDQ_16(_mm256_castsi256_si128(codes), d * (float)scales[2 * k], 0.0f, dst);
                KDQ_16(_mm256_extracti128_si256(codes, 1), d * (float)scales[2 * k + 1], 0.0f,
                       dst + 16);
            }
        }
    }
}

/* Q8_K dequantization; the same floats as q8_k_scalar.c (d * q, * minus 0, which changes no
 * product, NaN included). */
void KDQ_NAME(q8_k)(const void *src, float *dst, int64_t n)
{
    const block_q8_K *in = src;
    for (int64_t b = 0; b < n / QUANT_KBLOCK; b++, dst += QUANT_KBLOCK) {
        float d;
        memcpy(&d, &in[b].d, sizeof d);
        for (int j = 0; j < QUANT_KBLOCK; j += 32)
            KDQ_32(_mm256_loadu_si256((const __m256i *)(in[b].qs + j)), d, 0.0f, dst + j);
    }
}
