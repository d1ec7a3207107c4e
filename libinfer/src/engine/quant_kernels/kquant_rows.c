/* kquant_rows.c - row drivers of the searching quantizers (see kquant_quantize.h): the NaN
 * block for non-finite input, and the fallback that keeps importance-weighted output finite.
 *
 * Why a fallback: ggml's weighted searches divide by sums of weights and of weighted squares.
 * With finite input they still produce NaN or infinite scales in a few cases (found by
 * tests/quant_kernels/test_kquant_ggml.c against libggml-base): importance entries of NaN, or
 * input so large that sigma^2 + x^2 overflows, where weight * Inf or Inf - Inf gives NaN
 * weights. Only those blocks are redone with the reference search, which ignores the imatrix;
 * every other block is byte for byte ggml's. */
#include "kquant_quantize.h"

static bool block_is_finite(const float *x, int n)
{
    bool finite = true;
    for (int j = 0; j < n; j++)
        finite &= fabsf(x[j]) <= FLT_MAX;
    return finite;
}

static void put_half(uint8_t *block, int offset, inf_fp16 h)
{
    if (offset >= 0)
        memcpy(block + offset, &h, sizeof h);
}

static bool half_is_finite(const uint8_t *block, int offset)
{
    inf_fp16 h = 0;
    if (offset >= 0)
        memcpy(&h, block + offset, sizeof h);
    return (h & 0x7C00) != 0x7C00;
}

static void nan_block(const search_quant_type *t, uint8_t *block)
{
    memset(block, 0, t->block_bytes);
    put_half(block, t->d_offset, 0x7E00);
    put_half(block, t->min_offset, 0x7E00);
}

void search_quantize_reference(const search_quant_type *t, const float *src, void *dst, int64_t n)
{
    uint8_t *out = dst;
    for (int64_t b = 0; b < n / t->block_size; b++, src += t->block_size, out += t->block_bytes) {
        if (block_is_finite(src, t->block_size))
            t->reference(src, out);
        else
            nan_block(t, out);
    }
}

/* ggml's sigma^2 of a legacy row: the mean of x^2 over the row, summed in order. */
static float row_mean_square(const float *x, int64_t n)
{
    float sum_x2 = 0.0f;
    for (int64_t j = 0; j < n; j++)
        sum_x2 += x[j] * x[j];
    return sum_x2 / (float)n;
}

int64_t search_quantize_weighted(const search_quant_type *t, const float *src, void *dst, int64_t n,
                                 const float *imatrix)
{
    const float sigma2 = t->uses_row_sigma2 && n > 0 ? row_mean_square(src, n) : 0.0f;
    uint8_t *out = dst;
    int64_t fallbacks = 0;
    for (int64_t b = 0; b < n / t->block_size; b++) {
        const float *x = src + b * t->block_size;
        uint8_t *block = out + b * (int64_t)t->block_bytes;
        if (!block_is_finite(x, t->block_size)) {
            nan_block(t, block);
            continue;
        }
        t->weighted(x, imatrix + b * t->block_size, sigma2, block);
        if (!half_is_finite(block, t->d_offset) || !half_is_finite(block, t->min_offset)) {
            t->reference(x, block);
            fallbacks++;
        }
    }
    return fallbacks;
}
