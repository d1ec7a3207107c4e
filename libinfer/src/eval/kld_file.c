/* kld_file.c - base log-probability files: the public reader and writer of both formats, and
 * llama-perplexity's --kl-divergence-base layout, so that a base written by either tool can be
 * compared against by the other (the compact format's bytes are kld_compact_file.c's). Written
 * through a temporary file renamed into place (atomic_file.h); read with every header field and
 * the file size checked, a chunk's rows a group at a time, so memory does not grow with the
 * file. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <ggtk/atomic_file.h>

#include "kld_file.h"

static const char BASE_MAGIC[8] = {'_', 'l', 'o', 'g', 'i', 't', 's', '_'};
enum { BASE_HEADER_BYTES = 8 + 3 * 4 };


size_t inf_logprob_row_words(int32_t n_vocab) { return 2 * (((size_t)n_vocab + 1) / 2) + 4; }

/* ---------------------------------------------------------------------------------------------
 * Writing
 * ------------------------------------------------------------------------------------------- */

inf_kld_compact_params inf_kld_compact_params_default(void)
{
    inf_kld_compact_params p = {.epsilon = 1e-4f, .max_entries = 1 << 16};
    return p;
}

const char *inf_kld_base_format_name(inf_kld_base_format format)
{
    return format == INF_KLD_BASE_COMPACT ? "compact" : "llama";
}

/* The writer of either format: checks the shape, opens the temporary file. */
static inf_kld_base_writer *writer_new(const char *path, inf_kld_base_format format,
                                       int32_t n_ctx, int32_t n_vocab, int32_t n_chunk,
                                       ggtk_error *err)
{
    if (n_ctx < 3 || n_vocab < 1 || n_chunk < 1) {
        ggtk_error_set(err, GGTK_ERR_INVALID, GGTK_NO_OFFSET,
                       "%s: bad base file shape (n_ctx %d, n_vocab %d, "
                       "n_chunk %d)", path, n_ctx, n_vocab, n_chunk);
        return NULL;
    }
    inf_kld_base_writer *w = calloc(1, sizeof *w);
    if (!w) {
        ggtk_error_set(err, GGTK_ERR_NOMEM, GGTK_NO_OFFSET, "%s: out of memory", path);
        return NULL;
    }
    if (!(w->out = ggtk_atomic_file_open(path, err))) {
        free(w);
        return NULL;
    }
    w->format = format;
    w->file = ggtk_atomic_file_stream(w->out);
    w->path = ggtk_atomic_file_path(w->out);
    w->n_ctx = n_ctx;
    w->n_vocab = n_vocab;
    w->n_chunk = n_chunk;
    w->row_words = inf_logprob_row_words(n_vocab);
    w->rows_per_chunk = kld_rows_per_chunk(n_ctx);
    w->rows_expected = (int64_t)n_chunk * w->rows_per_chunk;
    return w;
}

inf_kld_base_writer *inf_kld_base_writer_open(const char *path, int32_t n_ctx, int32_t n_vocab,
                                              int32_t n_chunk, const inf_token *tokens,
                                              ggtk_error *err)
{
    inf_kld_base_writer *w = writer_new(path, INF_KLD_BASE_LLAMA, n_ctx, n_vocab, n_chunk, err);
    if (!w)
        return NULL;
    uint32_t ctx_u32 = (uint32_t)n_ctx;
    size_t n_tokens = (size_t)n_chunk * (size_t)n_ctx;
    bool ok = fwrite(BASE_MAGIC, sizeof BASE_MAGIC, 1, w->file) == 1 &&
              fwrite(&ctx_u32, 4, 1, w->file) == 1 && fwrite(&n_vocab, 4, 1, w->file) == 1 &&
              fwrite(&n_chunk, 4, 1, w->file) == 1 &&
              fwrite(tokens, sizeof *tokens, n_tokens, w->file) == n_tokens;
    if (!ok) {
        ggtk_error_set(err, GGTK_ERR_IO, GGTK_NO_OFFSET,
                       "%s: write failed: %s", path, strerror(errno));
        inf_kld_base_writer_close(w);
        return NULL;
    }
    return w;
}

inf_kld_base_writer *inf_kld_base_writer_open_compact(const char *path, int32_t n_ctx,
                                                      int32_t n_vocab, int32_t n_chunk,
                                                      const inf_token *tokens,
                                                      const inf_kld_compact_params *params,
                                                      ggtk_error *err)
{
    if (!(params->epsilon >= 0 && params->epsilon < 1) || params->max_entries < 1) {
        ggtk_error_set(err, GGTK_ERR_USAGE, GGTK_NO_OFFSET,
                       "%s: compact base parameters epsilon %g (expected 0 <= epsilon < 1) and "
                       "max_entries %d (expected >= 1)", path, params->epsilon,
                       params->max_entries);
        return NULL;
    }
    inf_kld_base_writer *w = writer_new(path, INF_KLD_BASE_COMPACT, n_ctx, n_vocab, n_chunk, err);
    if (!w)
        return NULL;
    w->params = *params;
    if (w->params.max_entries > n_vocab)
        w->params.max_entries = n_vocab;
    if (!compact_writer_start(w, tokens, err)) {
        inf_kld_base_writer_close(w);
        return NULL;
    }
    return w;
}

inf_kld_base_format inf_kld_base_writer_format(const inf_kld_base_writer *w) { return w->format; }

ggtk_status inf_kld_base_writer_write(inf_kld_base_writer *w, const uint16_t *rows, size_t n_rows,
                                      ggtk_error *err)
{
    if ((int64_t)n_rows > w->rows_expected - w->rows_written) {
        ggtk_error_set(err, GGTK_ERR_USAGE, GGTK_NO_OFFSET,
                       "%s: more rows than the header announces", w->path);
        return GGTK_ERR_USAGE;
    }
    if (w->format == INF_KLD_BASE_COMPACT)
        return compact_writer_write_llama_rows(w, rows, n_rows, err);
    if (fwrite(rows, w->row_words * sizeof *rows, n_rows, w->file) != n_rows) {
        ggtk_error_set(err, GGTK_ERR_IO, GGTK_NO_OFFSET,
                       "%s: write failed: %s", w->path, strerror(errno));
        return GGTK_ERR_IO;
    }
    w->rows_written += (int64_t)n_rows;
    return GGTK_OK;
}

ggtk_status inf_kld_base_writer_finish(inf_kld_base_writer *w, ggtk_error *err)
{
    if (w->rows_written != w->rows_expected) {
        ggtk_error_set(err, GGTK_ERR_USAGE, GGTK_NO_OFFSET,
                       "%s: only %lld of %lld rows written", w->path,
                       (long long)w->rows_written, (long long)w->rows_expected);
        inf_kld_base_writer_close(w);
        return GGTK_ERR_USAGE;
    }
    ggtk_status status = w->format == INF_KLD_BASE_COMPACT ? compact_writer_end(w, err) : GGTK_OK;
    if (status == GGTK_OK)
        status = ggtk_atomic_file_commit(w->out, err);
    inf_kld_base_writer_close(w);
    return status;
}

void inf_kld_base_writer_close(inf_kld_base_writer *w)
{
    if (!w)
        return;
    ggtk_atomic_file_close(w->out);
    compact_writer_free(w);
    free(w);
}

const char *inf_kld_base_writer_temp_path(const inf_kld_base_writer *w)
{
    return ggtk_atomic_file_temp_path(w->out);
}

/* ---------------------------------------------------------------------------------------------
 * Reading
 * ------------------------------------------------------------------------------------------- */


/* Check the header fields, then that the file holds exactly the chunks the header announces.
 * Only after this is anything allocated, so a hostile header costs no memory. */
static bool base_check_layout(inf_kld_base *b, uint32_t n_ctx, uint64_t file_size,
                              ggtk_error *err)
{
    if (n_ctx < 3 || n_ctx > (1u << 24)) {
        ggtk_error_set(err, GGTK_ERR_INVALID, 8,
                       "%s: n_ctx at byte 8 is %u, expected 3..%u", b->path,
                       n_ctx, 1u << 24);
        return false;
    }
    if (b->n_vocab < 1 || b->n_vocab > (1 << 24)) {
        ggtk_error_set(err, GGTK_ERR_INVALID, 12,
                       "%s: n_vocab at byte 12 is %d, expected 1..%d", b->path,
                       b->n_vocab, 1 << 24);
        return false;
    }
    if (b->n_chunk < 1) {
        ggtk_error_set(err, GGTK_ERR_INVALID, 16,
                       "%s: n_chunk at byte 16 is %d, expected > 0", b->path,
                       b->n_chunk);
        return false;
    }
    b->n_ctx = (int32_t)n_ctx;
    /* n_ctx <= 2^24 and row words <= 2^24 + 6: a chunk's bytes fit 64 bits; the chunk count is
     * compared with what the file can hold by division, so no product overflows. */
    b->chunk_bytes = (uint64_t)kld_rows_per_chunk(n_ctx) * inf_logprob_row_words(b->n_vocab) * 2;
    uint64_t bytes_per_chunk = (uint64_t)n_ctx * sizeof(inf_token) + b->chunk_bytes;
    uint64_t room = file_size > BASE_HEADER_BYTES ? file_size - BASE_HEADER_BYTES : 0;
    if ((uint64_t)b->n_chunk > room / bytes_per_chunk) {
        ggtk_error_set(err, GGTK_ERR_TRUNCATED, file_size, "%s: truncated: n_chunk at byte 16 is %d, "
                       "but the file's %llu bytes hold %llu chunks of n_ctx %u and n_vocab %d",
                       b->path, b->n_chunk, (unsigned long long)file_size,
                       (unsigned long long)(room / bytes_per_chunk), n_ctx, b->n_vocab);
        return false;
    }
    b->rows_offset = BASE_HEADER_BYTES + (uint64_t)b->n_chunk * n_ctx * sizeof(inf_token);
    uint64_t expected = BASE_HEADER_BYTES + (uint64_t)b->n_chunk * bytes_per_chunk;
    if (file_size != expected) {
        ggtk_error_set(err, GGTK_ERR_LAYOUT, expected, "%s: trailing data: the header (n_ctx %u, "
                       "n_vocab %d, n_chunk %d) announces %llu bytes, the file has %llu", b->path,
                       n_ctx, b->n_vocab, b->n_chunk, (unsigned long long)expected,
                       (unsigned long long)file_size);
        return false;
    }
    return true;
}

bool kld_base_read_tokens(inf_kld_base *b, uint64_t offset, ggtk_error *err)
{
    size_t n = (size_t)b->n_chunk * (size_t)b->n_ctx;
    b->tokens = malloc(n * sizeof *b->tokens);
    if (!b->tokens) {
        ggtk_error_set(err, GGTK_ERR_NOMEM, GGTK_NO_OFFSET,
                       "%s: out of memory for %zu tokens", b->path, n);
        return false;
    }
    if (fseeko(b->file, (off_t)offset, SEEK_SET) != 0 ||
        fread(b->tokens, sizeof *b->tokens, n, b->file) != n) {
        ggtk_error_set(err, ferror(b->file) ? GGTK_ERR_IO : GGTK_ERR_TRUNCATED, offset,
                       "%s: cannot read the tokens at byte %llu: %s", b->path,
                       (unsigned long long)offset,
                       ferror(b->file) ? strerror(errno) : "unexpected end of file");
        return false;
    }
    for (size_t i = 0; i < n; i++) {
        if (b->tokens[i] < 0 || b->tokens[i] >= b->n_vocab) {
            ggtk_error_set(err, GGTK_ERR_INVALID, offset + 4 * i,
                           "%s: token %zu (at byte %llu) is %d, outside the "
                           "vocabulary of %d", b->path, i, (unsigned long long)(offset + 4 * i),
                           b->tokens[i], b->n_vocab);
            return false;
        }
    }
    return true;
}

/* Size of a stream by seeking to its end: works for files and fmemopen() buffers alike. */
static bool stream_size(FILE *file, uint64_t *size)
{
    if (fseeko(file, 0, SEEK_END) != 0)
        return false;
    off_t end = ftello(file);
    if (end < 0 || fseeko(file, 0, SEEK_SET) != 0)
        return false;
    *size = (uint64_t)end;
    return true;
}

inf_kld_base *kld_base_open_stream(FILE *file, const char *path, ggtk_error *err)
{
    inf_kld_base *b = calloc(1, sizeof *b);
    if (!b || !(b->path = strdup(path))) {
        ggtk_error_set(err, GGTK_ERR_NOMEM, GGTK_NO_OFFSET, "%s: out of memory", path);
        free(b);
        fclose(file);
        return NULL;
    }
    b->file = file;
    uint64_t size;
    if (!stream_size(file, &size)) {
        ggtk_error_set(err, GGTK_ERR_IO, GGTK_NO_OFFSET,
                       "%s: cannot find the size (not a regular file?): %s", path, strerror(errno));
        inf_kld_base_close(b);
        return NULL;
    }
    /* The format is told by the magic: llama-perplexity's 20-byte header or the compact one. */
    uint8_t header[COMPACT_HEADER_BYTES];
    const size_t got = fread(header, 1, sizeof header, file);
    bool ok;
    if (got >= BASE_HEADER_BYTES && memcmp(header, BASE_MAGIC, sizeof BASE_MAGIC) == 0) {
        uint32_t n_ctx;
        memcpy(&n_ctx, header + 8, 4);
        memcpy(&b->n_vocab, header + 12, 4);
        memcpy(&b->n_chunk, header + 16, 4);
        ok = base_check_layout(b, n_ctx, size, err) &&
             kld_base_read_tokens(b, BASE_HEADER_BYTES, err);
    } else if (got == COMPACT_HEADER_BYTES && memcmp(header, COMPACT_MAGIC, 8) == 0) {
        b->format = INF_KLD_BASE_COMPACT;
        ok = compact_reader_open(b, header, size, err);
    } else {
        ggtk_error_set(err, GGTK_ERR_MAGIC, 0, "%s: not a base log-probability file (expected "
                       "\"_logits_\" and a 20-byte header, or \"" COMPACT_MAGIC "\" and a "
                       "32-byte one)", path);
        ok = false;
    }
    if (!ok) {
        inf_kld_base_close(b);
        return NULL;
    }
    return b;
}

inf_kld_base *inf_kld_base_open(const char *path, ggtk_error *err)
{
    FILE *file = fopen(path, "rb");
    if (!file) {
        ggtk_error_set(err, GGTK_ERR_IO, GGTK_NO_OFFSET, "%s: cannot open: %s", path,
                       strerror(errno));
        return NULL;
    }
    return kld_base_open_stream(file, path, err);
}

void inf_kld_base_close(inf_kld_base *b)
{
    if (!b)
        return;
    if (b->file)
        fclose(b->file);
    free(b->tokens);
    free(b->path);
    compact_reader_free(b);
    free(b);
}

int32_t inf_kld_base_n_ctx(const inf_kld_base *b) { return b->n_ctx; }
int32_t inf_kld_base_n_vocab(const inf_kld_base *b) { return b->n_vocab; }
int32_t inf_kld_base_n_chunk(const inf_kld_base *b) { return b->n_chunk; }
const inf_token *inf_kld_base_tokens(const inf_kld_base *b) { return b->tokens; }
inf_kld_base_format inf_kld_base_get_format(const inf_kld_base *b) { return b->format; }

bool inf_kld_base_get_compact_params(const inf_kld_base *b, inf_kld_compact_params *params)
{
    if (b->format != INF_KLD_BASE_COMPACT)
        return false;
    *params = b->params;
    return true;
}

/* Whether a writer can have made `row` (of a vocabulary of n_vocab): its two floats finite, the
 * scale in [0, 16 / 65535], and the log-probability of the most likely token, scale * 65535 +
 * lp_min (it is stored as 65535, or every word is 0 when the scale is 0), in [-ln n_vocab, 0];
 * each with a little slack for float rounding. Any other row would turn into NaN or nonsense
 * scores. */
static bool row_is_possible(const uint16_t *row, int32_t n_vocab)
{
    const float slack = 1e-3f;
    float header[2];
    memcpy(header, row, sizeof header);
    const float scale = header[0], top = scale * 65535.0f + header[1];
    return isfinite(scale) && isfinite(header[1]) && scale >= 0 &&
           scale <= LOGPROB_RANGE / 65535.0f * (1 + slack) && top <= slack &&
           top >= -logf((float)n_vocab) - slack;
}

ggtk_status inf_kld_base_read_rows(inf_kld_base *b, int32_t chunk, int32_t first_row,
                               int32_t n_rows, uint16_t *rows, ggtk_error *err)
{
    const int64_t per_chunk = kld_rows_per_chunk(b->n_ctx);
    if (b->format != INF_KLD_BASE_LLAMA || chunk < 0 || chunk >= b->n_chunk || first_row < 0 ||
        n_rows < 0 || first_row + (int64_t)n_rows > per_chunk) {
        ggtk_error_set(err, GGTK_ERR_USAGE, GGTK_NO_OFFSET,
                       "%s: no rows %d..%d of chunk %d in this %s base (it has %d chunks of "
                       "%lld rows)", b->path, first_row, first_row + n_rows - 1, chunk,
                       inf_kld_base_format_name(b->format), b->n_chunk, (long long)per_chunk);
        return GGTK_ERR_USAGE;
    }
    const size_t row_words = inf_logprob_row_words(b->n_vocab);
    const uint64_t offset = b->rows_offset + (uint64_t)chunk * b->chunk_bytes +
                            (uint64_t)first_row * row_words * 2;
    const size_t bytes = (size_t)n_rows * row_words * 2;
    if (fseeko(b->file, (off_t)offset, SEEK_SET) != 0 ||
        fread(rows, 1, bytes, b->file) != bytes) {
        return ggtk_error_set(err, GGTK_ERR_IO, offset, "%s: cannot read chunk %d at byte %llu: %s",
                              b->path, chunk + 1, (unsigned long long)offset,
                              ferror(b->file) ? strerror(errno) : "unexpected end of file");
    }
    for (int32_t r = 0; r < n_rows; r++) {
        const uint16_t *row = rows + (size_t)r * row_words;
        if (row_is_possible(row, b->n_vocab))
            continue;
        float header[2];
        memcpy(header, row, sizeof header);
        const uint64_t row_offset = offset + (uint64_t)r * row_words * 2;
        return ggtk_error_set(err, isfinite(header[0]) && isfinite(header[1]) ? GGTK_ERR_INVALID
                                                                                : GGTK_ERR_NONFINITE,
                              row_offset, "%s: chunk %d: corrupt row %lld at byte %llu (scale %g, "
                              "lp_min %g: not finite, or no log-probabilities a model can give)",
                              b->path, chunk + 1, (long long)(first_row + r),
                              (unsigned long long)row_offset, header[0], header[1]);
    }
    return GGTK_OK;
}

ggtk_status inf_kld_base_read_chunk(inf_kld_base *b, int32_t chunk, uint16_t *rows,
                                    ggtk_error *err)
{
    if (chunk < 0 || chunk >= b->n_chunk) {
        ggtk_error_set(err, GGTK_ERR_USAGE, GGTK_NO_OFFSET,
                       "%s: no chunk %d (the file has %d)", b->path, chunk,
                       b->n_chunk);
        return GGTK_ERR_USAGE;
    }
    return inf_kld_base_read_rows(b, chunk, 0, (int32_t)kld_rows_per_chunk(b->n_ctx), rows, err);
}
