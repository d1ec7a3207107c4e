/* inf_eval.h - evaluating a language model on text: perplexity and KL-divergence computed the way
 * llama.cpp's llama-perplexity computes them, the base log-probability
 * files a KL-divergence run compares against.
 *
 * The method (as llama-perplexity, so that the numbers agree):
 *  - the text is tokenized once, with BOS prepended when the vocabulary adds one;
 *  - the tokens are cut into chunks of n_ctx tokens (a trailing partial chunk is dropped); when the
 *    vocabulary adds BOS, the first token of every chunk is replaced by BOS before decoding;
 *  - each chunk is decoded from an empty KV cache at positions 0..n_ctx-1, and only the second half
 *    is scored: the logits at positions first = n_ctx/2 .. n_ctx-2 predict the tokens at
 *    first+1 .. n_ctx-1 (n_ctx - 1 - n_ctx/2 scores per chunk);
 *  - a score is -log softmax(logits)[token]; PPL = exp(mean score) and its uncertainty is
 *    PPL * sqrt((mean(score^2) - mean(score)^2) / (count - 1)).
 *
 * Errors: see <ggtk/error.h>. Errors about a base file's bytes carry their offset in that file;
 * the others GGTK_NO_OFFSET. Lifecycle: a base file's reader and writer are opened and closed
 * (*_open / *_close); a perplexity run is built in memory (inf_perplexity_new / _free).
 *
 * Thread-safety: the functions without an object are reentrant. An inf_perplexity run, a base-file
 * reader or writer is used by one thread at a time.
 */
#ifndef INF_EVAL_H
#define INF_EVAL_H

#include <ggtk/export.h>

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <ggtk/inf_model.h>
#include <ggtk/error.h>
#include <ggtk/inf_imatrix.h>
#include <ggtk/inf_vocab.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ---------------------------------------------------------------------------------------------
 * A decoded row of logits (inf_session_logits() gives n_vocab of them per row)
 * ------------------------------------------------------------------------------------------- */

/* probs[i] = softmax(logits)[i] for i < n, computed stably: e^(logit - max) with the CPU
 * backend's exponential, summed in double, then normalised, so the probabilities sum to 1 within
 * float rounding. -INFINITY logits get probability 0. `probs` may be `logits` (in place).
 * GGTK_ERR_USAGE when n < 1; GGTK_ERR_NONFINITE for a NaN or +INFINITY logit, or when every logit
 * is -INFINITY (naming the first such index); probs is then left unspecified. */
GGTK_API ggtk_status inf_logits_softmax(const float *logits, int32_t n, float *probs,
                                        ggtk_error *err);

/* The k largest of logits[0..n) (1 <= k <= n), largest first, equal values ordered by lower id:
 * ids[j] gets the token id and values[j] (values may be NULL) its logit, for j < k. O(n log k).
 * GGTK_ERR_USAGE for k outside 1..n; GGTK_ERR_NONFINITE for a NaN logit (infinities are ordered
 * as usual). Nothing is written on failure. */
GGTK_API ggtk_status inf_logits_top_k(const float *logits, int32_t n, int32_t k, inf_token *ids,
                                      float *values, ggtk_error *err);

/* ---------------------------------------------------------------------------------------------
 * Scoring one token, and the perplexity of many
 * ------------------------------------------------------------------------------------------- */

/* -log softmax(logits)[token] over `n_vocab` logits: the maximum is found in float, the sum of
 * e^(logit - max) is accumulated in double, as llama-perplexity does (the exponential is the CPU
 * backend's vectorized one, within 2 ulp of expf). `token` must be in [0, n_vocab). */
GGTK_API double inf_token_nll(const float *logits, int32_t n_vocab, int32_t token);

/* Running sums of scores. Zero-initialise before use. */
typedef struct inf_ppl_stats {
    double sum_nll;  /* sum of scores */
    double sum_nll2; /* sum of squared scores */
    int64_t count;   /* number of scores */
} inf_ppl_stats;

/* Add one score. */
GGTK_API void inf_ppl_stats_add(inf_ppl_stats *stats, double nll);
/* exp(mean score); NAN when count is 0. */
GGTK_API double inf_ppl_stats_ppl(const inf_ppl_stats *stats);
/* The uncertainty llama-perplexity prints after "+/-": ppl * sqrt(var / (count - 1)) where
 * var = mean(score^2) - mean(score)^2; NAN when count < 2 or var <= 0 (llama-perplexity then
 * prints an error instead of a final estimate). */
GGTK_API double inf_ppl_stats_error(const inf_ppl_stats *stats);

/* ---------------------------------------------------------------------------------------------
 * KL-divergence against a base model's log-probabilities
 *
 * A base row stores the log-probabilities of one position, quantized as llama-perplexity stores
 * them in its --kl-divergence-base file, so files are interchangeable with it: n_words =
 * inf_logprob_row_words(n_vocab) uint16 words; words 0-1 and 2-3 hold two floats (scale and the
 * smallest stored log-probability lp_min), then one word q[i] per token with
 * log p[i] = scale * q[i] + lp_min. Log-probabilities more than 16 below the largest are clamped
 * to lp_min.
 * ------------------------------------------------------------------------------------------- */

/* uint16 words of one base row: 2 * ((n_vocab + 1) / 2) + 4. */
GGTK_API size_t inf_logprob_row_words(int32_t n_vocab);

/* Quantize the log-softmax of `logits` into `row` (inf_logprob_row_words(n_vocab) words) and
 * return the score -log p[token] (computed from the float logits, not the quantized row). */
GGTK_API double inf_logprob_row_encode(const float *logits, int32_t n_vocab, int32_t token, uint16_t *row);

/* Running sums of the comparison of a model (Q) with the base. Zero-initialise before use. */
typedef struct inf_kld_stats {
    double sum_nll, sum_nll2;           /* scores of Q */
    double sum_nll_base, sum_nll_base2; /* scores of the base */
    double sum_nll_nll_base;            /* sum of score(Q) * score(base) */
    double sum_kld, sum_kld2;           /* KL(base || Q) per token */
    double sum_p_diff, sum_p_diff2, sum_p_diff4; /* dp = p_Q(token) - p_base(token) */
    float max_abs_p_diff;
    int64_t n_same_top;                 /* positions where both models' most likely token agree */
    int64_t count;
} inf_kld_stats;

/* Compare Q's `logits` with the base `row` at one position whose next token is `token`: add to
 * `stats` and return KL(base || Q) = sum_i p_base[i] * (log p_base[i] - log p_Q[i]) (tokens whose
 * base log-probability is <= -16 are left out, as llama-perplexity does); *p_diff (may be NULL)
 * receives p_Q(token) - p_base(token). */
GGTK_API double inf_kld_token(const float *logits, int32_t n_vocab, const uint16_t *row, int32_t token,
                     inf_kld_stats *stats, float *p_diff);

/* Add the sums of `from` into `into`. */
GGTK_API void inf_kld_stats_merge(inf_kld_stats *into, const inf_kld_stats *from);

/* A value and its uncertainty (one standard error). */
typedef struct inf_estimate {
    double value;
    double error;
} inf_estimate;

/* Fractions at which inf_kld_summary holds percentiles, largest first. The median (0.5) is
 * computed as the mean of the two middle values for an even count, as llama-perplexity does. */
#define INF_KLD_N_PERCENTILES 11
extern const float inf_kld_percentile_fractions[INF_KLD_N_PERCENTILES];

/* Everything llama-perplexity prints at the end of a KL-divergence run. */
typedef struct inf_kld_summary {
    inf_estimate ppl;           /* PPL(Q) */
    inf_estimate ppl_base;      /* PPL(base) */
    double log_ppl_correlation; /* Cor(ln PPL(Q), ln PPL(base)) in [-1, 1] */
    inf_estimate log_ppl_ratio; /* mean ln(PPL(Q) / PPL(base)) */
    inf_estimate ppl_ratio;     /* PPL(Q) / PPL(base) */
    inf_estimate ppl_diff;      /* PPL(Q) - PPL(base) */
    inf_estimate kld;           /* mean KL-divergence */
    inf_estimate p_diff;        /* mean dp (a fraction, not %) */
    inf_estimate rms_p_diff;    /* root mean square dp */
    inf_estimate same_top;      /* fraction of positions whose top token agrees */
    float kld_max, kld_min, kld_percentile[INF_KLD_N_PERCENTILES];
    float p_diff_max, p_diff_min, p_diff_percentile[INF_KLD_N_PERCENTILES];
    int64_t count;
} inf_kld_summary;

/* The estimates of `stats` (uncertainties are 0 for fewer than 11 positions, as in
 * llama-perplexity). Used for the running per-chunk line as well; percentiles are left 0. */
GGTK_API inf_kld_summary inf_kld_estimates(const inf_kld_stats *stats);

/* inf_kld_estimates() plus the percentiles of the per-position values kld[0..n) and
 * p_diff[0..n), which are sorted in place. n may be 0 (percentiles then 0). */
GGTK_API inf_kld_summary inf_kld_summarize(const inf_kld_stats *stats, float *kld, float *p_diff,
                                  size_t n);

/* ---------------------------------------------------------------------------------------------
 * Base log-probability files, in one of two formats (docs/eval.md has both byte layouts):
 *
 * INF_KLD_BASE_LLAMA - llama-perplexity's --kl-divergence-base format (little-endian):
 *   "_logits_" | n_ctx u32 | n_vocab i32 | n_chunk i32 | tokens i32[n_chunk * n_ctx] |
 *   per chunk: (n_ctx - 1 - n_ctx/2) base rows (see above) for the scored positions in order.
 *   A row takes 2 bytes per vocabulary token (512 KiB at 262,144 tokens).
 * INF_KLD_BASE_COMPACT - ggtk's own ("GGTK-KLD", version 1): per scored position only the most
 *   likely tokens that carry all but `epsilon` of the base model's probability mass (at most
 *   `max_entries`, their log-probabilities to 2^-12 nat, or 1/16 nat below e^-8), the mass of
 *   every other token as one "rest" bucket, and the scored token's log-probability exactly. The
 *   mean KL-divergence computed from it differs from the llama format's by less than 1e-4 with
 *   the defaults (measured; docs/eval.md says which statistics are approximate and by how much).
 *
 * Readers tell the format by the magic. Both stream: a reader holds the rows asked for, a writer
 * the rows given to it, never a whole file.
 * ------------------------------------------------------------------------------------------- */

typedef enum inf_kld_base_format {
    INF_KLD_BASE_LLAMA = 0,   /* llama-perplexity's full rows */
    INF_KLD_BASE_COMPACT = 1, /* ggtk's: most likely tokens, a rest bucket, the scored token */
} inf_kld_base_format;

/* "llama" or "compact". */
GGTK_API const char *inf_kld_base_format_name(inf_kld_base_format format);

/* How a compact base chooses a position's entries. */
typedef struct inf_kld_compact_params {
    float epsilon;       /* the probability mass the entries may leave to the rest bucket,
                            0 <= epsilon < 1 (stored in the header) */
    int32_t max_entries; /* at most this many entries per position (>= 1; more than the
                            vocabulary means all of it), even if more mass is then left out */
} inf_kld_compact_params;

/* The defaults: epsilon 1e-4, max_entries 65536 (chosen so that the mean KL-divergence differs
 * from the llama format's by less than 1e-4; see docs/eval.md). */
GGTK_API inf_kld_compact_params inf_kld_compact_params_default(void);

typedef struct inf_kld_base_writer inf_kld_base_writer;

/* Start writing a base file for `n_chunk` (>= 1) chunks of `n_ctx` (>= 3) tokens; `tokens` holds the
 * n_chunk * n_ctx tokens evaluated (before any BOS substitution). The data goes to a temporary
 * file beside `path` that inf_kld_base_writer_finish() renames into place (atomic_file.h), so
 * `path` never holds a partial file. NULL on failure: GGTK_ERR_INVALID for a bad shape,
 * GGTK_ERR_PATH when `path` exists and is not a regular file, GGTK_ERR_IO when the file cannot be
 * created or written, GGTK_ERR_USAGE for an empty path or one ending in '/', GGTK_ERR_NOMEM. */
GGTK_API inf_kld_base_writer *inf_kld_base_writer_open(const char *path, int32_t n_ctx,
                                                       int32_t n_vocab, int32_t n_chunk,
                                                       const inf_token *tokens, ggtk_error *err);
/* The same for a compact base chosen by `params` (GGTK_ERR_USAGE for epsilon outside [0, 1) or
 * max_entries < 1; max_entries is capped at n_vocab). */
GGTK_API inf_kld_base_writer *inf_kld_base_writer_open_compact(const char *path, int32_t n_ctx,
                                                               int32_t n_vocab, int32_t n_chunk,
                                                               const inf_token *tokens,
                                                               const inf_kld_compact_params *params,
                                                               ggtk_error *err);
/* The format the writer writes. */
GGTK_API inf_kld_base_format inf_kld_base_writer_format(const inf_kld_base_writer *writer);
/* Append `n_rows` rows (n_rows * inf_logprob_row_words(n_vocab) words) in the order of the
 * header's chunks and scored positions. A compact writer converts each row: its entries come
 * from the row's log-probabilities, the scored token's log-probability from the row too (so it
 * is exact only to the row's 2^-12 step), and tokens the row clamped to its floor (more than 16
 * below the top) are dropped. GGTK_ERR_USAGE for more rows than the header announces,
 * GGTK_ERR_IO when the write fails. */
GGTK_API ggtk_status inf_kld_base_writer_write(inf_kld_base_writer *writer, const uint16_t *rows,
                                               size_t n_rows, ggtk_error *err);
/* Check that every chunk's rows were written (else GGTK_ERR_USAGE), flush, close and rename into
 * place (else GGTK_ERR_IO); on failure the temporary file is removed. Closes the writer in every
 * case. */
GGTK_API ggtk_status inf_kld_base_writer_finish(inf_kld_base_writer *writer, ggtk_error *err);
/* Close without finishing: abandon the file, remove the temporary file and free the writer.
 * NULL allowed. */
GGTK_API void inf_kld_base_writer_close(inf_kld_base_writer *writer);
/* Path of the temporary file being written (for a signal handler to unlink), valid until the
 * writer is finished or closed. */
GGTK_API const char *inf_kld_base_writer_temp_path(const inf_kld_base_writer *writer);

typedef struct inf_kld_base inf_kld_base;

/* Open a base file of either format (told by the magic) and validate its header: the magic
 * (else GGTK_ERR_MAGIC), for the compact format its version (else GGTK_ERR_VERSION), epsilon and
 * max_entries, and its chunk table (each chunk's length possible for its rows, else
 * GGTK_ERR_LAYOUT); 3 <= n_ctx <= 2^24,
 * 1 <= n_vocab <= 2^24, n_chunk >= 1 and no more chunks than the file can hold (checked before
 * anything is allocated), every token in [0, n_vocab) (else GGTK_ERR_INVALID), and a file size
 * exactly equal to what the header announces (GGTK_ERR_TRUNCATED for a short file,
 * GGTK_ERR_LAYOUT for trailing data). NULL on failure with `err` naming the file and the field,
 * its offset in the file set; GGTK_ERR_IO when the file cannot be opened. */
GGTK_API inf_kld_base *inf_kld_base_open(const char *path, ggtk_error *err);
/* Close the file. NULL allowed. */
GGTK_API void inf_kld_base_close(inf_kld_base *base);
GGTK_API int32_t inf_kld_base_n_ctx(const inf_kld_base *base);
GGTK_API int32_t inf_kld_base_n_vocab(const inf_kld_base *base);
GGTK_API int32_t inf_kld_base_n_chunk(const inf_kld_base *base);
/* The n_chunk * n_ctx tokens of the file, owned by the reader. */
GGTK_API const inf_token *inf_kld_base_tokens(const inf_kld_base *base);
/* The file's format. */
GGTK_API inf_kld_base_format inf_kld_base_get_format(const inf_kld_base *base);
/* A compact base: *params receives its header's epsilon and max_entries, and true; a llama
 * base: false. */
GGTK_API bool inf_kld_base_get_compact_params(const inf_kld_base *base,
                                              inf_kld_compact_params *params);
/* A llama-format base (else GGTK_ERR_USAGE; a compact base is read by a perplexity run):
 * read the rows of chunk `chunk` (0 <= chunk < n_chunk, else GGTK_ERR_USAGE) into `rows`
 * ((n_ctx - 1 - n_ctx/2) * inf_logprob_row_words(n_vocab) words); GGTK_ERR_IO when the read
 * fails. A row no writer can produce (scale or lp_min not finite, scale outside [0, 16/65535],
 * the top log-probability outside [-ln n_vocab, 0]) is GGTK_ERR_NONFINITE or GGTK_ERR_INVALID with
 * one line naming the file, the chunk (1-based) and the row. */
GGTK_API ggtk_status inf_kld_base_read_chunk(inf_kld_base *base, int32_t chunk, uint16_t *rows,
                                             ggtk_error *err);

/* Rows first_row .. first_row + n_rows - 1 of chunk `chunk` of a llama-format base into `rows`
 * (n_rows * inf_logprob_row_words(n_vocab) words), checked as inf_kld_base_read_chunk() checks
 * them: a chunk read a group of rows at a time (at 262,144 tokens a chunk of 512 is 128 MiB).
 * GGTK_ERR_USAGE for a compact base or rows outside the chunk. */
GGTK_API ggtk_status inf_kld_base_read_rows(inf_kld_base *base, int32_t chunk, int32_t first_row,
                                            int32_t n_rows, uint16_t *rows, ggtk_error *err);

/* ---------------------------------------------------------------------------------------------
 * The perplexity run: chunks decoded with a model session, scored, and optionally written to or
 * compared with a base file.
 * ------------------------------------------------------------------------------------------- */

typedef struct inf_perplexity inf_perplexity;

typedef struct inf_perplexity_params {
    int32_t n_ctx;           /* tokens per chunk (>= 4, even is usual; <= the session's n_ctx) */
    int32_t n_chunks;        /* chunks to evaluate; <= 0: all the text holds */
    const char *kld_base_out; /* write a base file here (NULL: none) */
    inf_kld_base_format kld_base_out_format; /* ... in this format */
    inf_kld_compact_params kld_compact;      /* ... chosen so, when compact */
    inf_kld_base *kld_base_in; /* compare with this base (NULL: plain perplexity); the tokens and
                                  n_ctx then come from it and `tokens` must be NULL */
    inf_imatrix *imatrix;     /* collect an importance matrix into this while decoding (NULL:
                                 none; see inf_imatrix_observe()). The run sets it as the
                                 session's observer until freed, and computes every position's
                                 logits, as llama-imatrix does, so that every layer sees every
                                 token; the scores are the same */
} inf_perplexity_params;

/* The defaults: n_ctx 512 (llama-perplexity's), all chunks, no base output (llama format,
 * inf_kld_compact_params_default() when compact), no base input, no importance matrix. */
GGTK_API inf_perplexity_params inf_perplexity_params_default(void);

/* Results after a chunk. */
typedef struct inf_chunk_result {
    int32_t index;        /* 0-based chunk number */
    double ppl;           /* running estimate over chunks 0..index (what llama-perplexity prints
                             as [index+1]) */
    double chunk_ppl;     /* this chunk alone */
    double chunk_kld;     /* this chunk's mean KL-divergence (KLD runs; NAN otherwise) */
    double seconds;       /* wall time of this chunk (decode + scoring) */
} inf_chunk_result;

/* Prepare a run over `tokens[0..n_tokens)` (the tokenized text, BOS already prepended when the
 * vocabulary adds one) with `session` (which must outlive the run and have n_ctx >= params->n_ctx).
 * Errors (NULL, `err` set): fewer than 2 * n_ctx tokens (llama-perplexity's requirement), n_ctx
 * below 4 or larger than the session's, a base file whose n_vocab differs from the model's
 * (GGTK_ERR_INVALID); tokens given with a base file (GGTK_ERR_USAGE); an importance matrix with a
 * session on a device (GGTK_ERR_UNSUPPORTED: the collector reads activations on the host); an
 * unwritable base output (inf_kld_base_writer_open's error); out of memory. The tokens are
 * copied.
 * On a session whose device keeps the logits (a CUDA session), the scores and KL-divergence
 * statistics are computed there and only a few numbers per position come back; writing a base
 * file brings the scored rows to the host. */
GGTK_API inf_perplexity *inf_perplexity_new(inf_session *session, const inf_token *tokens,
                                            size_t n_tokens, const inf_perplexity_params *params,
                                            ggtk_error *err);
/* Free the run; an unfinished base output file is removed. NULL allowed. */
GGTK_API void inf_perplexity_free(inf_perplexity *run);
/* Number of chunks the run evaluates. */
GGTK_API int32_t inf_perplexity_n_chunks(const inf_perplexity *run);
/* Tokens scored per chunk: n_ctx - 1 - n_ctx/2. */
GGTK_API int32_t inf_perplexity_scored_per_chunk(const inf_perplexity *run);
/* Evaluate the next chunk. Returns GGTK_OK and fills *result, or an error: a decode failure
 * ("chunk N: " and the session's message, with its status), a base file read/write failure, a
 * corrupt base row, a failure of the importance matrix collection ("chunk N: " and its message).
 * A NaN or infinite score or KL-divergence at any position is
 * GGTK_ERR_NONFINITE, before the chunk counts or is written; the message names the chunk, the
 * position and, from a scan of every weight made only then, the first tensor holding a NaN or
 * infinity. Calling it after the last chunk is GGTK_ERR_USAGE. */
GGTK_API ggtk_status inf_perplexity_next(inf_perplexity *run, inf_chunk_result *result,
                                         ggtk_error *err);
/* Path of the temporary file of an unfinished base output, NULL when none: what a signal handler
 * must unlink so that an interrupted run leaves nothing behind. */
GGTK_API const char *inf_perplexity_output_temp_path(const inf_perplexity *run);
/* Finish after the last chunk: finishes the base output file (renaming it into place; see
 * inf_kld_base_writer_finish()). GGTK_OK at once when the run writes no base file. */
GGTK_API ggtk_status inf_perplexity_finish(inf_perplexity *run, ggtk_error *err);
/* Sums of the scores so far (valid at any time). */
GGTK_API const inf_ppl_stats *inf_perplexity_stats(const inf_perplexity *run);
/* KLD runs: the sums so far, and the summary with percentiles over every position scored so far
 * (call after the last chunk). Without a base: NULL / a zeroed summary. */
GGTK_API const inf_kld_stats *inf_perplexity_kld_stats(const inf_perplexity *run);
GGTK_API inf_kld_summary inf_perplexity_kld_summary(inf_perplexity *run);

#ifdef __cplusplus
}
#endif

#endif /* INF_EVAL_H */
