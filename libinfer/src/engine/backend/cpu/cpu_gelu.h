/* cpu_gelu.h - GELU (tanh approximation) as ggml's CPU backend computes it (cpu_gelu.c): 0 for
 * x <= -10, x for x >= 10, else the fp16-rounded GELU of x rounded to fp16, from a table. */
#ifndef INF_CPU_GELU_H
#define INF_CPU_GELU_H

#include <stdint.h>

/* The 65536 results indexed by the fp16 bits of x, built on first use (thread-safe). */
const float *cpu_gelu_table(void);
/* gelu(x) read from `table` (cpu_gelu_table()). */
float cpu_gelu(const float *table, float x);
/* y[i] = gelu(x[i]); y may be x. */
void cpu_gelu_row(const float *x, float *y, int64_t n);
/* y[i] = gelu(gate[i]) * up[i]; y may be gate or up. */
void cpu_geglu_row(const float *gate, const float *up, float *y, int64_t n);

#endif
