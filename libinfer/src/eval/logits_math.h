/* logits_math.h - reductions over a row of logits for the scores of libinfer/src/eval, on the
 * CPU backend's vectorized row kernels (the same exponential as its softmax: within 2 ulp of
 * expf, sums accumulated in double). */
#ifndef LOGITS_MATH_H
#define LOGITS_MATH_H

#include <stdint.h>

/* Largest of x[0..n) (n >= 1). */
float logits_max(const float *x, int32_t n);

/* Smallest of x[0..n) (n >= 1). */
float logits_min(const float *x, int32_t n);

/* Sum of e^(x[i] - shift) over i < n, in double. */
double logits_sum_exp(const float *x, int32_t n, float shift);

/* x[i] = e^x[i] in place, i < n. */
void logits_exp(float *x, int32_t n);

/* Rows go through the kernels in blocks of this many elements (stack buffers). */
enum { LOGITS_BLOCK = 1024 };

#endif
