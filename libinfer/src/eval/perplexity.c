/* perplexity.c - the chunk loop of a perplexity or KL-divergence run, as llama-perplexity runs
 * it: each chunk decoded from an empty cache (BOS first when the vocabulary adds one), its second
 * half scored. Scores of one chunk are computed (logits_score.h: on the host in parallel, or on
 * the session's device) into per-position slots and summed in position order, so results do not
 * depend on the thread count. Base rows are read and written
 * a group of positions at a time: at 262,144 tokens a llama row is 512 KiB, so a whole chunk's
 * rows would add half the logits' memory again. */
#include <math.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "kld_file.h"
#include "logits_score.h"
#include "model/model_scan.h"
#include "model/session_logits.h"
#include <ggtk/inf_eval.h>

struct inf_perplexity {
    inf_session *session;
    int32_t n_ctx;
    int32_t n_chunks;
    int32_t first;     /* first scored logits row: n_ctx / 2 */
    int32_t n_scored;  /* n_ctx - 1 - first */
    int32_t n_vocab;
    int n_threads;
    inf_token bos;     /* replaces the first token of every chunk, or INF_TOKEN_NONE */
    inf_token *tokens; /* n_chunks * n_ctx */
    inf_token *batch;  /* one chunk as decoded */
    int32_t next_chunk;
    int32_t row_offset; /* the decode's logits row of the first scored position */
    inf_ppl_stats stats;
    double *nll;       /* per scored position of the current chunk */
    /* base rows of one group of positions, read or written */
    int32_t group;         /* positions per group */
    uint16_t *rows;        /* llama rows */
    sparse_row *sparse;    /* compact rows */
    float *log_p;          /* per thread: n_vocab log-probabilities (writing compact rows) */
    sparse_scratch *scratch; /* per thread (writing compact rows) */
    inf_kld_compact_params compact;
    /* base output */
    inf_kld_base_writer *writer;
    /* base comparison */
    inf_kld_base *base;
    inf_kld_stats kld;
    inf_kld_stats *kld_slots; /* per scored position of the current chunk */
    float *kld_values;        /* per scored position of every chunk so far */
    float *p_diff_values;
    /* importance matrix collection */
    inf_imatrix *imatrix;
};

static double seconds_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

inf_perplexity_params inf_perplexity_params_default(void)
{
    inf_perplexity_params p = {.n_ctx = 512, .n_chunks = 0, .kld_base_out = NULL,
                               .kld_base_out_format = INF_KLD_BASE_LLAMA,
                               .kld_compact = inf_kld_compact_params_default(),
                               .kld_base_in = NULL, .imatrix = NULL};
    return p;
}

/* Decide n_ctx, the chunk count and the tokens, from the text or from the base file. */
static bool setup_tokens(inf_perplexity *run, const inf_token *tokens, size_t n_tokens,
                         const inf_perplexity_params *params, ggtk_error *err)
{
    if (run->base) {
        if (tokens) {
            ggtk_error_set(err, GGTK_ERR_USAGE, GGTK_NO_OFFSET,
                           "a KL-divergence run takes its tokens from the base "
                           "file, not from a text");
            return false;
        }
        if (inf_kld_base_n_vocab(run->base) != run->n_vocab) {
            ggtk_error_set(err, GGTK_ERR_INVALID, GGTK_NO_OFFSET,
                           "the base file has a vocabulary of %d tokens, the "
                           "model %d: they do not belong together",
                           inf_kld_base_n_vocab(run->base), run->n_vocab);
            return false;
        }
        run->n_ctx = inf_kld_base_n_ctx(run->base);
        run->n_chunks = inf_kld_base_n_chunk(run->base);
        tokens = inf_kld_base_tokens(run->base);
    } else {
        run->n_ctx = params->n_ctx;
        if (run->n_ctx < 4) {
            ggtk_error_set(err, GGTK_ERR_INVALID, GGTK_NO_OFFSET,
                           "a context of %d tokens is too short to score "
                           "(at least 4)", run->n_ctx);
            return false;
        }
        if (n_tokens < 2 * (size_t)run->n_ctx) {
            ggtk_error_set(err, GGTK_ERR_INVALID, GGTK_NO_OFFSET,
                           "the text has %zu tokens; a context of %d needs at "
                           "least %d (two chunks' worth, as llama-perplexity requires)",
                           n_tokens, run->n_ctx, 2 * run->n_ctx);
            return false;
        }
        run->n_chunks = (int32_t)(n_tokens / (size_t)run->n_ctx);
    }
    int32_t session_ctx = inf_session_get_params(run->session).n_ctx;
    if (run->n_ctx > session_ctx) {
        ggtk_error_set(err, GGTK_ERR_INVALID, GGTK_NO_OFFSET,
                       "chunks of %d tokens do not fit the session's context "
                       "of %d", run->n_ctx, session_ctx);
        return false;
    }
    if (params->n_chunks > 0 && params->n_chunks < run->n_chunks)
        run->n_chunks = params->n_chunks;
    run->first = run->n_ctx / 2;
    run->n_scored = run->n_ctx - 1 - run->first;
    size_t n = (size_t)run->n_chunks * (size_t)run->n_ctx;
    run->tokens = malloc(n * sizeof *run->tokens);
    if (!run->tokens) {
        ggtk_error_set(err, GGTK_ERR_NOMEM, GGTK_NO_OFFSET, "out of memory for %zu tokens", n);
        return false;
    }
    memcpy(run->tokens, tokens, n * sizeof *tokens);
    return true;
}

/* The format of the base rows read or written (llama when there are none). */
static inf_kld_base_format rows_format(const inf_perplexity *run)
{
    if (run->base)
        return inf_kld_base_get_format(run->base);
    return run->writer ? inf_kld_base_writer_format(run->writer) : INF_KLD_BASE_LLAMA;
}

/* Scratch space for the scores of one chunk, the base rows of one group (and the KLD values of
 * all chunks). */
static bool setup_buffers(inf_perplexity *run)
{
    run->batch = malloc((size_t)run->n_ctx * sizeof *run->batch);
    run->nll = malloc((size_t)run->n_scored * sizeof *run->nll);
    if (!run->batch || !run->nll)
        return false;
    /* On a device a group is one launch of a block per row: larger groups keep it busy; llama
     * rows still cost host memory (64 rows of 262,144 tokens: 32 MiB). */
    run->group = 4 * run->n_threads < 16 ? 16 : 4 * run->n_threads;
    if (session_logits_on_device(run->session) && !run->writer)
        run->group = run->base && rows_format(run) == INF_KLD_BASE_LLAMA ? 64 : run->n_scored;
    if (run->group > run->n_scored)
        run->group = run->n_scored;
    if (run->writer || run->base) {
        if (rows_format(run) == INF_KLD_BASE_LLAMA) {
            run->rows = malloc((size_t)run->group * inf_logprob_row_words(run->n_vocab) *
                               sizeof *run->rows);
            if (!run->rows)
                return false;
        } else if (!(run->sparse = calloc((size_t)run->group, sizeof *run->sparse))) {
            return false;
        }
    }
    if (run->writer && rows_format(run) == INF_KLD_BASE_COMPACT) {
        run->log_p = malloc((size_t)run->n_threads * (size_t)run->n_vocab * sizeof *run->log_p);
        run->scratch = calloc((size_t)run->n_threads, sizeof *run->scratch);
        if (!run->log_p || !run->scratch)
            return false;
        for (int t = 0; t < run->n_threads; t++)
            if (!sparse_scratch_init(&run->scratch[t], run->n_vocab))
                return false;
    }
    if (run->base) {
        size_t n_all = (size_t)run->n_chunks * (size_t)run->n_scored;
        run->kld_slots = malloc((size_t)run->n_scored * sizeof *run->kld_slots);
        run->kld_values = malloc(n_all * sizeof *run->kld_values);
        run->p_diff_values = malloc(n_all * sizeof *run->p_diff_values);
        if (!run->kld_slots || !run->kld_values || !run->p_diff_values)
            return false;
    }
    return true;
}

inf_perplexity *inf_perplexity_new(inf_session *session, const inf_token *tokens, size_t n_tokens,
                                   const inf_perplexity_params *params, ggtk_error *err)
{
    inf_perplexity *run = calloc(1, sizeof *run);
    if (!run) {
        ggtk_error_set(err, GGTK_ERR_NOMEM, GGTK_NO_OFFSET, "out of memory");
        return NULL;
    }
    const inf_model *model = inf_session_model(session);
    const inf_vocab *vocab = inf_model_get_vocab(model);
    run->session = session;
    run->n_vocab = (int32_t)inf_model_get_hparams(model)->n_vocab;
    /* Score with as many threads as the session computes with (<= 0: one per core). */
    run->n_threads = inf_session_get_params(session).n_threads;
    if (run->n_threads <= 0)
        run->n_threads = omp_get_max_threads();
    run->bos = inf_vocab_adds_bos(vocab) ? inf_vocab_bos(vocab) : INF_TOKEN_NONE;
    run->base = params->kld_base_in;
    if (params->imatrix && inf_session_get_params(session).device != INF_DEVICE_CPU) {
        /* The collector reads each observed node's activations in host memory. */
        ggtk_error_set(err, GGTK_ERR_UNSUPPORTED, GGTK_NO_OFFSET,
                       "collecting an importance matrix needs a session on the CPU, not %s",
                       inf_device_name(inf_session_get_params(session).device));
        goto fail;
    }
    if (!setup_tokens(run, tokens, n_tokens, params, err))
        goto fail;
    if (params->kld_base_out) {
        run->compact = params->kld_compact;
        run->writer = params->kld_base_out_format == INF_KLD_BASE_COMPACT
                          ? inf_kld_base_writer_open_compact(params->kld_base_out, run->n_ctx,
                                                             run->n_vocab, run->n_chunks,
                                                             run->tokens, &run->compact, err)
                          : inf_kld_base_writer_open(params->kld_base_out, run->n_ctx,
                                                     run->n_vocab, run->n_chunks, run->tokens,
                                                     err);
        if (!run->writer)
            goto fail;
    }
    if (!setup_buffers(run)) {
        ggtk_error_set(err, GGTK_ERR_NOMEM, GGTK_NO_OFFSET, "out of memory");
        goto fail;
    }
    run->imatrix = params->imatrix;
    if (run->imatrix)
        inf_session_set_observer(session, inf_imatrix_wants, inf_imatrix_observe, run->imatrix);
    return run;
fail:
    inf_perplexity_free(run);
    return NULL;
}

void inf_perplexity_free(inf_perplexity *run)
{
    if (!run)
        return;
    if (run->imatrix)
        inf_session_set_observer(run->session, NULL, NULL, NULL);
    inf_kld_base_writer_close(run->writer);
    free(run->tokens);
    free(run->batch);
    free(run->nll);
    free(run->rows);
    for (int32_t i = 0; run->sparse && i < run->group; i++)
        sparse_row_free(&run->sparse[i]);
    free(run->sparse);
    for (int t = 0; run->scratch && t < run->n_threads; t++)
        sparse_scratch_free(&run->scratch[t]);
    free(run->scratch);
    free(run->log_p);
    free(run->kld_slots);
    free(run->kld_values);
    free(run->p_diff_values);
    free(run);
}

int32_t inf_perplexity_n_chunks(const inf_perplexity *run) { return run->n_chunks; }
int32_t inf_perplexity_scored_per_chunk(const inf_perplexity *run) { return run->n_scored; }
const inf_ppl_stats *inf_perplexity_stats(const inf_perplexity *run) { return &run->stats; }

const inf_kld_stats *inf_perplexity_kld_stats(const inf_perplexity *run)
{
    return run->base ? &run->kld : NULL;
}

/* Add the chunk's scores to the run's sums, in position order. */
static void add_chunk(inf_perplexity *run)
{
    for (int32_t r = 0; r < run->n_scored; r++) {
        if (run->base)
            inf_kld_stats_merge(&run->kld, &run->kld_slots[r]);
        inf_ppl_stats_add(&run->stats, run->nll[r]);
    }
}

/* Why a NaN or an infinity came out, from a scan of the weights (only now: it reads them all). */
static void explain_nonfinite(const inf_perplexity *run, char *why, size_t why_size)
{
    const char *tensor;
    int64_t row;
    if (!model_find_nonfinite_weight(inf_session_model(run->session), &tensor, &row))
        snprintf(why, why_size, "the weights could not be checked (out of memory)");
    else if (tensor)
        snprintf(why, why_size, "tensor %s holds a NaN or infinity (row %lld)", tensor,
                 (long long)row);
    else
        snprintf(why, why_size, "every weight is finite, so the activations overflowed");
}

/* Refuse a chunk with a non-finite score or KL-divergence: a NaN would otherwise poison every
 * estimate after it (llama-perplexity prints "nan" and exits 0). Names the first such position
 * and, when a weight explains it, the tensor. */
static ggtk_status check_finite(const inf_perplexity *run, int32_t index, int32_t first,
                                int32_t n, ggtk_error *err)
{
    const float *kld = run->base ? run->kld_values + (size_t)index * run->n_scored : NULL;
    for (int32_t r = first; r < first + n; r++) {
        const bool bad_nll = !isfinite(run->nll[r]);
        if (!bad_nll && (!kld || isfinite(kld[r])))
            continue;
        char why[256];
        explain_nonfinite(run, why, sizeof why);
        const double value = bad_nll ? run->nll[r] : (double)kld[r];
        return ggtk_error_set(err, GGTK_ERR_NONFINITE, GGTK_NO_OFFSET,
                              "chunk %d: non-finite %s (%s) at position %d of %d; %s", index + 1,
                              bad_nll ? "log-probability" : "KL-divergence",
                              isnan(value) ? "nan" : value > 0 ? "inf" : "-inf",
                              run->first + r + 1, run->n_ctx, why);
    }
    return GGTK_OK;
}

/* Score position r of the chunk (row g of the group) into run->nll[r] while writing its base row
 * (run->rows or run->sparse, slot g): the row's log-probabilities are computed from the host
 * logits, in llama-perplexity's format or the compact one. */
static void encode_position(inf_perplexity *run, const float *row_logits, inf_token next,
                            int32_t r, int32_t g)
{
    const int32_t n_vocab = run->n_vocab;
    if (run->sparse) {
        const int t = omp_get_thread_num();
        bool ok;
        run->nll[r] = sparse_row_from_logits(row_logits, n_vocab, next, &run->compact,
                                             run->log_p + (size_t)t * n_vocab, &run->scratch[t],
                                             &run->sparse[g], &ok);
        if (!ok)
            run->sparse[g].n = 0; /* out of memory: the group's write refuses it */
    } else {
        run->nll[r] = inf_logprob_row_encode(row_logits, n_vocab, next,
                                             run->rows + g * inf_logprob_row_words(n_vocab));
    }
}

/* Score the n positions of the chunk from `first` on (plain, or comparing with the group's base
 * rows), where the session keeps its logits: on its device, or on the host at `logits`. */
static ggtk_status score_group(inf_perplexity *run, const float *logits, const inf_token *chunk,
                               int32_t index, int32_t first, int32_t n, ggtk_error *err)
{
    const size_t at = (size_t)index * run->n_scored + (size_t)first;
    score_job job = {.n_vocab = run->n_vocab, .n_rows = n,
                     .targets = chunk + run->first + first + 1,
                     .llama_rows = run->base && !run->sparse ? run->rows : NULL,
                     .sparse_rows = run->base ? run->sparse : NULL,
                     .nll = run->nll + first,
                     .kld_slots = run->base ? run->kld_slots + first : NULL,
                     .kld = run->base ? run->kld_values + at : NULL,
                     .p_diff = run->base ? run->p_diff_values + at : NULL};
    if (!logits)
        return score_rows_device(run->session, run->row_offset + first, &job, err);
    score_rows_host(logits + (size_t)first * run->n_vocab, &job, run->n_threads);
    return GGTK_OK;
}

/* Score the chunk's positions a group at a time: read the group's base rows, score them, check
 * them, write the group's rows. The run's sums are left alone until the whole chunk is known to
 * be finite (add_chunk). `logits` is NULL when the rows stay on the session's device. */
static ggtk_status score_chunk(inf_perplexity *run, const float *logits, const inf_token *chunk,
                               int32_t index, ggtk_error *err)
{
    for (int32_t first = 0; first < run->n_scored; first += run->group) {
        const int32_t n = run->n_scored - first < run->group ? run->n_scored - first : run->group;
        ggtk_status status = GGTK_OK;
        if (run->base)
            status = run->sparse ? kld_base_read_sparse(run->base, index, first, n, run->sparse, err)
                                 : inf_kld_base_read_rows(run->base, index, first, n, run->rows, err);
        if (status != GGTK_OK)
            return status;
        if (run->writer) {
#pragma omp parallel for schedule(static) num_threads(run->n_threads)
            for (int32_t g = 0; g < n; g++)
                encode_position(run, logits + (size_t)(first + g) * run->n_vocab,
                                chunk[run->first + first + g + 1], first + g, g);
        } else if ((status = score_group(run, logits, chunk, index, first, n, err)) != GGTK_OK) {
            return status;
        }
        if ((status = check_finite(run, index, first, n, err)) != GGTK_OK)
            return status;
        if (run->writer && run->sparse) {
            for (int32_t g = 0; g < n; g++)
                if (run->sparse[g].n == 0)
                    return ggtk_error_set(err, GGTK_ERR_NOMEM, GGTK_NO_OFFSET, "out of memory");
            status = kld_base_writer_write_sparse(run->writer, run->sparse, (size_t)n, err);
        } else if (run->writer) {
            status = inf_kld_base_writer_write(run->writer, run->rows, (size_t)n, err);
        }
        if (status != GGTK_OK)
            return status;
    }
    return GGTK_OK;
}

ggtk_status inf_perplexity_next(inf_perplexity *run, inf_chunk_result *result, ggtk_error *err)
{
    if (run->next_chunk >= run->n_chunks) {
        ggtk_error_set(err, GGTK_ERR_USAGE, GGTK_NO_OFFSET,
                       "all %d chunks have been evaluated", run->n_chunks);
        return GGTK_ERR_USAGE;
    }
    const double start = seconds_now();
    const int32_t index = run->next_chunk;
    const inf_token *chunk = run->tokens + (size_t)index * run->n_ctx;
    memcpy(run->batch, chunk, (size_t)run->n_ctx * sizeof *chunk);
    if (run->bos != INF_TOKEN_NONE)
        run->batch[0] = run->bos;
    ggtk_status status;
    inf_session_reset(run->session);
    ggtk_error decode_err;
    /* Collecting an imatrix, every position goes through every layer (all logits). */
    const int32_t first_output = run->imatrix ? 0 : run->first;
    status = inf_session_decode(run->session, run->batch, run->n_ctx, first_output, &decode_err);
    if (status == GGTK_OK && run->imatrix)
        status = inf_imatrix_status(run->imatrix, &decode_err);
    if (status != GGTK_OK)
        return ggtk_error_set(err, status, decode_err.offset, "chunk %d: %s", index + 1,
                              decode_err.message);
    /* The rows stay on the session's device unless a base file is written from them. */
    run->row_offset = run->first - first_output;
    const float *logits = NULL;
    if (run->writer || !session_device_logits(run->session, NULL))
        logits = inf_session_logits(run->session, NULL) + (size_t)run->row_offset * run->n_vocab;
    const inf_kld_stats kld_before = run->kld;
    status = score_chunk(run, logits, chunk, index, err);
    if (status != GGTK_OK)
        return status;
    add_chunk(run);
    double chunk_sum = 0;
    for (int32_t r = 0; r < run->n_scored; r++)
        chunk_sum += run->nll[r];
    result->index = index;
    result->ppl = inf_ppl_stats_ppl(&run->stats);
    result->chunk_ppl = exp(chunk_sum / run->n_scored);
    result->chunk_kld = run->base ? (run->kld.sum_kld - kld_before.sum_kld) / run->n_scored : NAN;
    result->seconds = seconds_now() - start;
    run->next_chunk++;
    return GGTK_OK;
}

const char *inf_perplexity_output_temp_path(const inf_perplexity *run)
{
    return run->writer ? inf_kld_base_writer_temp_path(run->writer) : NULL;
}

ggtk_status inf_perplexity_finish(inf_perplexity *run, ggtk_error *err)
{
    if (!run->writer)
        return GGTK_OK;
    inf_kld_base_writer *writer = run->writer;
    run->writer = NULL;
    return inf_kld_base_writer_finish(writer, err);
}

inf_kld_summary inf_perplexity_kld_summary(inf_perplexity *run)
{
    if (!run->base) {
        inf_kld_summary none = {0};
        return none;
    }
    size_t n = (size_t)run->next_chunk * (size_t)run->n_scored;
    return inf_kld_summarize(&run->kld, run->kld_values, run->p_diff_values, n);
}
