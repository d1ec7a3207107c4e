/* cpu_gelu.h - GELU (tanh approximation) as ggml's CPU backend computes it (cpu_gelu.c): 0 for
 * x <= -10, x for x >= 10, else the fp16-rounded GELU of x rounded to fp16, from a table. The
 * row kernels of each SIMD level (vec.h) read the same table, so every level gives the same
 * bits. */
#ifndef INF_CPU_GELU_H
#define INF_CPU_GELU_H

#include "engine/quant_kernels/quant_internal.h"

/* The 65536 results indexed by the fp16 bits of x, built on first use (thread-safe). */
const float *cpu_gelu_table(void);

/* gelu(x) read from `table` (cpu_gelu_table()). */
static inline float cpu_gelu(const float *table, float x)
{
    if (x <= -10.0f)
        return 0.0f;
    if (x >= 10.0f)
        return x;
    return table[quant_fp32_to_fp16(x)];
}

/* gelu(x) * up as ggml's GEGLU: 0 for x <= -10 whatever up holds. */
static inline float cpu_geglu(const float *table, float x, float up)
{
    return x <= -10.0f ? 0.0f : cpu_gelu(table, x) * up;
}

#endif
