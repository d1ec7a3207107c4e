/* logits_score.h - scoring rows of logits where a CUDA backend computed them (logits_score.cu),
 * for the perplexity and KL-divergence scorers of libinfer/src/eval (eval/logits_score.h): a
 * 49152- or 262144-wide row stays in device memory; the base rows (or a compact row's entries) go
 * up, a few numbers per row come back. A C header: the .cu file defines the function with C
 * linkage. */
#ifndef INF_CUDA_LOGITS_SCORE_H
#define INF_CUDA_LOGITS_SCORE_H

#include <stddef.h>
#include <stdint.h>

#include <ggtk/error.h>
#include <ggtk/inf_backend.h>

#ifdef __cplusplus
extern "C" {
#endif

/* What one row of logits gives, computed as the CPU scorers compute it (libinfer/src/eval:
 * inf_token_nll, inf_kld_token, sparse_kld_token) up to the order of the sums. */
typedef struct cuda_row_score {
    double sum_exp;      /* sum of e^(logit - max_logit) (float terms, double sum) */
    double kld;          /* comparing: sum over the base's tokens above -16 of
                            p_base * (log p_base - logit + log_norm), log_norm = max_logit +
                            (float)log(sum_exp) */
    float max_logit;     /* the largest logit (NaN never is) */
    float target_logit;  /* the row's target's logit */
    int32_t top;         /* the first token holding max_logit */
    int32_t top_base;    /* a llama-format base: its first most likely token; else -1 */
} cuda_row_score;

/* The rows to score: n_rows rows of n_vocab floats at `logits` (device memory of `backend`), row
 * r predicting targets[r]. A base, when comparing, is either llama rows (host memory, n_rows rows
 * of row_words uint16 words: scale, lp_min, then one word per token, as inf_eval.h describes) or
 * compact rows' entries (host memory: row r's entries are entry_ids/entry_log_p
 * [entry_begin[r] .. entry_begin[r + 1])). */
typedef struct cuda_score_rows_job {
    const float *logits;
    int32_t n_vocab;
    int32_t n_rows;
    const int32_t *targets;
    const uint16_t *llama_rows; /* or NULL */
    size_t row_words;
    const int32_t *entry_begin; /* n_rows + 1, or NULL */
    const int32_t *entry_ids;
    const float *entry_log_p;
} cuda_score_rows_job;

/* Score the job's rows on `backend`'s stream into out[0 .. n_rows) (host memory) and wait for
 * them. GGTK_ERR_USAGE for a backend that is not CUDA; a CUDA failure as "cuda: ..." (out of
 * device memory for the uploads: GGTK_ERR_NOMEM). */
ggtk_status cuda_score_rows(inf_backend *backend, const cuda_score_rows_job *job,
                            cuda_row_score *out, ggtk_error *err);

/* The host reference of one row, for the kernel's validation (tests/cuda/test_cuda_eval.c): the
 * same quantities, summed in index order. `base_row`/`ids` as for the job's row r (NULL: not
 * comparing). */
void cuda_score_row_reference(const float *logits, int32_t n_vocab, int32_t target,
                              const uint16_t *base_row, const int32_t *ids, const float *log_p,
                              int32_t n_entries, cuda_row_score *out);

#ifdef __cplusplus
}
#endif

#endif
