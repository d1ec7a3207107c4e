/* vec.h - row kernels of softmax, silu, swiglu, gelu and geglu, one version per SIMD level behind
 * a table, as for the matrix product. Every level computes the same floats bit for bit, so that
 * results do not depend on the CPU (8-bit activations amplify any difference: SmolLM2 Q6_K over 2
 * chunks moved by KLD 0.0025 between levels that rounded differently): the vector exponentials
 * are cpu_expf() (cpu_math.h) operation for operation, fused multiply-adds included; tails past
 * the last full vector use cpu_expf() or masked vector code; exp_sum adds in double in the one
 * order of cpu_exp_sum_lanes(); NaN stays NaN and never becomes a row's maximum; gelu and geglu
 * read ggml's fp16 table (cpu_gelu.h) at every level. */
#ifndef INF_CPU_VEC_H
#define INF_CPU_VEC_H

#include <stdint.h>

typedef struct cpu_vec_kernels {
    /* y[i] = x[i] * sigmoid(x[i]); y may be x. */
    void (*silu)(const float *x, float *y, int64_t n);
    /* y[i] = silu(gate[i]) * up[i]; y may be gate or up. */
    void (*swiglu)(const float *gate, const float *up, float *y, int64_t n);
    /* y[i] = gelu(x[i]) and y[i] = gelu(gate[i]) * up[i] as ggml computes them (cpu_gelu.h);
     * `table` is cpu_gelu_table(); y may be an input. Every level gives the same bits. */
    void (*gelu)(const float *table, const float *x, float *y, int64_t n);
    void (*geglu)(const float *table, const float *gate, const float *up, float *y, int64_t n);
    /* y[i] = x[i] * scale + (mask ? mask[i] : 0); returns the largest y[i] (-INFINITY if n is 0). */
    float (*scale_mask_max)(const float *x, const float *mask, float scale, float *y, int64_t n);
    /* x[i] = e^(x[i] - max) in place; returns the sum of the results, accumulated in double. */
    double (*exp_sum)(float *x, float max, int64_t n);
} cpu_vec_kernels;

/* Kernels of the active SIMD level. Static storage. */
const cpu_vec_kernels *cpu_vec_get(void);

extern const cpu_vec_kernels cpu_vec_scalar;
#if defined(__x86_64__)
extern const cpu_vec_kernels cpu_vec_avx2;
extern const cpu_vec_kernels cpu_vec_avx512;
#endif

#endif
