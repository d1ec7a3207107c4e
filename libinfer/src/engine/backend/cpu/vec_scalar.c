/* vec_scalar.c - portable row kernels (the reference for the SIMD versions). */
#include <math.h>

#include "cpu_gelu.h"
#include "cpu_math.h"
#include "vec.h"

static void silu_scalar(const float *x, float *y, int64_t n)
{
    for (int64_t i = 0; i < n; i++)
        y[i] = cpu_silu(x[i]);
}

static void swiglu_scalar(const float *gate, const float *up, float *y, int64_t n)
{
    for (int64_t i = 0; i < n; i++)
        y[i] = cpu_silu(gate[i]) * up[i];
}

static void gelu_scalar(const float *table, const float *x, float *y, int64_t n)
{
    for (int64_t i = 0; i < n; i++)
        y[i] = cpu_gelu(table, x[i]);
}

static void geglu_scalar(const float *table, const float *gate, const float *up, float *y,
                         int64_t n)
{
    for (int64_t i = 0; i < n; i++)
        y[i] = cpu_geglu(table, gate[i], up[i]);
}

static float scale_mask_max_scalar(const float *x, const float *mask, float scale, float *y,
                                   int64_t n)
{
    float max = -INFINITY;
    for (int64_t i = 0; i < n; i++) {
        y[i] = x[i] * scale + (mask ? mask[i] : 0.0f);
        max = y[i] > max ? y[i] : max;
    }
    return max;
}

static double exp_sum_scalar(float *x, float max, int64_t n)
{
    double sum = 0.0;
    for (int64_t i = 0; i < n; i++) {
        x[i] = cpu_expf(x[i] - max);
        sum += x[i];
    }
    return sum;
}

const cpu_vec_kernels cpu_vec_scalar = {silu_scalar,  swiglu_scalar, gelu_scalar, geglu_scalar,
                                        scale_mask_max_scalar, exp_sum_scalar};
