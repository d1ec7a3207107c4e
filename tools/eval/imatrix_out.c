/* imatrix_out.c - gguf-eval's --imatrix-out: the importance matrix collected during the run,
 * written as llama-imatrix writes it (the final file, a rewrite every --output-frequency chunks,
 * a kept copy FILE.at_K every --save-frequency chunks). */
#include <stdio.h>
#include <string.h>

#include "eval_tool.h"
#include "signals.h"

static bool ends_with(const char *s, const char *suffix)
{
    size_t n = strlen(s), k = strlen(suffix);
    return n >= k && strcmp(s + n - k, suffix) == 0;
}

inf_imatrix *eval_imatrix_new(const eval_options *opts, int32_t n_ctx, ggtk_error *err)
{
    if (opts->imatrix_format == INF_IMATRIX_GGUF && !opts->imatrix_format_given &&
        !ends_with(opts->imatrix_out, ".gguf"))
        fprintf(stderr, "gguf-eval: warning: %s is written in the GGUF format; for the legacy "
                "format give --imatrix-format dat\n", opts->imatrix_out);
    /* llama-imatrix records the text as named on its command line. */
    const char *dataset = opts->kld ? opts->kld_base : opts->text;
    return inf_imatrix_new(n_ctx, dataset, err);
}

/* Write to `path`; signals wait until the file is complete and renamed into place. */
static ggtk_status save(const eval_options *opts, const inf_imatrix *imatrix, const char *path,
                        ggtk_error *err)
{
    tool_signals_hold();
    ggtk_status status = inf_imatrix_write(imatrix, path, opts->imatrix_format, err);
    tool_signals_release();
    return status;
}

ggtk_status eval_imatrix_after_chunk(const eval_options *opts, const inf_imatrix *imatrix,
                                     int32_t chunks_done, ggtk_error *err)
{
    ggtk_status status = GGTK_OK;
    if (chunks_done % opts->imatrix_out_freq == 0)
        status = save(opts, imatrix, opts->imatrix_out, err);
    if (status == GGTK_OK && opts->imatrix_save_freq > 0 &&
        chunks_done % opts->imatrix_save_freq == 0) {
        char path[4096];
        snprintf(path, sizeof path, "%s.at_%d", opts->imatrix_out, chunks_done);
        status = save(opts, imatrix, path, err);
    }
    return status;
}

ggtk_status eval_imatrix_finish(const eval_options *opts, const inf_imatrix *imatrix,
                                ggtk_error *err)
{
    if (inf_imatrix_n_entries(imatrix) == 0)
        return ggtk_error_set(err, GGTK_ERR_USAGE, GGTK_NO_OFFSET,
                              "%s: nothing was collected: every forward graph had fewer than 16 "
                              "tokens (-b), which llama-imatrix skips too", opts->imatrix_out);
    for (int64_t i = 0; i < inf_imatrix_n_entries(imatrix); i++) {
        const inf_imatrix_entry *e = inf_imatrix_entry_at(imatrix, i);
        double coverage = inf_imatrix_coverage(e);
        if (coverage < 1.0)
            fprintf(stderr, "gguf-eval: warning: imatrix entry %s has partial data (%.2f%% of "
                    "its matrices)%s\n", e->name, 100.0 * coverage,
                    opts->imatrix_format == INF_IMATRIX_LEGACY && coverage == 0.0
                        ? ": left out of the legacy file" : "");
    }
    ggtk_status status = save(opts, imatrix, opts->imatrix_out, err);
    if (status == GGTK_OK)
        fprintf(stderr, "imatrix: %lld entries over %d chunks of %d tokens written to %s\n",
                (long long)inf_imatrix_n_entries(imatrix), inf_imatrix_chunk_count(imatrix),
                inf_imatrix_chunk_size(imatrix), opts->imatrix_out);
    return status;
}
