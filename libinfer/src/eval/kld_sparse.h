/* kld_sparse.h - one scored position of a compact base file (docs/eval.md, "Compact base
 * files"): the most likely tokens that carry all but a stated epsilon of the base model's
 * probability mass, the mass of all other tokens as one "rest" bucket, and the scored token's
 * log-probability exactly. Choosing the entries from a row of log-probabilities, the 1-2 byte
 * code of an entry's log-probability, and the KL-divergence of a model against such a row. */
#ifndef KLD_SPARSE_H
#define KLD_SPARSE_H

#include <stdint.h>

#include <ggtk/inf_eval.h>

/* Entries hold log-probabilities above -SPARSE_RANGE (as llama-perplexity's sum does): the codes
 * cover (-16, 0]. The 2-byte codes of log p >= -SPARSE_HEAD have steps of 2^-12 (as fine as
 * the llama rows' 16/65535), the 1-byte codes below it steps of 1/16: a tail token's mass is
 * tiny, so its coarser step moves a KL-divergence by far less than a head token's would. */
#define SPARSE_RANGE 16.0f
#define SPARSE_HEAD 8.0f
enum { SPARSE_HEAD_STEPS = 4096, SPARSE_TAIL_STEPS = 16 };

/* A decoded row. The entries are in ascending id order (the file's order). */
typedef struct sparse_row {
    float log_p_token; /* log p(scored token), exact (from the float logits) */
    float rest;        /* probability mass of every token not listed */
    int32_t n;         /* entries, >= 1 */
    int32_t capacity;  /* of ids and log_p */
    inf_token *ids;
    float *log_p;      /* decoded from the codes */
} sparse_row;

/* Make room for n entries. False when out of memory. */
bool sparse_row_reserve(sparse_row *row, int32_t n);
void sparse_row_free(sparse_row *row);

/* The code of log-probability log_p (> -16, <= 0) and its decoded value; sparse_code_bytes is 1
 * or 2. Codes are written big-end first: a first byte below 0x80 is a whole 1-byte code. */
uint16_t sparse_code(float log_p);
float sparse_code_value(uint16_t code);
static inline int sparse_code_bytes(uint16_t code) { return code >= 0x80 ? 2 : 1; }

/* Scratch space for choosing entries over a vocabulary of n_vocab tokens. */
typedef struct sparse_scratch {
    float *p;         /* n_vocab probabilities */
    inf_token *cand;  /* the tokens of the bucket where the cut falls */
} sparse_scratch;

bool sparse_scratch_init(sparse_scratch *s, int32_t n_vocab);
void sparse_scratch_free(sparse_scratch *s);

/* Fill `row` from log_p[0..n_vocab) (log-probabilities, normalised within float rounding): the
 * fewest most likely tokens whose left-out mass is at most params->epsilon (ties broken by the
 * lower id), at most params->max_entries, only tokens with log p > -16, and at least the most
 * likely one; rest = the mass of the others, summed in double. log_p_token is stored as given.
 * False when out of memory. */
bool sparse_row_choose(const float *log_p, int32_t n_vocab, float log_p_token,
                       const inf_kld_compact_params *params, sparse_scratch *scratch,
                       sparse_row *row);

/* sparse_row_choose() from a model's logits: the log-softmax in float as the llama rows compute
 * it, the scored token's log-probability from the logits. Returns the score -log p(token).
 * `log_p` is n_vocab floats of scratch. */
double sparse_row_from_logits(const float *logits, int32_t n_vocab, int32_t token,
                              const inf_kld_compact_params *params, float *log_p,
                              sparse_scratch *scratch, sparse_row *row, bool *ok);

/* Compare Q's logits with a base row at one position whose next token is `token`, as
 * inf_kld_token() does with a full row: KL(base || Q) over the entries plus the rest bucket
 * against Q's mass on the same unlisted tokens, rest * log(rest / q_rest). Adds to `stats`;
 * *p_diff (may be NULL) receives p_Q(token) - p_base(token). */
double sparse_kld_token(const float *logits, int32_t n_vocab, const sparse_row *row,
                        int32_t token, inf_kld_stats *stats, float *p_diff);

#endif
