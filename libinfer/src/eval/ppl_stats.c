/* ppl_stats.c - the score of one token and the perplexity of many, with the precision choices
 * of llama-perplexity (float logits, double sums) so that the printed digits agree. */
#include <math.h>

#include <ggtk/inf_eval.h>
#include "logits_math.h"

double inf_token_nll(const float *logits, int32_t n_vocab, int32_t token)
{
    const float max_logit = logits_max(logits, n_vocab);
    const double sum_exp = logits_sum_exp(logits, n_vocab, max_logit);
    const float shifted = logits[token] - max_logit;
    return -(shifted - log(sum_exp));
}

void inf_ppl_stats_add(inf_ppl_stats *stats, double nll)
{
    stats->sum_nll += nll;
    stats->sum_nll2 += nll * nll;
    stats->count++;
}

double inf_ppl_stats_ppl(const inf_ppl_stats *stats)
{
    if (stats->count == 0)
        return NAN;
    return exp(stats->sum_nll / (double)stats->count);
}

double inf_ppl_stats_error(const inf_ppl_stats *stats)
{
    if (stats->count < 2)
        return NAN;
    const double mean = stats->sum_nll / (double)stats->count;
    const double variance = stats->sum_nll2 / (double)stats->count - mean * mean;
    if (!(variance > 0))
        return NAN;
    return sqrt(variance / (double)(stats->count - 1)) * exp(mean);
}
