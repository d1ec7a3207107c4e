/* stats.h - error statistics of a tensor conversion (stats.c); not public. */
#ifndef INF_QUANTIZE_STATS_H
#define INF_QUANTIZE_STATS_H

#include <ggtk/inf_quantize_file.h>

/* Sum of x[i]^2 (float partial sums of a few hundred terms added in double; exact double terms
 * when those overflow). Non-finite exactly when x holds NaN/Inf. */
double quantize_sum_squares(const float *x, int64_t n);
/* Sum of (x[i] - y[i])^2, computed the same way; non-finite exactly when x or y holds NaN/Inf. */
double quantize_sum_squared_diff(const float *x, const float *y, int64_t n);
/* Index of the first NaN/Inf in x, or -1. */
int64_t quantize_first_nonfinite(const float *x, int64_t n);
/* Fill rms, rmse and rel_rmse from the sums over `n` values. */
void quantize_stats_finish(inf_quantize_tensor_stats *stats, double sum_squares,
                           double sum_squared_diff, uint64_t n);

#endif
