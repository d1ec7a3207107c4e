/* kld_stats.h - adding one scored position to inf_kld_stats, shared by the two base formats'
 * scorers (kld_token.c: llama-perplexity's full rows; kld_sparse.c: the compact rows), so that
 * both accumulate every statistic the same way. */
#ifndef KLD_STATS_H
#define KLD_STATS_H

#include <stdbool.h>

#include <ggtk/inf_eval.h>

/* Add the position's negative log-likelihoods under the model (nll) and under the base. */
void kld_stats_add_nll(inf_kld_stats *stats, float nll, float nll_base);

/* Add the position's divergence `kld`, whether the two top tokens agree, and the difference of
 * the scored token's probabilities (stored in *p_diff_out when not NULL). Returns kld. */
double kld_stats_add_divergence(inf_kld_stats *stats, double kld, bool same_top, float nll,
                                float nll_base, float *p_diff_out);

#endif
