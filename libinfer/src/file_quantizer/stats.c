/* stats.c - the error a conversion adds to a tensor: sums of squares of the values and of their
 * round-trip differences, accumulated per row and folded into RMS and RMSE. A non-finite value
 * makes its sum non-finite, so the same pass finds NaN/Inf. */
#include "stats.h"

#include <math.h>

/* Lanes summed side by side in float within a block, so the compiler can vectorise the loop
 * without reordering a single chain; each block's total is added in double. */
enum { LANES = 16, BLOCK = 256 };

/* The exact-range versions: every term in double, for rows whose float lanes overflowed. */
static double sum_squares_double(const float *x, int64_t n)
{
    double total = 0.0;
    for (int64_t i = 0; i < n; i++)
        total += (double)x[i] * x[i];
    return total;
}

static double sum_squared_diff_double(const float *x, const float *y, int64_t n)
{
    double total = 0.0;
    for (int64_t i = 0; i < n; i++) {
        double d = (double)x[i] - y[i];
        total += d * d;
    }
    return total;
}

double quantize_sum_squares(const float *x, int64_t n)
{
    double total = 0.0;
    int64_t i = 0;
    for (; i + BLOCK <= n; i += BLOCK) {
        float lane[LANES] = {0};
        for (int64_t j = 0; j < BLOCK; j += LANES)
            for (int l = 0; l < LANES; l++)
                lane[l] += x[i + j + l] * x[i + j + l];
        for (int l = 0; l < LANES; l++)
            total += lane[l];
    }
    total += sum_squares_double(x + i, n - i);
    /* Finite values above ~1e19 overflow a float square: only NaN/Inf may make the sum so. */
    return isfinite(total) ? total : sum_squares_double(x, n);
}

double quantize_sum_squared_diff(const float *x, const float *y, int64_t n)
{
    double total = 0.0;
    int64_t i = 0;
    for (; i + BLOCK <= n; i += BLOCK) {
        float lane[LANES] = {0};
        for (int64_t j = 0; j < BLOCK; j += LANES)
            for (int l = 0; l < LANES; l++) {
                float d = x[i + j + l] - y[i + j + l];
                lane[l] += d * d;
            }
        for (int l = 0; l < LANES; l++)
            total += lane[l];
    }
    total += sum_squared_diff_double(x + i, y + i, n - i);
    return isfinite(total) ? total : sum_squared_diff_double(x, y, n);
}

int64_t quantize_first_nonfinite(const float *x, int64_t n)
{
    for (int64_t i = 0; i < n; i++)
        if (!isfinite(x[i]))
            return i;
    return -1;
}

void quantize_stats_finish(inf_quantize_tensor_stats *stats, double sum_squares,
                           double sum_squared_diff, uint64_t n)
{
    stats->rms = n ? sqrt(sum_squares / (double)n) : 0.0;
    stats->rmse = n ? sqrt(sum_squared_diff / (double)n) : 0.0;
    stats->rel_rmse = stats->rms > 0.0 ? stats->rmse / stats->rms : 0.0;
}
