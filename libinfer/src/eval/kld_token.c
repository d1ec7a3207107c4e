/* kld_token.c - per-position work of a KL-divergence run: quantizing the base model's
 * log-probabilities into a row, and comparing a model's logits with such a row. The arithmetic
 * follows llama-perplexity's types (float per token, double sums) so that both tools print the
 * same digits, and rows are byte-compatible with its --kl-divergence-base files. The loops over
 * the vocabulary run on vector kernels (logits_math.h). */
#include <math.h>
#include <string.h>

#include <ggtk/inf_eval.h>
#include "kld_file.h"
#include "kld_stats.h"
#include "logits_math.h"

/* Round to the nearest integer, ties to even, for 0 <= x < 2^22: adding 1.5 * 2^23 makes the FPU
 * round away the fraction; the integer is then in the low mantissa bits. */
static int nearest_int(float x)
{
    float shifted = x + 12582912.0f;
    int32_t bits;
    memcpy(&bits, &shifted, sizeof bits);
    return (bits & 0x007fffff) - 0x00400000;
}

double inf_logprob_row_encode(const float *logits, int32_t n_vocab, int32_t token, uint16_t *row)
{
    const float max_logit = logits_max(logits, n_vocab);
    float min_logit = logits_min(logits, n_vocab);
    if (min_logit < max_logit - LOGPROB_RANGE)
        min_logit = max_logit - LOGPROB_RANGE;
    const double sum_exp = logits_sum_exp(logits, n_vocab, max_logit);
    const float log_sum_exp = (float)log(sum_exp);
    const float header[2] = {(max_logit - min_logit) / 65535.0f,
                             min_logit - max_logit - log_sum_exp};
    memcpy(row, header, sizeof header);
    uint16_t *q = row + 4;
    const size_t n_words = inf_logprob_row_words(n_vocab) - 4;
    memset(q, 0, n_words * sizeof *q);
    if (header[0] != 0.0f) {
        const float inv_scale = 1.0f / header[0];
        for (int32_t i = 0; i < n_vocab; i++)
            if (logits[i] > min_logit)
                q[i] = (uint16_t)nearest_int(inv_scale * (logits[i] - min_logit));
    }
    const float nll = max_logit + log_sum_exp - logits[token];
    return nll;
}

/* sum_i p_base[i] * (log p_base[i] - log p_Q[i]) with log p_Q[i] = logits[i] - log_norm, over
 * the tokens whose base log-probability is above -16; *top_base receives the first most likely
 * base token. Blocks of the row are decoded, exponentiated by the vector kernel, then summed. */
static double base_divergence(const float *logits, int32_t n_vocab, const uint16_t *q, float scale,
                              float min_log_prob, float log_norm, int32_t *top_base)
{
    float log_p[LOGITS_BLOCK], p[LOGITS_BLOCK];
    float top_log_p = 0.0f;
    double kld = 0.0;
    *top_base = 0;
    for (int32_t i0 = 0; i0 < n_vocab; i0 += LOGITS_BLOCK) {
        const int32_t len = n_vocab - i0 < LOGITS_BLOCK ? n_vocab - i0 : LOGITS_BLOCK;
        for (int32_t j = 0; j < len; j++) {
            log_p[j] = scale * q[i0 + j] + min_log_prob;
            if ((i0 == 0 && j == 0) || log_p[j] > top_log_p) {
                top_log_p = log_p[j];
                *top_base = i0 + j;
            }
        }
        memcpy(p, log_p, (size_t)len * sizeof *p);
        logits_exp(p, len);
        for (int32_t j = 0; j < len; j++)
            if (log_p[j] > -LOGPROB_RANGE)
                kld += p[j] * (log_p[j] - logits[i0 + j] + log_norm);
    }
    return kld;
}

double inf_kld_token(const float *logits, int32_t n_vocab, const uint16_t *row, int32_t token,
                     inf_kld_stats *stats, float *p_diff_out)
{
    const float max_logit = logits_max(logits, n_vocab);
    int32_t top = 0;
    while (top + 1 < n_vocab && logits[top] != max_logit)
        top++; /* the first most likely token, as a strict > scan finds it */
    const double sum_exp = logits_sum_exp(logits, n_vocab, max_logit);
    const float log_sum_exp = (float)log(sum_exp);
    float header[2];
    memcpy(header, row, sizeof header);
    const float scale = header[0], min_log_prob = header[1];
    const uint16_t *q = row + 4;

    const float nll = max_logit + log_sum_exp - logits[token];
    const float nll_base = -(scale * q[token] + min_log_prob);
    kld_stats_add_nll(stats, nll, nll_base);

    int32_t top_base;
    const double kld = base_divergence(logits, n_vocab, q, scale, min_log_prob,
                                       max_logit + log_sum_exp, &top_base);
    return kld_stats_add_divergence(stats, kld, top == top_base, nll, nll_base, p_diff_out);
}

void kld_stats_add_nll(inf_kld_stats *stats, float nll, float nll_base)
{
    stats->sum_nll += nll;
    stats->sum_nll2 += nll * nll;
    stats->sum_nll_base += nll_base;
    stats->sum_nll_base2 += nll_base * nll_base;
    stats->sum_nll_nll_base += nll * nll_base;
}

double kld_stats_add_divergence(inf_kld_stats *stats, double kld, bool same_top, float nll,
                                float nll_base, float *p_diff_out)
{
    stats->sum_kld += kld;
    stats->sum_kld2 += kld * kld;
    stats->count++;
    stats->n_same_top += same_top;

    const float p_diff = expf(-nll) - expf(-nll_base);
    const double p_diff2 = p_diff * p_diff;
    stats->sum_p_diff += p_diff;
    stats->sum_p_diff2 += p_diff2;
    stats->sum_p_diff4 += p_diff2 * p_diff2;
    if (fabsf(p_diff) > stats->max_abs_p_diff)
        stats->max_abs_p_diff = fabsf(p_diff);
    if (p_diff_out)
        *p_diff_out = p_diff;
    return kld;
}

void inf_kld_stats_merge(inf_kld_stats *into, const inf_kld_stats *from)
{
    into->sum_nll += from->sum_nll;
    into->sum_nll2 += from->sum_nll2;
    into->sum_nll_base += from->sum_nll_base;
    into->sum_nll_base2 += from->sum_nll_base2;
    into->sum_nll_nll_base += from->sum_nll_nll_base;
    into->sum_kld += from->sum_kld;
    into->sum_kld2 += from->sum_kld2;
    into->sum_p_diff += from->sum_p_diff;
    into->sum_p_diff2 += from->sum_p_diff2;
    into->sum_p_diff4 += from->sum_p_diff4;
    if (from->max_abs_p_diff > into->max_abs_p_diff)
        into->max_abs_p_diff = from->max_abs_p_diff;
    into->n_same_top += from->n_same_top;
    into->count += from->count;
}
