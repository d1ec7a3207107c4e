/* kld_sparse.c - see kld_sparse.h. Entries are chosen in two passes over the vocabulary: a
 * histogram of the mass in buckets of 1/16 nat finds the bucket where the cut falls, and only
 * that bucket's tokens are sorted, so a 262,144-token row costs two linear passes. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "kld_sparse.h"
#include "kld_stats.h"
#include "logits_math.h"

enum { N_BUCKETS = (int)(SPARSE_RANGE * 16) };

bool sparse_scratch_init(sparse_scratch *s, int32_t n_vocab)
{
    s->p = malloc((size_t)n_vocab * sizeof *s->p);
    s->cand = malloc((size_t)n_vocab * sizeof *s->cand);
    return s->p && s->cand;
}

void sparse_scratch_free(sparse_scratch *s)
{
    free(s->p);
    free(s->cand);
    memset(s, 0, sizeof *s);
}

/* Bucket of a log-probability: 1/16 nat wide below 0; N_BUCKETS for the ineligible (<= -16). */
static int bucket_of(float log_p)
{
    if (!(log_p > -SPARSE_RANGE))
        return N_BUCKETS;
    return log_p >= 0 ? 0 : (int)(-log_p * 16.0f);
}

/* More probable first, then lower id (qsort_r's comparison; ctx is the probabilities). */
static int by_rank(const void *a, const void *b, void *ctx)
{
    const float *p = ctx;
    const inf_token ia = *(const inf_token *)a, ib = *(const inf_token *)b;
    if (p[ia] != p[ib])
        return p[ia] > p[ib] ? -1 : 1;
    return (ia > ib) - (ia < ib);
}

/* Where the cut falls: whole buckets [0, *cut) are kept, and from bucket *cut (N_BUCKETS: none)
 * the tokens the caller picks by rank. *kept_mass / *kept_count: what the whole buckets hold. */
static void find_cut(const double *mass, const int64_t *count, double total, double epsilon,
                     int64_t max_entries, int *cut, double *kept_mass, int64_t *kept_count)
{
    double kept = 0;
    int64_t n = 0;
    int b = 0;
    for (; b < N_BUCKETS; b++) {
        if (n >= 1 && total - kept <= epsilon)
            break;
        if (count[b] == 0)
            continue;
        if (n + count[b] > max_entries || total - (kept + mass[b]) <= epsilon)
            break; /* this bucket is only partly needed */
        kept += mass[b];
        n += count[b];
    }
    *cut = b;
    *kept_mass = kept;
    *kept_count = n;
}

/* The next code down (one step less likely): a head code's next step, the tail's first step
 * after the last head code. */
static uint16_t code_below(uint16_t code)
{
    if (code >= 0x8000)
        return code < 0xffff ? (uint16_t)(code + 1) : 0;
    return code < 0x7f ? (uint16_t)(code + 1) : code;
}

/* A reader takes the first entry with the largest code as the base's most likely token. Where a
 * lower id rounded to the same code as the true most likely token `top`, that entry is moved
 * one step down (it was within a step of it anyway), so "same top" is exact. */
static void keep_top_first(sparse_row *row, inf_token top)
{
    int32_t at = 0;
    while (at < row->n && row->ids[at] != top)
        at++;
    if (at == row->n)
        return;
    const uint16_t top_code = sparse_code(row->log_p[at]);
    for (int32_t e = 0; e < at; e++)
        if (sparse_code(row->log_p[e]) == top_code)
            row->log_p[e] = sparse_code_value(code_below(top_code));
}

bool sparse_row_choose(const float *log_p, int32_t n_vocab, float log_p_token,
                       const inf_kld_compact_params *params, sparse_scratch *scratch,
                       sparse_row *row)
{
    float *p = scratch->p;
    memcpy(p, log_p, (size_t)n_vocab * sizeof *p);
    logits_exp(p, n_vocab);
    double mass[N_BUCKETS] = {0}, total = 0;
    int64_t count[N_BUCKETS] = {0};
    inf_token top = 0;
    for (int32_t i = 0; i < n_vocab; i++) {
        const int b = bucket_of(log_p[i]);
        top = log_p[i] > log_p[top] ? i : top;
        total += p[i];
        if (b < N_BUCKETS) {
            mass[b] += p[i];
            count[b]++;
        }
    }
    int cut;
    double kept;
    int64_t n;
    find_cut(mass, count, total, params->epsilon, params->max_entries, &cut, &kept, &n);
    /* From the cut bucket, its most likely tokens until the rest is small enough. */
    int32_t n_cand = 0, n_take = 0;
    if (cut < N_BUCKETS) {
        for (int32_t i = 0; i < n_vocab; i++)
            if (bucket_of(log_p[i]) == cut)
                scratch->cand[n_cand++] = i;
        qsort_r(scratch->cand, (size_t)n_cand, sizeof *scratch->cand, by_rank, p);
        while (n_take < n_cand && n < params->max_entries && (n == 0 || total - kept > params->epsilon)) {
            kept += p[scratch->cand[n_take++]];
            n++;
        }
    }
    if (!sparse_row_reserve(row, n > 0 ? (int32_t)n : 1))
        return false;
    /* The last token taken from the cut bucket ranks every token taken before it. */
    const inf_token last = n_take > 0 ? scratch->cand[n_take - 1] : -1;
    double rest = 0;
    int32_t k = 0;
    for (int32_t i = 0; i < n_vocab; i++) {
        const int b = bucket_of(log_p[i]);
        const bool take = b < cut || (b == cut && last >= 0 &&
                                      (p[i] > p[last] || (p[i] == p[last] && i <= last)));
        if (take) {
            row->ids[k] = i;
            row->log_p[k] = sparse_code_value(sparse_code(log_p[i]));
            k++;
        } else {
            rest += p[i];
        }
    }
    if (k == 0) {
        /* Every token below e^-16 (a vocabulary over 8.9 million, nearly flat): the most likely
         * one still stands for the base's choice, its code the lowest there is. */
        row->ids[k] = top;
        row->log_p[k++] = sparse_code_value(sparse_code(log_p[top]));
        rest -= p[top];
    }
    row->n = k;
    row->rest = (float)rest;
    row->log_p_token = log_p_token;
    keep_top_first(row, top);
    return true;
}

double sparse_row_from_logits(const float *logits, int32_t n_vocab, int32_t token,
                              const inf_kld_compact_params *params, float *log_p,
                              sparse_scratch *scratch, sparse_row *row, bool *ok)
{
    const float max_logit = logits_max(logits, n_vocab);
    const float log_sum_exp = (float)log(logits_sum_exp(logits, n_vocab, max_logit));
    for (int32_t i = 0; i < n_vocab; i++)
        log_p[i] = logits[i] - max_logit - log_sum_exp;
    const float nll = max_logit + log_sum_exp - logits[token];
    *ok = sparse_row_choose(log_p, n_vocab, -nll, params, scratch, row);
    return nll;
}

double sparse_kld_token(const float *logits, int32_t n_vocab, const sparse_row *row,
                        int32_t token, inf_kld_stats *stats, float *p_diff_out)
{
    const float max_logit = logits_max(logits, n_vocab);
    int32_t top = 0;
    while (top + 1 < n_vocab && logits[top] != max_logit)
        top++; /* the first most likely token, as a strict > scan finds it */
    const double sum_exp = logits_sum_exp(logits, n_vocab, max_logit);
    const float log_sum_exp = (float)log(sum_exp);
    const float log_norm = max_logit + log_sum_exp;

    const float nll = log_norm - logits[token];
    const float nll_base = -row->log_p_token;
    kld_stats_add_nll(stats, nll, nll_base);

    double kld = 0;
    int32_t top_base = 0;
    for (int32_t e = 0; e < row->n; e++) {
        const float lp = row->log_p[e];
        if (lp > row->log_p[top_base])
            top_base = e;
        kld += expf(lp) * (lp - logits[row->ids[e]] + log_norm);
    }
    return kld_stats_add_divergence(stats, kld, top == row->ids[top_base], nll, nll_base,
                                    p_diff_out);
}
