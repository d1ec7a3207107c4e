/* fuzz_kld_compact.c - libFuzzer harness of the compact base-file reader
 * (libinfer/src/eval/kld_compact_file.c), fed from memory through fmemopen() (the reader tells
 * the format by the magic, so llama-format inputs reach kld_file.c too). A refused input must
 * carry one line naming it; an accepted compact one must have its header fields in range, and
 * every chunk, read whole and again from its middle (a seek back), must either be refused in one
 * line or decode to rows a KL-divergence can use: 1..max_entries entries with ids increasing
 * inside the vocabulary, log-probabilities finite in (-16, 0], the rest mass in [0, 1] and the
 * scored token's log-probability finite and at most 0. Any other outcome aborts. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "eval/kld_file.h"
#include "fuzz_input.h"

enum { ROWS_MAX = 64 };

static bool row_usable(const sparse_row *row, const inf_kld_compact_params *params,
                       int32_t n_vocab)
{
    if (row->n < 1 || row->n > params->max_entries || !isfinite(row->log_p_token) ||
        row->log_p_token > 1e-3f || !(row->rest >= 0 && row->rest <= 1))
        return false;
    for (int32_t e = 0; e < row->n; e++)
        if (row->ids[e] < 0 || row->ids[e] >= n_vocab || (e > 0 && row->ids[e] <= row->ids[e - 1]) ||
            !(row->log_p[e] > -16.1f && row->log_p[e] <= 0))
            return false;
    return true;
}

/* Read rows [first, first + n) of a chunk; false when refused (with a good message). */
static bool read_rows(inf_kld_base *b, int32_t chunk, int32_t first, int32_t n, sparse_row *rows)
{
    ggtk_error err = {0};
    inf_kld_compact_params params;
    inf_kld_base_get_compact_params(b, &params);
    if (kld_base_read_sparse(b, chunk, first, n, rows, &err) != GGTK_OK) {
        if (!fuzz_stream_message_ok(err.message))
            abort();
        return false;
    }
    for (int32_t r = 0; r < n; r++)
        if (!row_usable(&rows[r], &params, inf_kld_base_n_vocab(b)))
            abort();
    return true;
}

static void check_compact(inf_kld_base *b, size_t size)
{
    const int32_t n_ctx = inf_kld_base_n_ctx(b), n_vocab = inf_kld_base_n_vocab(b);
    const int32_t n_chunk = inf_kld_base_n_chunk(b);
    inf_kld_compact_params params;
    if (!inf_kld_base_get_compact_params(b, &params) || n_ctx < 3 || n_vocab < 1 ||
        n_chunk < 1 || (size_t)n_chunk * (size_t)n_ctx * 4 > size || params.max_entries < 1 ||
        params.max_entries > n_vocab || !(params.epsilon >= 0 && params.epsilon < 1))
        abort();
    for (size_t i = 0; i < (size_t)n_chunk * (size_t)n_ctx; i++)
        if (inf_kld_base_tokens(b)[i] < 0 || inf_kld_base_tokens(b)[i] >= n_vocab)
            abort();
    const int32_t per_chunk = (int32_t)kld_rows_per_chunk(n_ctx);
    const int32_t n = per_chunk < ROWS_MAX ? per_chunk : ROWS_MAX;
    sparse_row rows[ROWS_MAX] = {{0}};
    for (int32_t c = 0; c < n_chunk; c++) {
        if (read_rows(b, c, 0, n, rows))
            read_rows(b, c, n / 2, n - n / 2, rows);
    }
    ggtk_error err;
    if (kld_base_read_sparse(b, n_chunk, 0, 1, rows, &err) != GGTK_ERR_USAGE)
        abort();
    for (int32_t r = 0; r < ROWS_MAX; r++)
        sparse_row_free(&rows[r]);
}

static bool read_input(FILE *file, size_t size, ggtk_error *err)
{
    inf_kld_base *b = kld_base_open_stream(file, "fuzz", err);
    if (!b)
        return false;
    if (inf_kld_base_get_format(b) == INF_KLD_BASE_COMPACT)
        check_compact(b, size);
    inf_kld_base_close(b);
    return true;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fuzz_stream_input(data, size, read_input);
    return 0;
}
