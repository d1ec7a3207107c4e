/* vec.h - row kernels of softmax, silu, swiglu, gelu and geglu, one version per SIMD
 * level behind a table, as for the matrix product. All versions use the same range reduction and
 * polynomial (cpu_math.h), so they differ from one another only by float rounding: the AVX2 and
 * AVX-512 exponentials fuse the reduction's and the polynomial's multiply-adds, cpu_expf() (the
 * scalar level, and the SIMD versions' tails of n % 8 or n % 16 elements) rounds each product
 * and sum, and exp_sum adds in double in a different order per level. That is the part of the
 * engine, with the float matrix product (fused at the SIMD levels, not at scalar), whose results
 * depend on the level: 8-bit activations amplify it (SmolLM2 Q6_K, 2 chunks: KLD 0.0025 between
 * the AVX2 and AVX-512 levels, 0.0057 between scalar and AVX-512; with cpu_expf and the scalar
 * float product fused the same way all three give identical logits). */
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
