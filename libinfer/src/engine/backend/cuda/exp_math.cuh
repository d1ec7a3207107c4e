/* exp_math.cuh - the CPU backend's exponential (cpu_expf(), cpu_math.h) and the activations and
 * softmax steps built on it, as host/device functions: the same constants and operations in the
 * same order, the multiply-adds fused exactly where the CPU's are, so that a kernel computes the
 * bits the CPU computes. C11 and CUDA C++; tests/cuda/test_cuda_math.c checks them against the
 * CPU's functions and ops. */
#ifndef INF_CUDA_EXP_MATH_CUH
#define INF_CUDA_EXP_MATH_CUH

#include <stdbool.h>

#include "engine/backend/cpu/cpu_math.h"
#include "float_ops.cuh"

/* cpu_expf(): e^x to about 1 ulp on [-87, 88], 0 below, NaN for NaN. */
static inline INF_CUDA_HD float cuda_expf(float x)
{
    const float round_magic = 12582912.0f; /* 1.5 * 2^23: adding it rounds to an integer */
    const float clamped = x < CPU_EXP_LO ? CPU_EXP_LO : (x > CPU_EXP_HI ? CPU_EXP_HI : x);
    const float shifted = cuda_add(cuda_mul(clamped, CPU_EXP_LOG2E), round_magic);
    const float n = cuda_sub(shifted, round_magic);
    float r = fmaf(-n, CPU_EXP_LN2_HI, clamped);
    r = fmaf(-n, CPU_EXP_LN2_LO, r);
    float p = CPU_EXP_P0;
    p = fmaf(p, r, CPU_EXP_P1);
    p = fmaf(p, r, CPU_EXP_P2);
    p = fmaf(p, r, CPU_EXP_P3);
    p = fmaf(p, r, CPU_EXP_P4);
    p = fmaf(p, r, CPU_EXP_P5);
    p = fmaf(cuda_mul(p, r), r, cuda_add(r, 1.0f));
    /* 2^n from the low mantissa bits of `shifted` (defined for NaN too, unlike a conversion) */
    const int32_t shifted_bits = (int32_t)cuda_float_bits(shifted);
    const uint32_t bits = (uint32_t)((shifted_bits & 0x007fffff) - 0x00400000 + 127) << 23;
    return x < CPU_EXP_LO ? 0.0f : cuda_mul(p, cuda_float_from_bits(bits));
}

/* cpu_silu(): x * sigmoid(x) as x / (1 + e^-x). */
static inline INF_CUDA_HD float cuda_silu(float x)
{
    return cuda_div(x, cuda_add(1.0f, cuda_expf(-x)));
}

/* The keys a softmax row sees, as the CPU's op_soft_max.c decides them: [*first, *first +
 * *visible) of n_kv; with a causal mask query row i1 sees positions up to n_past + i1, and with
 * a window (> 0) only the last `window` of them. The others get weight 0 and are not read. */
static inline INF_CUDA_HD void cuda_softmax_keys(bool causal, int64_t n_past, int64_t window,
                                                 int64_t n_kv, int64_t i1, int64_t *first,
                                                 int64_t *visible)
{
    const int64_t last = causal ? n_past + i1 : n_kv - 1;
    *first = window > 0 && last - window + 1 > 0 ? last - window + 1 : 0;
    *visible = last + 1 - *first;
}

/* One logit before the maximum is taken: x * scale plus the mask value, if there is a mask. */
static inline INF_CUDA_HD float cuda_softmax_logit(float x, float scale, bool has_mask, float mask)
{
    return has_mask ? cuda_add(cuda_mul(x, scale), mask) : cuda_mul(x, scale);
}

/* The factor that turns e^(logit - max) into probabilities: 1 / sum, rounded once to float;
 * 0 when nothing was summed, so that a row whose every key is hidden gives no NaN from it. */
static inline INF_CUDA_HD float cuda_softmax_norm(double sum)
{
    return sum > 0.0 ? (float)(1.0 / sum) : 0.0f;
}

#endif
