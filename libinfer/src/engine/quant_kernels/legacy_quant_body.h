/* legacy_quant_body.h - the Q4_0, Q4_1, Q5_0, Q5_1, Q8_0 and Q8_1 row kernels (quantize and
 * dequantize), written once over the block vocabulary that every x86 level's header provides
 * under its own prefix: <level>_block_vectors, <level>_load_block, <level>_block_amax_bits,
 * <level>_block_signed_max, <level>_block_min_max, <level>_block_codes,
 * <level>_block_codes_from_min, <level>_block_codes_rounded and <level>_store_dequant. The
 * byte-level packing (quant_avx2.h) is the same at every level. Each kernel writes the same bytes
 * and floats as its *_scalar.c reference.
 *
 * Include once, from a file compiled for the level, after defining QUANT_LEVEL as the prefix
 * (avx2 or avx512); the kernels are named inf_<type>_{from,to}_float_<level>. */
#ifndef QUANT_LEVEL
#error "define QUANT_LEVEL (avx2 or avx512) before including legacy_quant_body.h"
#endif

#define QUANT_PASTE_(a, b) a##_##b
#define QUANT_PASTE(a, b) QUANT_PASTE_(a, b)
#define LEVEL(name) QUANT_PASTE(QUANT_LEVEL, name)   /* avx2_load_block */
#define KERNEL(name) QUANT_PASTE(name, QUANT_LEVEL)  /* inf_q4_0_from_float_avx2 */
/* The block helpers below are forced inline: the kernels keep a block in registers. */
#define BLOCK_STEP static inline __attribute__((always_inline))

/* The block of floats at src, loaded; false (after storing the NaN marker block of `bytes` bytes
 * with `halves` fp16 fields) when it holds NaN or Inf. *amax: the bits of its largest |x|. */
BLOCK_STEP bool load_finite_block(const float *src, LEVEL(block_vectors) v, void *out, size_t bytes,
                                  int halves, uint32_t *amax)
{
    LEVEL(load_block)(src, v);
    *amax = LEVEL(block_amax_bits)(v);
    if (*amax < QUANT_INF_BITS)
        return true;
    quant_nan_block(out, bytes, halves);
    return false;
}

/* Q4_0 and Q5_0: the scale (the first element of largest magnitude) / -half into *d, the codes
 * trunc(x / scale + half + 0.5) into *codes (NaN marker stored instead, and false returned, for a
 * non-finite block). half: 8 or 16, the code of 0. */
BLOCK_STEP bool quantize_block_signed(const float *src, void *out, size_t bytes, float half,
                                      inf_fp16 *d, __m256i *codes)
{
    LEVEL(block_vectors) v;
    uint32_t amax;
    if (!load_finite_block(src, v, out, bytes, 1, &amax))
        return false;
    const float scale = LEVEL(block_signed_max)(src, v, amax) / -half;
    *d = quant_fp32_to_fp16(scale);
    *codes = LEVEL(block_codes)(v, quant_inverse_scale(scale), half + 0.5f);
    return true;
}

void KERNEL(inf_q4_0_from_float)(const float *src, void *dst, int64_t n)
{
    block_q4_0 *out = dst;
    for (int64_t b = 0; b < n / QUANT_BLOCK; b++, src += QUANT_BLOCK) {
        __m256i codes;
        if (quantize_block_signed(src, &out[b], sizeof out[b], 8, &out[b].d, &codes))
            avx2_store_q4(codes, out[b].qs);
    }
}

void KERNEL(inf_q4_0_to_float)(const void *src, float *dst, int64_t n)
{
    const block_q4_0 *in = src;
    for (int64_t b = 0; b < n / QUANT_BLOCK; b++, dst += QUANT_BLOCK) {
        __m256i codes = _mm256_sub_epi8(avx2_unpack_nibbles(in[b].qs), _mm256_set1_epi8(8));
        LEVEL(store_dequant)(codes, quant_fp16_to_fp32(in[b].d), 0.0f, false, dst);
    }
}

/* Q4_1 and Q5_1: the scale (max - min) / max_code and the minimum into *d and *m, the codes
 * counted from the minimum into *codes (NaN marker stored instead, and false returned, for a
 * non-finite block). */
BLOCK_STEP bool quantize_block_from_min(const float *src, void *out, size_t bytes, float max_code,
                                        inf_fp16 *d, inf_fp16 *m, __m256i *codes)
{
    LEVEL(block_vectors) v;
    uint32_t amax;
    if (!load_finite_block(src, v, out, bytes, 2, &amax))
        return false;
    float min, max;
    LEVEL(block_min_max)(src, v, &min, &max);
    const float scale = (max - min) / max_code;
    *d = quant_fp32_to_fp16(scale);
    *m = quant_fp32_to_fp16(min);
    *codes = LEVEL(block_codes_from_min)(v, min, quant_inverse_scale(scale), 0.5f);
    return true;
}

void KERNEL(inf_q4_1_from_float)(const float *src, void *dst, int64_t n)
{
    block_q4_1 *out = dst;
    for (int64_t b = 0; b < n / QUANT_BLOCK; b++, src += QUANT_BLOCK) {
        __m256i codes;
        if (quantize_block_from_min(src, &out[b], sizeof out[b], 15, &out[b].d, &out[b].m, &codes))
            avx2_store_q4(codes, out[b].qs);
    }
}

void KERNEL(inf_q4_1_to_float)(const void *src, float *dst, int64_t n)
{
    const block_q4_1 *in = src;
    for (int64_t b = 0; b < n / QUANT_BLOCK; b++, dst += QUANT_BLOCK)
        LEVEL(store_dequant)(avx2_unpack_nibbles(in[b].qs), quant_fp16_to_fp32(in[b].d),
                             quant_fp16_to_fp32(in[b].m), true, dst);
}

void KERNEL(inf_q5_0_from_float)(const float *src, void *dst, int64_t n)
{
    block_q5_0 *out = dst;
    for (int64_t b = 0; b < n / QUANT_BLOCK; b++, src += QUANT_BLOCK) {
        __m256i codes;
        /* MIN(31, (int8_t)code) of the reference: a signed byte minimum */
        if (quantize_block_signed(src, &out[b], sizeof out[b], 16, &out[b].d, &codes))
            avx2_store_q5(_mm256_min_epi8(codes, _mm256_set1_epi8(31)), out[b].qs, out[b].qh);
    }
}

void KERNEL(inf_q5_0_to_float)(const void *src, float *dst, int64_t n)
{
    const block_q5_0 *in = src;
    for (int64_t b = 0; b < n / QUANT_BLOCK; b++, dst += QUANT_BLOCK) {
        __m256i codes = _mm256_sub_epi8(avx2_load_q5(in[b].qs, in[b].qh), _mm256_set1_epi8(16));
        LEVEL(store_dequant)(codes, quant_fp16_to_fp32(in[b].d), 0.0f, false, dst);
    }
}

void KERNEL(inf_q5_1_from_float)(const float *src, void *dst, int64_t n)
{
    block_q5_1 *out = dst;
    for (int64_t b = 0; b < n / QUANT_BLOCK; b++, src += QUANT_BLOCK) {
        __m256i codes;
        if (quantize_block_from_min(src, &out[b], sizeof out[b], 31, &out[b].d, &out[b].m, &codes))
            avx2_store_q5(codes, out[b].qs, out[b].qh); /* uncapped, as ggml */
    }
}

void KERNEL(inf_q5_1_to_float)(const void *src, float *dst, int64_t n)
{
    const block_q5_1 *in = src;
    for (int64_t b = 0; b < n / QUANT_BLOCK; b++, dst += QUANT_BLOCK)
        LEVEL(store_dequant)(avx2_load_q5(in[b].qs, in[b].qh), quant_fp16_to_fp32(in[b].d),
                             quant_fp16_to_fp32(in[b].m), true, dst);
}

/* Q8_0 and Q8_1 share their codes: roundf(x / d) with d = amax / 127. Returns the codes stored
 * in qs (NaN marker stored instead, and false returned, for a non-finite block). */
BLOCK_STEP bool quantize_block_q8(const float *src, void *out, size_t bytes, int halves,
                                  int8_t qs[QUANT_BLOCK], float *d, __m256i *codes)
{
    LEVEL(block_vectors) v;
    uint32_t amax;
    if (!load_finite_block(src, v, out, bytes, halves, &amax))
        return false;
    *d = quant_f32_from_bits(amax) / 127;
    *codes = LEVEL(block_codes_rounded)(v, quant_inverse_scale(*d));
    _mm256_storeu_si256((__m256i *)qs, *codes);
    return true;
}

void KERNEL(inf_q8_0_from_float)(const float *src, void *dst, int64_t n)
{
    block_q8_0 *out = dst;
    for (int64_t b = 0; b < n / QUANT_BLOCK; b++, src += QUANT_BLOCK) {
        float d;
        __m256i codes;
        if (quantize_block_q8(src, &out[b], sizeof out[b], 1, out[b].qs, &d, &codes))
            out[b].d = quant_fp32_to_fp16(d);
    }
}

void KERNEL(inf_q8_1_from_float)(const float *src, void *dst, int64_t n)
{
    block_q8_1 *out = dst;
    for (int64_t b = 0; b < n / QUANT_BLOCK; b++, src += QUANT_BLOCK) {
        float d;
        __m256i codes;
        if (!quantize_block_q8(src, &out[b], sizeof out[b], 2, out[b].qs, &d, &codes))
            continue;
        out[b].d = quant_fp32_to_fp16(d);
        out[b].s = quant_fp32_to_fp16((float)avx2_code_sum(codes) * d);
    }
}

/* Q8_0 and Q8_1 rows: blocks of `stride` bytes, the fp16 scale first, then the codes at `codes`. */
BLOCK_STEP void dequantize_q8(const char *in, size_t stride, size_t codes, float *dst, int64_t n)
{
    for (int64_t b = 0; b < n / QUANT_BLOCK; b++, dst += QUANT_BLOCK, in += stride) {
        uint16_t d;
        memcpy(&d, in, sizeof d);
        LEVEL(store_dequant)(_mm256_loadu_si256((const __m256i *)(in + codes)),
                             quant_fp16_to_fp32(d), 0.0f, false, dst);
    }
}

void KERNEL(inf_q8_0_to_float)(const void *src, float *dst, int64_t n)
{
    dequantize_q8(src, sizeof(block_q8_0), offsetof(block_q8_0, qs), dst, n);
}

void KERNEL(inf_q8_1_to_float)(const void *src, float *dst, int64_t n)
{
    dequantize_q8(src, sizeof(block_q8_1), offsetof(block_q8_1, qs), dst, n);
}

#undef BLOCK_STEP
#undef KERNEL
#undef LEVEL
#undef QUANT_PASTE
#undef QUANT_PASTE_
