/* legacy_imatrix_quantize.c - importance-weighted quantizers of the 32-element types Q4_0,
 * Q4_1, Q5_0 and Q5_1 (ggml's quantize_row_q*_impl with weights): each block searched with
 * weights qw * sqrt(sigma^2 + x^2), sigma^2 the mean square of the whole row. Without an
 * imatrix these types use their reference kernels (q4_0_scalar.c ...). */
#include "kquant_quantize.h"

static void weights_of(const float *x, const float *qw, float sigma2, float *weight)
{
    for (int j = 0; j < QUANT_BLOCK; j++)
        weight[j] = qw[j] * sqrtf(sigma2 + x[j] * x[j]);
}

static void q4_0_weighted(const float *x, const float *qw, float sigma2, void *block)
{
    block_q4_0 *y = block;
    float weight[QUANT_BLOCK];
    int8_t L[QUANT_BLOCK];
    weights_of(x, qw, sigma2, weight);
    y->d = quant_fp32_to_fp16(kquant_symmetric_search(QUANT_BLOCK, 8, x, L, weight));
    for (int j = 0; j < QUANT_BLOCK / 2; j++)
        y->qs[j] = (uint8_t)(L[j] | (L[j + QUANT_BLOCK / 2] << 4));
}

static void q4_1_weighted(const float *x, const float *qw, float sigma2, void *block)
{
    block_q4_1 *y = block;
    float weight[QUANT_BLOCK], min;
    uint8_t L[QUANT_BLOCK];
    weights_of(x, qw, sigma2, weight);
    const float d = kquant_min_search(QUANT_BLOCK, 15, x, weight, L, &min, -0.9f, 0.05f, 36, false);
    y->d = quant_fp32_to_fp16(d);
    y->m = quant_fp32_to_fp16(-min);
    for (int j = 0; j < QUANT_BLOCK / 2; j++)
        y->qs[j] = (uint8_t)(L[j] | (L[j + QUANT_BLOCK / 2] << 4));
}

static void q5_0_weighted(const float *x, const float *qw, float sigma2, void *block)
{
    block_q5_0 *y = block;
    float weight[QUANT_BLOCK];
    int8_t L[QUANT_BLOCK];
    weights_of(x, qw, sigma2, weight);
    y->d = quant_fp32_to_fp16(kquant_symmetric_search(QUANT_BLOCK, 16, x, L, weight));
    uint32_t qh = 0;
    for (int j = 0; j < QUANT_BLOCK / 2; j++)
        quant_put_q5(y->qs, &qh, j, (uint8_t)L[j], (uint8_t)L[j + QUANT_BLOCK / 2]);
    memcpy(y->qh, &qh, sizeof qh);
}

static void q5_1_weighted(const float *x, const float *qw, float sigma2, void *block)
{
    block_q5_1 *y = block;
    float weight[QUANT_BLOCK], min;
    uint8_t L[QUANT_BLOCK];
    weights_of(x, qw, sigma2, weight);
    const float d = kquant_min_search(QUANT_BLOCK, 31, x, weight, L, &min, -0.9f, 0.05f, 36, false);
    y->d = quant_fp32_to_fp16(d);
    y->m = quant_fp32_to_fp16(-min);
    uint32_t qh = 0;
    for (int j = 0; j < QUANT_BLOCK / 2; j++)
        quant_put_q5(y->qs, &qh, j, L[j], L[j + QUANT_BLOCK / 2]);
    memcpy(y->qh, &qh, sizeof qh);
}

/* The reference kernels, one block at a time, for the fallback. */
static void q4_0_reference(const float *x, void *block)
{
    inf_q4_0_from_float_scalar(x, block, QUANT_BLOCK);
}

static void q4_1_reference(const float *x, void *block)
{
    inf_q4_1_from_float_scalar(x, block, QUANT_BLOCK);
}

static void q5_0_reference(const float *x, void *block)
{
    inf_q5_0_from_float_scalar(x, block, QUANT_BLOCK);
}

static void q5_1_reference(const float *x, void *block)
{
    inf_q5_1_from_float_scalar(x, block, QUANT_BLOCK);
}

#define LEGACY_TYPE(name, block_type, has_min)                                              \
    static const search_quant_type name = {                                                 \
        .block_size = QUANT_BLOCK,                                                          \
        .block_bytes = sizeof(block_type),                                                  \
        .reference = name##_reference,                                                      \
        .weighted = name##_weighted,                                                        \
        .d_offset = 0,                                                                      \
        .min_offset = (has_min) ? 2 : -1,                                                   \
        .uses_row_sigma2 = true,                                                            \
    };                                                                                      \
    int64_t inf_##name##_from_float_imatrix(const float *src, void *dst, int64_t n,         \
                                            const float *imatrix)                           \
    {                                                                                       \
        return search_quantize_weighted(&name, src, dst, n, imatrix);                       \
    }

LEGACY_TYPE(q4_0, block_q4_0, false)
LEGACY_TYPE(q4_1, block_q4_1, true)
LEGACY_TYPE(q5_0, block_q5_0, false)
LEGACY_TYPE(q5_1, block_q5_1, true)
