/* logits_score.h - scoring a group of rows of a decode's logits: each row's score -log p(target)
 * and, when a run compares with a base file, each position's KL-divergence statistics.
 *
 * Two implementations answer the same job:
 *  - on the host (logits_score_cpu.c), from host rows of logits: the reference, and what every
 *    CPU session uses;
 *  - on the device the session decoded on (logits_score_device.c, kernels in
 *    engine/backend/cuda/logits_score.cu), from the session's device logits: only the base rows
 *    (or a compact row's entries) go up and a few numbers per row come back, so a 49152- or
 *    262144-wide row of logits never crosses PCIe.
 * The device computes per row what the host's scorers compute (the maximum and first most likely
 * token, the sum of e^(l - max), the KL-divergence sum); the host then turns those into the
 * statistics with the same functions the CPU scorers use (kld_stats.h), so the two differ only in
 * the order of the floating-point sums. Writing a base file needs the rows on the host, so such a
 * run always scores there. */
#ifndef LOGITS_SCORE_H
#define LOGITS_SCORE_H

#include <stdint.h>

#include <ggtk/inf_eval.h>
#include <ggtk/inf_model.h>

#include "engine/backend/cuda/logits_score.h"
#include "kld_sparse.h"

/* One group of rows to score and where the results go. */
typedef struct score_job {
    int32_t n_vocab;
    int32_t n_rows;
    const inf_token *targets;      /* n_rows: the token each row predicts */
    const uint16_t *llama_rows;    /* comparing with a llama-format base: n_rows rows of
                                      inf_logprob_row_words(n_vocab) words; else NULL */
    const sparse_row *sparse_rows; /* comparing with a compact base: n_rows rows; else NULL */
    double *nll;                   /* n_rows scores */
    inf_kld_stats *kld_slots;      /* comparing: n_rows statistics, each a position's alone */
    float *kld, *p_diff;           /* comparing: n_rows KL-divergences and dp values */
} score_job;

/* Whether the job compares with a base. */
static inline bool score_job_compares(const score_job *job)
{
    return job->llama_rows || job->sparse_rows;
}

/* Score host rows: row r at logits + r * n_vocab, on n_threads OpenMP threads. */
void score_rows_host(const float *logits, const score_job *job, int n_threads);

/* Score rows first_row .. first_row + n_rows - 1 of the session's last decode on its device
 * (session_device_logits()). GGTK_ERR_UNSUPPORTED when the session keeps its logits on the host
 * or the build has no device code; a device failure as the backend reports it ("cuda: ..."). */
ggtk_status score_rows_device(const inf_session *session, int32_t first_row, const score_job *job,
                              ggtk_error *err);

/* Fill row r of `job`'s results from the numbers the device computed for it (top_base: the base's
 * most likely token, for a compact base too), as the CPU scorers would have from the same
 * numbers. */
void score_finish_row(const score_job *job, int32_t r, const cuda_row_score *d);

#endif
