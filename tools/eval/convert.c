/* convert.c - gguf-eval --kl-divergence-base-convert IN OUT: a llama-format base file rewritten
 * as a compact one, a group of rows at a time (memory: a few rows, not the file), its temporary
 * file removed if a signal ends the run. */
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>

#include "eval_tool.h"
#include "signals.h"

enum { CONVERT_GROUP = 16 };

/* Copy every row of `in` into `out`, chunk by chunk. */
static ggtk_status copy_rows(inf_kld_base *in, inf_kld_base_writer *out, ggtk_error *err)
{
    const int32_t n_ctx = inf_kld_base_n_ctx(in), per_chunk = n_ctx - 1 - n_ctx / 2;
    /* No more rows than a chunk has: the buffer is never larger than the file. */
    const int32_t group = per_chunk < CONVERT_GROUP ? per_chunk : CONVERT_GROUP;
    uint16_t *rows = malloc((size_t)group * inf_logprob_row_words(inf_kld_base_n_vocab(in)) *
                            sizeof *rows);
    if (!rows)
        return ggtk_error_set(err, GGTK_ERR_NOMEM, GGTK_NO_OFFSET, "out of memory");
    ggtk_status status = GGTK_OK;
    for (int32_t c = 0; c < inf_kld_base_n_chunk(in) && status == GGTK_OK; c++) {
        for (int32_t first = 0; first < per_chunk && status == GGTK_OK; first += group) {
            const int32_t n = per_chunk - first < group ? per_chunk - first : group;
            status = inf_kld_base_read_rows(in, c, first, n, rows, err);
            if (status == GGTK_OK)
                status = inf_kld_base_writer_write(out, rows, (size_t)n, err);
        }
    }
    free(rows);
    return status;
}

ggtk_status eval_convert_base(const eval_options *opts, ggtk_error *err)
{
    inf_kld_base *in = inf_kld_base_open(opts->convert_in, err);
    if (!in)
        return err->status;
    if (inf_kld_base_get_format(in) != INF_KLD_BASE_LLAMA) {
        inf_kld_base_close(in);
        return ggtk_error_set(err, GGTK_ERR_USAGE, GGTK_NO_OFFSET, "%s: already a compact base "
                              "(only llama-format bases are converted)", opts->convert_in);
    }
    /* The writer creates the temporary file; no signal may find it untracked. */
    tool_signals_hold();
    inf_kld_base_writer *out = inf_kld_base_writer_open_compact(
        opts->convert_out, inf_kld_base_n_ctx(in), inf_kld_base_n_vocab(in),
        inf_kld_base_n_chunk(in), inf_kld_base_tokens(in), &opts->kld_compact, err);
    const int slot = out ? tool_signals_track(inf_kld_base_writer_temp_path(out)) : -1;
    tool_signals_release();
    ggtk_status status = out ? copy_rows(in, out, err) : err->status;
    if (status == GGTK_OK)
        status = inf_kld_base_writer_finish(out, err);
    else
        inf_kld_base_writer_close(out);
    tool_signals_untrack(slot);
    inf_kld_base_close(in);
    struct stat in_st, out_st;
    if (status == GGTK_OK && stat(opts->convert_in, &in_st) == 0 &&
        stat(opts->convert_out, &out_st) == 0)
        fprintf(stderr, "gguf-eval: %s (%lld bytes) -> %s (%lld bytes, compact, epsilon %g, at most "
                "%d entries per position): %.1fx smaller\n", opts->convert_in,
                (long long)in_st.st_size, opts->convert_out, (long long)out_st.st_size,
                opts->kld_compact.epsilon, opts->kld_compact.max_entries,
                (double)in_st.st_size / (double)out_st.st_size);
    return status;
}
