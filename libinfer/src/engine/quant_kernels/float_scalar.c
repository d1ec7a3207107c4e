/* float_scalar.c - reference conversions between float32 rows and F32, F16 and BF16 storage. */
#include "quant_internal.h"

void inf_f32_to_float_copy(const void *src, float *dst, int64_t n)
{
    memcpy(dst, src, (size_t)n * sizeof(float));
}

void inf_f32_from_float_copy(const float *src, void *dst, int64_t n)
{
    memcpy(dst, src, (size_t)n * sizeof(float));
}

void inf_f16_to_float_scalar(const void *src, float *dst, int64_t n)
{
    const inf_fp16 *h = src;
    for (int64_t i = 0; i < n; i++)
        dst[i] = quant_fp16_to_fp32(h[i]);
}

void inf_f16_from_float_scalar(const float *src, void *dst, int64_t n)
{
    inf_fp16 *h = dst;
    for (int64_t i = 0; i < n; i++)
        h[i] = quant_fp32_to_fp16(src[i]);
}

void inf_bf16_to_float_scalar(const void *src, float *dst, int64_t n)
{
    const inf_bf16 *h = src;
    for (int64_t i = 0; i < n; i++)
        dst[i] = quant_bf16_to_fp32(h[i]);
}

void inf_bf16_from_float_scalar(const float *src, void *dst, int64_t n)
{
    inf_bf16 *h = dst;
    for (int64_t i = 0; i < n; i++)
        h[i] = quant_fp32_to_bf16(src[i]);
}
