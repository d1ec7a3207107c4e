/* kld_compact_file.c - ggtk's compact base file (docs/eval.md, "Compact base files"): per scored
 * position the entries of a sparse_row as LEB128 id gaps and 1-2 byte log-probability codes,
 * chunks one after the other, and a table of the chunks' end offsets at the end of the file so
 * that the reader checks the whole layout before reading any row. The reader parses rows from
 * the stream (memory: the rows asked for), checking every count, id, code and length. */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "kld_file.h"

/* Smallest row: two floats, the entry count, one id and one 1-byte code. */
enum { MIN_ROW_BYTES = 4 + 4 + 1 + 1 + 1 };

/* Largest row of max_entries entries (an id gap below 2^24 takes at most 4 LEB128 bytes). */
static uint64_t max_row_bytes(int32_t max_entries)
{
    return 4 + 4 + 5 + (uint64_t)max_entries * (4 + 2);
}

/* ---------------------------------------------------------------------------------------------
 * Writing
 * ------------------------------------------------------------------------------------------- */

static bool put(inf_kld_base_writer *w, const void *data, size_t n)
{
    w->offset += n;
    return fwrite(data, 1, n, w->file) == n;
}

static bool put_varint(inf_kld_base_writer *w, uint32_t v)
{
    uint8_t buf[5];
    size_t n = 0;
    do {
        buf[n++] = (uint8_t)((v & 0x7f) | (v >= 0x80 ? 0x80 : 0));
        v >>= 7;
    } while (v);
    return put(w, buf, n);
}

static ggtk_status write_failed(inf_kld_base_writer *w, ggtk_error *err)
{
    return ggtk_error_set(err, GGTK_ERR_IO, GGTK_NO_OFFSET, "%s: write failed: %s", w->path,
                          strerror(errno));
}

bool compact_writer_start(inf_kld_base_writer *w, const inf_token *tokens, ggtk_error *err)
{
    const size_t n_tokens = (size_t)w->n_chunk * (size_t)w->n_ctx;
    w->chunk_ends = malloc((size_t)w->n_chunk * sizeof *w->chunk_ends);
    w->tokens = malloc(n_tokens * sizeof *w->tokens);
    if (!w->chunk_ends || !w->tokens) {
        ggtk_error_set(err, GGTK_ERR_NOMEM, GGTK_NO_OFFSET, "%s: out of memory", w->path);
        return false;
    }
    memcpy(w->tokens, tokens, n_tokens * sizeof *tokens);
    uint8_t header[COMPACT_HEADER_BYTES];
    const uint32_t version = COMPACT_VERSION, n_ctx = (uint32_t)w->n_ctx;
    memcpy(header, COMPACT_MAGIC, 8);
    memcpy(header + 8, &version, 4);
    memcpy(header + 12, &n_ctx, 4);
    memcpy(header + 16, &w->n_vocab, 4);
    memcpy(header + 20, &w->n_chunk, 4);
    memcpy(header + 24, &w->params.epsilon, 4);
    memcpy(header + 28, &w->params.max_entries, 4);
    if (!put(w, header, sizeof header) || !put(w, tokens, n_tokens * sizeof *tokens)) {
        write_failed(w, err);
        return false;
    }
    return true;
}

static bool put_row(inf_kld_base_writer *w, const sparse_row *row)
{
    bool ok = put(w, &row->log_p_token, 4) && put(w, &row->rest, 4) &&
              put_varint(w, (uint32_t)row->n);
    for (int32_t e = 0; ok && e < row->n; e++)
        ok = put_varint(w, (uint32_t)(e == 0 ? row->ids[0] : row->ids[e] - row->ids[e - 1] - 1));
    for (int32_t e = 0; ok && e < row->n; e++) {
        const uint16_t code = sparse_code(row->log_p[e]);
        const uint8_t bytes[2] = {(uint8_t)(code >> 8), (uint8_t)code};
        ok = sparse_code_bytes(code) == 2 ? put(w, bytes, 2) : put(w, bytes + 1, 1);
    }
    return ok;
}

ggtk_status kld_base_writer_write_sparse(inf_kld_base_writer *w, const sparse_row *rows,
                                         size_t n_rows, ggtk_error *err)
{
    if (w->format != INF_KLD_BASE_COMPACT || (int64_t)n_rows > w->rows_expected - w->rows_written)
        return ggtk_error_set(err, GGTK_ERR_USAGE, GGTK_NO_OFFSET,
                              "%s: more rows than the header announces, or not a compact base",
                              w->path);
    for (size_t r = 0; r < n_rows; r++) {
        if (!put_row(w, &rows[r]))
            return write_failed(w, err);
        if (++w->rows_written % w->rows_per_chunk == 0)
            w->chunk_ends[w->rows_written / w->rows_per_chunk - 1] = w->offset;
    }
    return GGTK_OK;
}

/* A llama row's log-probabilities; the tokens it clamped to its floor (stored as 0 below the
 * top, more than 16 nats down) become -INFINITY, so they are neither entries nor rest mass, as
 * they are no term of llama-perplexity's sum. */
static void decode_llama_row(const uint16_t *row, int32_t n_vocab, float *log_p)
{
    float header[2];
    memcpy(header, row, sizeof header);
    for (int32_t i = 0; i < n_vocab; i++)
        log_p[i] = header[0] > 0 && row[4 + i] == 0 ? -INFINITY
                                                    : header[0] * row[4 + i] + header[1];
}

ggtk_status compact_writer_write_llama_rows(inf_kld_base_writer *w, const uint16_t *rows,
                                            size_t n_rows, ggtk_error *err)
{
    if (!w->log_p) { /* the first rows given: the scratch space for converting them */
        w->log_p = malloc((size_t)w->n_vocab * sizeof *w->log_p);
        if (!w->log_p || !sparse_scratch_init(&w->scratch, w->n_vocab)) {
            free(w->log_p);
            w->log_p = NULL;
            return ggtk_error_set(err, GGTK_ERR_NOMEM, GGTK_NO_OFFSET, "%s: out of memory",
                                  w->path);
        }
    }
    for (size_t r = 0; r < n_rows; r++) {
        const int64_t at = w->rows_written, chunk = at / w->rows_per_chunk;
        const int64_t pos = w->n_ctx / 2 + at % w->rows_per_chunk;
        const inf_token token = w->tokens[chunk * w->n_ctx + pos + 1];
        const uint16_t *row = rows + r * w->row_words;
        float header[2];
        memcpy(header, row, sizeof header);
        decode_llama_row(row, w->n_vocab, w->log_p);
        const float log_p_token = header[0] * row[4 + token] + header[1];
        if (!sparse_row_choose(w->log_p, w->n_vocab, log_p_token, &w->params, &w->scratch,
                               &w->converted))
            return ggtk_error_set(err, GGTK_ERR_NOMEM, GGTK_NO_OFFSET, "%s: out of memory",
                                  w->path);
        ggtk_status status = kld_base_writer_write_sparse(w, &w->converted, 1, err);
        if (status != GGTK_OK)
            return status;
    }
    return GGTK_OK;
}

ggtk_status compact_writer_end(inf_kld_base_writer *w, ggtk_error *err)
{
    if (!put(w, w->chunk_ends, (size_t)w->n_chunk * sizeof *w->chunk_ends))
        return write_failed(w, err);
    return GGTK_OK;
}

void compact_writer_free(inf_kld_base_writer *w)
{
    free(w->chunk_ends);
    free(w->tokens);
    free(w->log_p);
    sparse_row_free(&w->converted);
    sparse_scratch_free(&w->scratch);
}

/* ---------------------------------------------------------------------------------------------
 * Reading
 * ------------------------------------------------------------------------------------------- */

/* One line naming a header field, its offset and value, and what was expected. */
static bool bad_field(const inf_kld_base *b, ggtk_error *err, const char *field, uint64_t at,
                      double value, const char *expected)
{
    ggtk_error_set(err, GGTK_ERR_INVALID, at, "%s: %s at byte %llu is %g, expected %s", b->path,
                   field, (unsigned long long)at, value, expected);
    return false;
}

/* Check the header fields after the magic. */
static bool check_header(inf_kld_base *b, uint32_t version, uint32_t n_ctx, ggtk_error *err)
{
    const float eps = b->params.epsilon;
    if (version != COMPACT_VERSION) {
        ggtk_error_set(err, GGTK_ERR_VERSION, 8, "%s: compact base version %u at byte 8; this "
                       "build reads version %d", b->path, version, COMPACT_VERSION);
        return false;
    }
    if (n_ctx < 3 || n_ctx > (1u << 24))
        return bad_field(b, err, "n_ctx", 12, n_ctx, "3..16777216");
    if (b->n_vocab < 1 || b->n_vocab > (1 << 24))
        return bad_field(b, err, "n_vocab", 16, b->n_vocab, "1..16777216");
    if (b->n_chunk < 1)
        return bad_field(b, err, "n_chunk", 20, b->n_chunk, "> 0");
    if (!(eps >= 0 && eps < 1))
        return bad_field(b, err, "epsilon", 24, eps, "0 <= epsilon < 1");
    if (b->params.max_entries < 1 || b->params.max_entries > b->n_vocab)
        return bad_field(b, err, "max_entries", 28, b->params.max_entries, "1..n_vocab");
    b->n_ctx = (int32_t)n_ctx;
    return true;
}

/* Read the chunk table at the end of the file and check that the chunks tile the bytes between
 * the tokens and the table, each of a length its rows can have. */
static bool read_chunk_table(inf_kld_base *b, uint64_t size, ggtk_error *err)
{
    const uint64_t rows = (uint64_t)kld_rows_per_chunk(b->n_ctx);
    const uint64_t per_chunk = 4 * (uint64_t)b->n_ctx + 8 + rows * MIN_ROW_BYTES;
    const uint64_t room = size > COMPACT_HEADER_BYTES ? size - COMPACT_HEADER_BYTES : 0;
    if ((uint64_t)b->n_chunk > room / per_chunk) {
        ggtk_error_set(err, GGTK_ERR_TRUNCATED, size, "%s: truncated: n_chunk at byte 20 is %d, "
                       "but the file's %llu bytes hold at most %llu chunks of n_ctx %d", b->path,
                       b->n_chunk, (unsigned long long)size,
                       (unsigned long long)(room / per_chunk), b->n_ctx);
        return false;
    }
    const uint64_t table = size - 8 * (uint64_t)b->n_chunk;
    b->rows_offset = COMPACT_HEADER_BYTES + 4 * (uint64_t)b->n_chunk * (uint64_t)b->n_ctx;
    b->chunk_ends = malloc((size_t)b->n_chunk * sizeof *b->chunk_ends);
    if (!b->chunk_ends) {
        ggtk_error_set(err, GGTK_ERR_NOMEM, GGTK_NO_OFFSET, "%s: out of memory", b->path);
        return false;
    }
    if (fseeko(b->file, (off_t)table, SEEK_SET) != 0 ||
        fread(b->chunk_ends, 8, (size_t)b->n_chunk, b->file) != (size_t)b->n_chunk) {
        ggtk_error_set(err, GGTK_ERR_IO, table, "%s: cannot read the chunk table at byte %llu: %s",
                       b->path, (unsigned long long)table,
                       ferror(b->file) ? strerror(errno) : "unexpected end of file");
        return false;
    }
    uint64_t start = b->rows_offset;
    for (int32_t c = 0; c < b->n_chunk; c++) {
        const bool last = c == b->n_chunk - 1;
        const uint64_t least = start + rows * MIN_ROW_BYTES;
        uint64_t most = start + rows * max_row_bytes(b->params.max_entries);
        most = last || most > table ? table : most;
        const uint64_t end = b->chunk_ends[c];
        if (end < least || end > most || (last && end != table)) {
            ggtk_error_set(err, GGTK_ERR_LAYOUT, table + 8 * (uint64_t)c,
                           "%s: chunk table entry %d at byte %llu ends chunk %d at byte %llu, "
                           "expected %llu..%llu (the last one: the table's start)", b->path, c,
                           (unsigned long long)(table + 8 * (uint64_t)c), c + 1,
                           (unsigned long long)end, (unsigned long long)least,
                           (unsigned long long)most);
            return false;
        }
        start = end;
    }
    b->next_chunk = -1;
    return true;
}

bool compact_reader_open(inf_kld_base *b, const uint8_t *header, uint64_t size, ggtk_error *err)
{
    uint32_t version, n_ctx;
    memcpy(&version, header + 8, 4);
    memcpy(&n_ctx, header + 12, 4);
    memcpy(&b->n_vocab, header + 16, 4);
    memcpy(&b->n_chunk, header + 20, 4);
    memcpy(&b->params.epsilon, header + 24, 4);
    memcpy(&b->params.max_entries, header + 28, 4);
    return check_header(b, version, n_ctx, err) && read_chunk_table(b, size, err) &&
           kld_base_read_tokens(b, COMPACT_HEADER_BYTES, err);
}

void compact_reader_free(inf_kld_base *b)
{
    free(b->chunk_ends);
    sparse_row_free(&b->skipped);
}

/* Reading one chunk's rows from the stream: where it stands and where the chunk ends. */
typedef struct row_cursor {
    inf_kld_base *b;
    int32_t chunk, row;
    uint64_t row_start, end;
    ggtk_error *err;
    ggtk_status status; /* of the failure, if any */
} row_cursor;

static bool cursor_fail(row_cursor *c, ggtk_status status, const char *what)
{
    c->status = status;
    ggtk_error_set(c->err, status, c->b->next_offset, "%s: chunk %d: row %d at byte %llu: %s",
                   c->b->path, c->chunk + 1, c->row, (unsigned long long)c->row_start, what);
    return false;
}

static bool get_bytes(row_cursor *c, void *out, size_t n)
{
    if (c->b->next_offset + n > c->end)
        return cursor_fail(c, GGTK_ERR_LAYOUT, "the row runs past its chunk's end");
    if (fread(out, 1, n, c->b->file) != n)
        return cursor_fail(c, GGTK_ERR_IO, ferror(c->b->file) ? strerror(errno)
                                                              : "unexpected end of file");
    c->b->next_offset += n;
    return true;
}

static bool get_varint(row_cursor *c, uint32_t *v)
{
    *v = 0;
    for (int shift = 0; shift < 35; shift += 7) {
        uint8_t byte;
        if (!get_bytes(c, &byte, 1))
            return false;
        if (shift == 28 && byte > 0x0f)
            return cursor_fail(c, GGTK_ERR_OVERFLOW, "a number does not fit 32 bits");
        *v |= (uint32_t)(byte & 0x7f) << shift;
        if (!(byte & 0x80))
            return true;
    }
    return cursor_fail(c, GGTK_ERR_OVERFLOW, "a number does not fit 32 bits");
}

/* Parse one row: every count, id and code checked; the decoded log-probabilities and the rest
 * must add up to about 1 (the codes round each by at most 1/32 nat). */
static bool get_row(row_cursor *c, sparse_row *row)
{
    char what[160];
    uint32_t n;
    if (!get_bytes(c, &row->log_p_token, 4) || !get_bytes(c, &row->rest, 4) ||
        !get_varint(c, &n))
        return false;
    if (!isfinite(row->log_p_token) || row->log_p_token > 1e-3f || !(row->rest >= 0) ||
        row->rest > 1) {
        snprintf(what, sizeof what, "the scored token's log-probability %g or the rest mass %g "
                 "is outside (-inf, 0] or [0, 1]", row->log_p_token, row->rest);
        return cursor_fail(c, GGTK_ERR_INVALID, what);
    }
    if (n < 1 || n > (uint32_t)c->b->params.max_entries) {
        snprintf(what, sizeof what, "%u entries, expected 1..%d (max_entries)", n,
                 c->b->params.max_entries);
        return cursor_fail(c, GGTK_ERR_INVALID, what);
    }
    /* Every entry takes at least 2 bytes: a count the chunk cannot hold allocates nothing. */
    if (n > (c->end - c->b->next_offset) / 2) {
        snprintf(what, sizeof what, "%u entries, but %llu bytes are left in the chunk", n,
                 (unsigned long long)(c->end - c->b->next_offset));
        return cursor_fail(c, GGTK_ERR_TRUNCATED, what);
    }
    if (!sparse_row_reserve(row, (int32_t)n))
        return cursor_fail(c, GGTK_ERR_NOMEM, "out of memory");
    row->n = (int32_t)n;
    int64_t id = -1;
    for (uint32_t e = 0; e < n; e++) {
        uint32_t gap;
        if (!get_varint(c, &gap))
            return false;
        id += (int64_t)gap + 1;
        if (id >= c->b->n_vocab) {
            snprintf(what, sizeof what, "entry %u's id %lld is outside the vocabulary of %d", e,
                     (long long)id, c->b->n_vocab);
            return cursor_fail(c, GGTK_ERR_INVALID, what);
        }
        row->ids[e] = (inf_token)id;
    }
    double mass = row->rest;
    for (uint32_t e = 0; e < n; e++) {
        uint8_t bytes[2];
        if (!get_bytes(c, bytes, 1) || (bytes[0] >= 0x80 && !get_bytes(c, bytes + 1, 1)))
            return false;
        row->log_p[e] = sparse_code_value(bytes[0] >= 0x80 ? (uint16_t)(bytes[0] << 8 | bytes[1])
                                                           : bytes[0]);
        mass += expf(row->log_p[e]);
    }
    if (!(mass > 0.9 && mass < 1.1)) {
        snprintf(what, sizeof what, "its entries and rest carry a probability mass of %g, "
                 "expected 1", mass);
        return cursor_fail(c, GGTK_ERR_INVALID, what);
    }
    return true;
}

ggtk_status kld_base_read_sparse(inf_kld_base *b, int32_t chunk, int32_t first_row,
                                 int32_t n_rows, sparse_row *rows, ggtk_error *err)
{
    const int64_t per_chunk = kld_rows_per_chunk(b->n_ctx);
    if (b->format != INF_KLD_BASE_COMPACT || chunk < 0 || chunk >= b->n_chunk || first_row < 0 ||
        n_rows < 0 || first_row + (int64_t)n_rows > per_chunk)
        return ggtk_error_set(err, GGTK_ERR_USAGE, GGTK_NO_OFFSET,
                              "%s: no rows %d..%d of chunk %d in this %s base", b->path, first_row,
                              first_row + n_rows - 1, chunk, inf_kld_base_format_name(b->format));
    row_cursor c = {.b = b, .chunk = chunk, .end = b->chunk_ends[chunk], .err = err};
    if (chunk != b->next_chunk || first_row < b->next_row) {
        b->next_offset = chunk == 0 ? b->rows_offset : b->chunk_ends[chunk - 1];
        if (fseeko(b->file, (off_t)b->next_offset, SEEK_SET) != 0)
            return ggtk_error_set(err, GGTK_ERR_IO, b->next_offset, "%s: cannot seek to chunk %d "
                                  "at byte %llu: %s", b->path, chunk + 1,
                                  (unsigned long long)b->next_offset, strerror(errno));
        b->next_chunk = chunk;
        b->next_row = 0;
    }
    b->next_chunk = -1; /* until this read succeeds */
    for (int32_t r = b->next_row; r < first_row + n_rows; r++) {
        c.row = r;
        c.row_start = b->next_offset;
        if (!get_row(&c, r < first_row ? &b->skipped : &rows[r - first_row]))
            return c.status;
    }
    if (first_row + n_rows == per_chunk && b->next_offset != c.end) {
        c.row = (int32_t)per_chunk;
        c.row_start = b->next_offset;
        cursor_fail(&c, GGTK_ERR_LAYOUT, "bytes are left in the chunk after its last row");
        return GGTK_ERR_LAYOUT;
    }
    b->next_chunk = chunk;
    b->next_row = first_row + n_rows;
    return GGTK_OK;
}
