/* vec_scalar.c - portable row kernels: the reference the SIMD versions are tested against, bit for
 * bit (same exponential, same order of the softmax sum, see cpu_math.h). */
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
        y[i] = mask ? x[i] * scale + mask[i] : x[i] * scale;
        /* NaN never becomes the maximum, as at the SIMD levels. */
        max = y[i] > max ? y[i] : max;
    }
    return max;
}

static double exp_sum_scalar(float *x, float max, int64_t n)
{
    double lanes[CPU_EXP_SUM_LANES] = {0};
    int64_t i = 0;
    for (; i + CPU_EXP_SUM_LANES <= n; i += CPU_EXP_SUM_LANES) {
        for (int l = 0; l < CPU_EXP_SUM_LANES; l++) {
            x[i + l] = cpu_expf(x[i + l] - max);
            lanes[l] += x[i + l];
        }
    }
    double sum = cpu_exp_sum_lanes(lanes);
    for (; i < n; i++) {
        x[i] = cpu_expf(x[i] - max);
        sum += x[i];
    }
    return sum;
}

const cpu_vec_kernels cpu_vec_scalar = {silu_scalar,  swiglu_scalar, gelu_scalar, geglu_scalar,
                                        scale_mask_max_scalar, exp_sum_scalar};
