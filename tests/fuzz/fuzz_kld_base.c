/* fuzz_kld_base.c - libFuzzer harness of the KL-divergence base-file reader
 * (libinfer/src/eval/kld_file.c), fed from memory through fmemopen(). A refused input must carry
 * one line naming it; an accepted one must have header fields in range, every token in the
 * vocabulary, no more data than the input holds, and every chunk must either read as rows whose
 * decoded log-probabilities are finite and at most 0 (so that no score can turn NaN), or be
 * refused with a message. Any other outcome aborts. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "eval/kld_file.h"
#include "fuzz_input.h"

/* Every log-probability a row encodes: scale * q + lp_min, finite and at most 0 (a little slack
 * for rounding). */
static bool row_decodes(const uint16_t *row, int32_t n_vocab)
{
    float header[2];
    memcpy(header, row, sizeof header);
    for (int32_t i = 0; i < n_vocab; i++) {
        float log_p = header[0] * row[4 + i] + header[1];
        if (!isfinite(log_p) || log_p > 1e-2f)
            return false;
    }
    return true;
}

static void check_chunks(inf_kld_base *b, size_t size)
{
    const int32_t n_ctx = inf_kld_base_n_ctx(b), n_vocab = inf_kld_base_n_vocab(b);
    const int32_t n_chunk = inf_kld_base_n_chunk(b);
    const size_t n_rows = (size_t)(n_ctx - 1 - n_ctx / 2), words = inf_logprob_row_words(n_vocab);
    if (n_ctx < 3 || n_vocab < 1 || n_chunk < 1 || (size_t)n_chunk * (size_t)n_ctx * 4 > size ||
        n_rows * words * 2 > size)
        abort();
    for (size_t i = 0; i < (size_t)n_chunk * (size_t)n_ctx; i++)
        if (inf_kld_base_tokens(b)[i] < 0 || inf_kld_base_tokens(b)[i] >= n_vocab)
            abort();
    uint16_t *rows = malloc(n_rows * words * sizeof *rows);
    ggtk_error err;
    for (int32_t c = 0; c < n_chunk; c++) {
        err.message[0] = '\0';
        if (inf_kld_base_read_chunk(b, c, rows, &err) != GGTK_OK) {
            if (!fuzz_stream_message_ok(err.message))
                abort();
            continue;
        }
        for (size_t r = 0; r < n_rows; r++)
            if (!row_decodes(rows + r * words, n_vocab))
                abort();
    }
    if (inf_kld_base_read_chunk(b, n_chunk, rows, &err) != GGTK_ERR_USAGE)
        abort();
    free(rows);
}

static bool read_input(FILE *file, size_t size, ggtk_error *err)
{
    inf_kld_base *b = kld_base_open_stream(file, "fuzz", err);
    if (!b)
        return false;
    if (inf_kld_base_get_format(b) == INF_KLD_BASE_LLAMA) /* compact: fuzz_kld_compact's */
        check_chunks(b, size);
    inf_kld_base_close(b);
    return true;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fuzz_stream_input(data, size, read_input);
    return 0;
}
