/* logits_score_cpu.c - the host implementation of logits_score.h: each row scored by the CPU
 * scorers (inf_token_nll, inf_kld_token, sparse_kld_token) on OpenMP threads, into per-row slots
 * the caller sums in row order, so results do not depend on the thread count; and the finishing
 * of a row the device scored, with the same statistics code. */
#include <math.h>
#include <string.h>

#include "kld_stats.h"
#include "logits_score.h"

void score_rows_host(const float *logits, const score_job *job, int n_threads)
{
    const int32_t n_vocab = job->n_vocab;
    const size_t row_words = inf_logprob_row_words(n_vocab);
#pragma omp parallel for schedule(static) num_threads(n_threads)
    for (int32_t r = 0; r < job->n_rows; r++) {
        const float *row = logits + (size_t)r * n_vocab;
        const inf_token target = job->targets[r];
        if (!score_job_compares(job)) {
            job->nll[r] = inf_token_nll(row, n_vocab, target);
            continue;
        }
        inf_kld_stats *slot = &job->kld_slots[r];
        memset(slot, 0, sizeof *slot);
        job->kld[r] = job->sparse_rows
                          ? (float)sparse_kld_token(row, n_vocab, &job->sparse_rows[r], target,
                                                    slot, &job->p_diff[r])
                          : (float)inf_kld_token(row, n_vocab, job->llama_rows + r * row_words,
                                                 target, slot, &job->p_diff[r]);
        job->nll[r] = slot->sum_nll;
    }
}

/* The base's score of the target: from the row's quantized log-probability (llama) or the exact
 * one a compact row stores. */
static float base_nll(const score_job *job, int32_t r)
{
    if (job->sparse_rows)
        return -job->sparse_rows[r].log_p_token;
    const uint16_t *row = job->llama_rows + (size_t)r * inf_logprob_row_words(job->n_vocab);
    float header[2];
    memcpy(header, row, sizeof header);
    return -(header[0] * row[4 + job->targets[r]] + header[1]);
}

void score_finish_row(const score_job *job, int32_t r, const cuda_row_score *d)
{
    if (!score_job_compares(job)) {
        /* inf_token_nll()'s arithmetic: the shifted logit in float, the logarithm in double. */
        const float shifted = d->target_logit - d->max_logit;
        job->nll[r] = -(shifted - log(d->sum_exp));
        return;
    }
    /* inf_kld_token() / sparse_kld_token()'s: the normaliser and the score in float. */
    const float log_sum_exp = (float)log(d->sum_exp);
    const float log_norm = d->max_logit + log_sum_exp;
    const float nll = log_norm - d->target_logit;
    const float nll_base = base_nll(job, r);
    inf_kld_stats *slot = &job->kld_slots[r];
    memset(slot, 0, sizeof *slot);
    kld_stats_add_nll(slot, nll, nll_base);
    job->kld[r] = (float)kld_stats_add_divergence(slot, d->kld, d->top == d->top_base, nll,
                                                  nll_base, &job->p_diff[r]);
    job->nll[r] = slot->sum_nll;
}
