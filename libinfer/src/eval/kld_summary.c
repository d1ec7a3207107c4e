/* kld_summary.c - the estimates and percentiles that end a KL-divergence run, with the formulas
 * llama-perplexity prints (uncertainties from the sums of squares, the PPL ratio's from the
 * covariance of the two models' scores). */
#include <math.h>
#include <stdlib.h>

#include <ggtk/inf_eval.h>

const float inf_kld_percentile_fractions[INF_KLD_N_PERCENTILES] = {
    0.999f, 0.990f, 0.950f, 0.900f, 0.750f, 0.500f, 0.250f, 0.100f, 0.050f, 0.010f, 0.001f,
};

/* Mean of `count` values from their sum and sum of squares, and its standard error (0 for ten or
 * fewer values, where llama-perplexity does not estimate one). */
static inf_estimate mean_and_error(double sum, double sum2, int64_t count)
{
    inf_estimate e = {0.0, 0.0};
    if (count < 1)
        return e;
    e.value = sum / (double)count;
    double variance = sum2 / (double)count - e.value * e.value;
    e.error = variance > 0 && count > 10 ? sqrt(variance / (double)(count - 1)) : 0.0;
    return e;
}

/* Square root of a variance computed as a difference, which rounding can leave slightly below
 * 0 when the two models agree (the uncertainty is then 0, not NaN). */
static double sqrt_variance(double variance) { return variance > 0 ? sqrt(variance) : 0.0; }

/* Covariance of the means of two series (0 below ten values). */
static double covariance(double sum_a, double sum_b, double sum_ab, int64_t count)
{
    if (count < 10)
        return 0.0;
    double n = (double)count;
    return (sum_ab / n - (sum_a / n) * (sum_b / n)) / (n - 1);
}

inf_kld_summary inf_kld_estimates(const inf_kld_stats *s)
{
    inf_kld_summary r = {0};
    r.count = s->count;
    if (s->count < 1)
        return r;
    inf_estimate log_ppl = mean_and_error(s->sum_nll, s->sum_nll2, s->count);
    inf_estimate log_ppl_base = mean_and_error(s->sum_nll_base, s->sum_nll_base2, s->count);
    double cov = covariance(s->sum_nll, s->sum_nll_base, s->sum_nll_nll_base, s->count);

    r.ppl.value = exp(log_ppl.value);
    r.ppl.error = r.ppl.value * log_ppl.error;
    r.ppl_base.value = exp(log_ppl_base.value);
    r.ppl_base.error = r.ppl_base.value * log_ppl_base.error;
    r.log_ppl_correlation = cov / (log_ppl.error * log_ppl_base.error);

    r.log_ppl_ratio.value = log_ppl.value - log_ppl_base.value;
    r.log_ppl_ratio.error = sqrt_variance(log_ppl.error * log_ppl.error +
                                          log_ppl_base.error * log_ppl_base.error - 2.0 * cov);
    r.ppl_ratio.value = exp(r.log_ppl_ratio.value);
    r.ppl_ratio.error = r.ppl_ratio.value * r.log_ppl_ratio.error;

    double ppl_cov = r.ppl.value * r.ppl_base.value * cov;
    r.ppl_diff.value = r.ppl.value - r.ppl_base.value;
    r.ppl_diff.error = sqrt_variance(r.ppl.error * r.ppl.error +
                                     r.ppl_base.error * r.ppl_base.error - 2.0 * ppl_cov);

    r.kld = mean_and_error(s->sum_kld, s->sum_kld2, s->count);
    r.p_diff = mean_and_error(s->sum_p_diff, s->sum_p_diff2, s->count);
    inf_estimate mse = mean_and_error(s->sum_p_diff2, s->sum_p_diff4, s->count);
    r.rms_p_diff.value = sqrt(mse.value);
    r.rms_p_diff.error = r.rms_p_diff.value > 0 ? 0.5 / r.rms_p_diff.value * mse.error : 0.0;

    r.same_top.value = (double)s->n_same_top / (double)s->count;
    r.same_top.error = s->count > 1 ? sqrt(r.same_top.value * (1.0 - r.same_top.value) /
                                           (double)(s->count - 1))
                                    : 0.0;
    return r;
}

static int compare_float(const void *a, const void *b)
{
    float x = *(const float *)a, y = *(const float *)b;
    return (x > y) - (x < y);
}

/* Linear interpolation between the two sorted values around `fraction`, llama-perplexity's
 * definition; the median is the mean of the two middle values for an even count. */
static float percentile(const float *sorted, size_t n, float fraction)
{
    if (fraction == 0.5f)
        return n % 2 == 0 ? 0.5f * (sorted[n / 2] + sorted[n / 2 - 1]) : sorted[n / 2];
    float p = fraction * (float)(n - 1);
    size_t i = (size_t)p;
    p -= (float)i;
    size_t j = i + 1 < n ? i + 1 : n - 1;
    return (1 - p) * sorted[i] + p * sorted[j];
}

inf_kld_summary inf_kld_summarize(const inf_kld_stats *stats, float *kld, float *p_diff, size_t n)
{
    inf_kld_summary r = inf_kld_estimates(stats);
    if (n == 0)
        return r;
    qsort(kld, n, sizeof *kld, compare_float);
    qsort(p_diff, n, sizeof *p_diff, compare_float);
    r.kld_min = kld[0];
    r.kld_max = kld[n - 1];
    r.p_diff_min = p_diff[0];
    r.p_diff_max = p_diff[n - 1];
    for (int i = 0; i < INF_KLD_N_PERCENTILES; i++) {
        r.kld_percentile[i] = percentile(kld, n, inf_kld_percentile_fractions[i]);
        r.p_diff_percentile[i] = percentile(p_diff, n, inf_kld_percentile_fractions[i]);
    }
    return r;
}
