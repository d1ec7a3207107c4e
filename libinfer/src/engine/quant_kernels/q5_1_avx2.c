/* q5_1_avx2.c - Q5_1 with AVX2; same bytes and floats as q5_1_scalar.c. */
#include "quant_avx2.h"

void inf_q5_1_from_float_avx2(const float *src, void *dst, int64_t n)
{
    block_q5_1 *out = dst;
    for (int64_t b = 0; b < n / QUANT_BLOCK; b++, src += QUANT_BLOCK) {
        __m256 v[4];
        avx2_load_block(src, v);
        if (avx2_block_amax_bits(v) >= QUANT_INF_BITS) {
            quant_nan_block(&out[b], sizeof out[b], 2);
            continue;
        }
        float min, max;
        avx2_block_min_max(src, v, &min, &max);
        const float d = (max - min) / 31;
        out[b].d = quant_fp32_to_fp16(d);
        out[b].m = quant_fp32_to_fp16(min);
        __m256i codes = avx2_block_codes_from_min(v, min, quant_inverse_scale(d), 0.5f);
        avx2_store_q5(codes, out[b].qs, out[b].qh); /* uncapped, as ggml */
    }
}

void inf_q5_1_to_float_avx2(const void *src, float *dst, int64_t n)
{
    const block_q5_1 *in = src;
    for (int64_t b = 0; b < n / QUANT_BLOCK; b++, dst += QUANT_BLOCK)
        avx2_store_dequant(avx2_load_q5(in[b].qs, in[b].qh), quant_fp16_to_fp32(in[b].d),
                           quant_fp16_to_fp32(in[b].m), true, dst);
}
