/* main.c - gguf-eval: perplexity and KL-divergence of a GGUF model on a text, as llama.cpp's
 * llama-perplexity computes them (see --help). The work is libinfer's inf_model.h and inf_eval.h;
 * this file only sequences it: load, tokenize, run the chunks with progress, report. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include "eval_tool.h"
#include "output_path.h"
#include "plot_svg.h"
#include "signals.h"
#include "text_file.h"
#include "tool_stdout.h"

/* Everything one run holds, freed in one place. */
typedef struct eval_state {
    eval_options opts;
    inf_model *model;
    double load_seconds;
    inf_session *session;
    inf_kld_base *base;
    inf_perplexity *run;
    inf_imatrix *imatrix; /* --imatrix-out, else NULL */
    inf_token *tokens;
    size_t n_tokens;
    char member[256];
    eval_history history;
    int base_slot;  /* the temporary base file's tool_signals_track() slot */
    ggtk_error err; /* the failure main() reports */
} eval_state;

static double now_seconds(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static int fail(const ggtk_error *err)
{
    fprintf(stderr, "gguf-eval: error: %s\n", err->message);
    return EXIT_FAILED;
}

/* Read and tokenize the text (BOS prepended when the vocabulary adds one). */
static bool load_text(eval_state *st)
{
    char *text;
    size_t len;
    if (text_file_read(st->opts.text, &text, &len, st->member, sizeof st->member, &st->err) !=
        GGTK_OK)
        return false;
    const inf_vocab *vocab = inf_model_get_vocab(st->model);
    if (inf_vocab_adds_eos(vocab)) {
        ggtk_error_set(&st->err, GGTK_ERR_UNSUPPORTED, GGTK_NO_OFFSET,
                       "%s: the vocabulary appends EOS to every text, which perplexity does not "
                       "support (as in llama-perplexity)", st->opts.model);
        free(text);
        return false;
    }
    ggtk_status status = inf_vocab_tokenize(vocab, text, len, INF_TOKENIZE_ADD_SPECIAL,
                                            &st->tokens, &st->n_tokens, &st->err);
    free(text);
    if (status != GGTK_OK)
        ggtk_error_set(&st->err, status, GGTK_NO_OFFSET,
                       "%s: tokenizing failed (out of memory or text over 4 GiB)", st->opts.text);
    return status == GGTK_OK;
}

/* Model, session, and the tokens (from the text or the base file). */
static bool prepare(eval_state *st)
{
    /* The imatrix collector reads activations on the host: the default device is then the
     * CPU. */
    if (st->opts.imatrix_out && st->opts.device == INF_DEVICE_AUTO)
        st->opts.device = INF_DEVICE_CPU;
    /* A device that cannot be used is refused before the model is read. */
    if (inf_device_check(st->opts.device, &st->err) != GGTK_OK)
        return false;
    inf_model_params mp = {.use_mmap = st->opts.use_mmap, .use_mlock = st->opts.use_mlock};
    double start = now_seconds();
    st->model = inf_model_open(st->opts.model, &mp, &st->err);
    st->load_seconds = now_seconds() - start;
    if (!st->model)
        return false;
    int32_t n_ctx = st->opts.n_ctx;
    if (st->opts.kld) {
        st->base = inf_kld_base_open(st->opts.kld_base, &st->err);
        if (!st->base)
            return false;
        if (st->opts.n_ctx_given && st->opts.n_ctx != inf_kld_base_n_ctx(st->base)) {
            ggtk_error_set(&st->err, GGTK_ERR_USAGE, GGTK_NO_OFFSET,
                           "-c %d differs from the base file's context of %d (leave -c out to "
                           "use it)", st->opts.n_ctx, inf_kld_base_n_ctx(st->base));
            return false;
        }
        n_ctx = inf_kld_base_n_ctx(st->base);
    }
    uint32_t n_ctx_train = inf_model_get_hparams(st->model)->n_ctx_train;
    if ((uint32_t)n_ctx > n_ctx_train) {
        ggtk_error_set(&st->err, GGTK_ERR_USAGE, GGTK_NO_OFFSET,
                       "-c %d exceeds the model's context length of %u", n_ctx, n_ctx_train);
        return false;
    }
    if (!st->opts.kld && !load_text(st))
        return false;
    inf_session_params sp = {.n_ctx = n_ctx,
                             .n_batch = st->opts.n_batch < n_ctx ? st->opts.n_batch : n_ctx,
                             .n_threads = st->opts.n_threads > 0 ? st->opts.n_threads
                                                                 : (int)sysconf(_SC_NPROCESSORS_ONLN),
                             .kv_type = st->opts.kv_type, .device = st->opts.device,
                             .n_gpu_layers = st->opts.n_gpu_layers};
    st->session = inf_session_new(st->model, &sp, &st->err);
    if (!st->session)
        return false;
    if (st->opts.imatrix_out && !(st->imatrix = eval_imatrix_new(&st->opts, n_ctx, &st->err)))
        return false;
    inf_perplexity_params pp = {.n_ctx = n_ctx, .n_chunks = st->opts.n_chunks,
                                .kld_base_out = st->opts.kld ? NULL : st->opts.kld_base,
                                .kld_base_out_format = st->opts.kld_base_format,
                                .kld_compact = st->opts.kld_compact,
                                .kld_base_in = st->base, .imatrix = st->imatrix};
    /* The run creates the temporary base file; no signal may find it untracked. */
    tool_signals_hold();
    st->run = inf_perplexity_new(st->session, st->opts.kld ? NULL : st->tokens, st->n_tokens, &pp,
                                 &st->err);
    const char *temp = st->run ? inf_perplexity_output_temp_path(st->run) : NULL;
    st->base_slot = temp ? tool_signals_track(temp) : -1;
    tool_signals_release();
    return st->run != NULL;
}

static void print_progress(const inf_chunk_result *r, int32_t n_chunks, int32_t n_ctx,
                           double elapsed, bool tty)
{
    int32_t done = r->index + 1;
    double rate = done * (double)n_ctx / elapsed;
    double eta = elapsed / done * (n_chunks - done);
    fprintf(stderr, "%schunk %d/%d: %.2f s, %.1f tokens/s, ETA %.0f s%s", tty ? "\r\033[K" : "",
            done, n_chunks, r->seconds, rate, eta, tty ? "" : "\n");
}

/* Evaluate every chunk, printing results (stdout) and progress (stderr). */
static bool run_chunks(eval_state *st, double *seconds)
{
    int32_t n = inf_perplexity_n_chunks(st->run);
    eval_history *h = &st->history;
    h->ppl = calloc((size_t)n, sizeof *h->ppl);
    h->chunk_ppl = calloc((size_t)n, sizeof *h->chunk_ppl);
    h->chunk_kld = st->base ? calloc((size_t)n, sizeof *h->chunk_kld) : NULL;
    if (!h->ppl || !h->chunk_ppl || (st->base && !h->chunk_kld)) {
        ggtk_error_set(&st->err, GGTK_ERR_NOMEM, GGTK_NO_OFFSET, "out of memory");
        return false;
    }
    bool tty_out = isatty(STDOUT_FILENO), tty_err = isatty(STDERR_FILENO);
    int32_t n_ctx = inf_session_get_params(st->session).n_ctx;
    double start = now_seconds();
    for (int32_t i = 0; i < n; i++) {
        inf_chunk_result r;
        if (inf_perplexity_next(st->run, &r, &st->err) != GGTK_OK)
            return false;
        h->ppl[i] = r.ppl;
        h->chunk_ppl[i] = r.chunk_ppl;
        if (h->chunk_kld)
            h->chunk_kld[i] = r.chunk_kld;
        h->n = i + 1;
        if (tty_err)
            fputs("\r\033[K", stderr);
        if (!st->opts.json)
            eval_print_chunk(&r, st->run, st->base != NULL, tty_out);
        print_progress(&r, n, n_ctx, now_seconds() - start, tty_err);
        if (st->imatrix && eval_imatrix_after_chunk(&st->opts, st->imatrix, i + 1, &st->err) !=
                               GGTK_OK)
            return false;
    }
    if (tty_err)
        fputs("\r\033[K", stderr);
    *seconds = now_seconds() - start;
    if (st->imatrix && eval_imatrix_finish(&st->opts, st->imatrix, &st->err) != GGTK_OK)
        return false;
    return inf_perplexity_finish(st->run, &st->err) == GGTK_OK;
}

static bool write_plot(eval_state *st)
{
    if (!st->opts.plot)
        return true;
    char title[512];
    snprintf(title, sizeof title, "%s%s%s", st->opts.model, st->base ? " vs base " : "",
             st->base ? st->opts.kld_base : "");
    return plot_svg_write(st->opts.plot, title, st->history.chunk_ppl, st->history.ppl,
                          st->history.chunk_kld, st->history.n, &st->err) == GGTK_OK;
}

static void free_state(eval_state *st)
{
    inf_perplexity_free(st->run);
    inf_imatrix_free(st->imatrix);
    /* The temporary base file is gone now: renamed into place, or removed by the free. */
    tool_signals_untrack(st->base_slot);
    inf_session_free(st->session);
    inf_kld_base_close(st->base);
    inf_model_close(st->model);
    free(st->tokens);
    free(st->history.ppl);
    free(st->history.chunk_ppl);
    free(st->history.chunk_kld);
}

int main(int argc, char **argv)
{
    tool_signals_install();
    static eval_state st = {.base_slot = -1};
    bool exit_now;
    int rc = eval_options_parse(&st.opts, argc, argv, &exit_now);
    if (exit_now)
        return tool_stdout_close("gguf-eval: error: ") ? rc : EXIT_FAILED;
    ggtk_error err;
    if (eval_options_check_paths(&st.opts, &err) != GGTK_OK)
        return fail(&err);
    if (st.opts.convert_in)
        return eval_convert_base(&st.opts, &err) == GGTK_OK ? 0 : fail(&err);
    eval_summary summary = {.opts = &st.opts, .text_member = st.member};
    double seconds = 0;
    if (!prepare(&st)) {
        rc = fail(&st.err);
        free_state(&st);
        return rc;
    }
    summary.model = st.model;
    summary.session = st.session;
    summary.load_seconds = st.load_seconds;
    summary.n_text_tokens = st.n_tokens;
    summary.n_ctx = inf_session_get_params(st.session).n_ctx;
    summary.n_chunks = inf_perplexity_n_chunks(st.run);
    summary.n_scored = inf_perplexity_scored_per_chunk(st.run);
    eval_print_setup(&summary);
    bool ran = run_chunks(&st, &seconds);
    if (!ran || !write_plot(&st)) {
        rc = fail(&st.err);
        free_state(&st);
        return rc;
    }
    struct rusage usage;
    getrusage(RUSAGE_SELF, &usage);
    inf_kld_summary kld;
    if (st.base)
        kld = inf_perplexity_kld_summary(st.run);
    summary.stats = inf_perplexity_stats(st.run);
    summary.kld = st.base ? &kld : NULL;
    summary.history = &st.history;
    summary.seconds = seconds;
    summary.tokens_per_second = summary.n_chunks * (double)summary.n_ctx / seconds;
    summary.peak_rss_kib = usage.ru_maxrss;
    if (st.opts.json)
        eval_print_json(&summary);
    else
        eval_print_final(&summary);
    eval_print_speed(&summary);
    free_state(&st);
    return tool_stdout_close("gguf-eval: error: ") ? 0 : EXIT_FAILED;
}
