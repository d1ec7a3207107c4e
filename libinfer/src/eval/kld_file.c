/* kld_file.c - base log-probability files in llama-perplexity's --kl-divergence-base layout, so
 * that a base written by either tool can be compared against by the other. Written through a
 * temporary file renamed into place; read with every header field and the file size checked. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <ggtk/inf_eval.h>

static const char BASE_MAGIC[8] = {'_', 'l', 'o', 'g', 'i', 't', 's', '_'};
enum { BASE_HEADER_BYTES = 8 + 3 * 4 };

/* Positions scored per chunk of n_ctx tokens. */
static int64_t rows_per_chunk(int64_t n_ctx) { return n_ctx - 1 - n_ctx / 2; }

/* ---------------------------------------------------------------------------------------------
 * Writing
 * ------------------------------------------------------------------------------------------- */

struct inf_kld_base_writer {
    FILE *file;
    char *path;
    char *temp_path;
    size_t row_words;
    int64_t rows_expected;
    int64_t rows_written;
};

inf_kld_base_writer *inf_kld_base_writer_open(const char *path, int32_t n_ctx, int32_t n_vocab,
                                              int32_t n_chunk, const inf_token *tokens,
                                              ggtk_error *err)
{
    if (n_ctx < 3 || n_vocab < 1 || n_chunk < 1) {
        ggtk_error_set(err, GGTK_ERR_INVALID, GGTK_NO_OFFSET,
                       "%s: bad base file shape (n_ctx %d, n_vocab %d, "
                       "n_chunk %d)", path, n_ctx, n_vocab, n_chunk);
        return NULL;
    }
    inf_kld_base_writer *w = calloc(1, sizeof *w);
    size_t path_len = strlen(path);
    if (w) {
        w->path = strdup(path);
        w->temp_path = malloc(path_len + 16);
    }
    if (!w || !w->path || !w->temp_path) {
        ggtk_error_set(err, GGTK_ERR_NOMEM, GGTK_NO_OFFSET, "%s: out of memory", path);
        inf_kld_base_writer_close(w);
        return NULL;
    }
    snprintf(w->temp_path, path_len + 16, "%s.tmp.XXXXXX", path);
    int fd = mkstemp(w->temp_path);
    /* mkstemp() makes the file private; the base file is an ordinary output file. */
    if (fd < 0 || fchmod(fd, 0644) != 0 || !(w->file = fdopen(fd, "wb"))) {
        ggtk_error_set(err, GGTK_ERR_IO, GGTK_NO_OFFSET,
                       "%s: cannot create: %s", path, strerror(errno));
        if (fd >= 0) {
            close(fd);
            unlink(w->temp_path);
        }
        free(w->temp_path);
        w->temp_path = NULL;
        inf_kld_base_writer_close(w);
        return NULL;
    }
    w->row_words = inf_logprob_row_words(n_vocab);
    w->rows_expected = (int64_t)n_chunk * rows_per_chunk(n_ctx);
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

ggtk_status inf_kld_base_writer_write(inf_kld_base_writer *w, const uint16_t *rows, size_t n_rows,
                                      ggtk_error *err)
{
    if ((int64_t)n_rows > w->rows_expected - w->rows_written) {
        ggtk_error_set(err, GGTK_ERR_USAGE, GGTK_NO_OFFSET,
                       "%s: more rows than the header announces", w->path);
        return GGTK_ERR_USAGE;
    }
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
    FILE *f = w->file;
    w->file = NULL;
    if (fclose(f) != 0 || rename(w->temp_path, w->path) != 0) {
        ggtk_error_set(err, GGTK_ERR_IO, GGTK_NO_OFFSET, "%s: cannot finish the file: %s", w->path,
                       strerror(errno));
        inf_kld_base_writer_close(w);
        return GGTK_ERR_IO;
    }
    free(w->temp_path);
    w->temp_path = NULL;
    inf_kld_base_writer_close(w);
    return GGTK_OK;
}

void inf_kld_base_writer_close(inf_kld_base_writer *w)
{
    if (!w)
        return;
    if (w->file)
        fclose(w->file);
    if (w->temp_path)
        unlink(w->temp_path);
    free(w->temp_path);
    free(w->path);
    free(w);
}

const char *inf_kld_base_writer_temp_path(const inf_kld_base_writer *w) { return w->temp_path; }

/* ---------------------------------------------------------------------------------------------
 * Reading
 * ------------------------------------------------------------------------------------------- */

struct inf_kld_base {
    FILE *file;
    char *path;
    int32_t n_ctx, n_vocab, n_chunk;
    inf_token *tokens;
    uint64_t rows_offset; /* byte offset of chunk 0's rows */
    uint64_t chunk_bytes; /* bytes of one chunk's rows */
};

/* Check the header fields and that the file size is exactly what they announce. */
static bool base_check_layout(inf_kld_base *b, uint32_t n_ctx, uint64_t file_size, ggtk_error *err)
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
    /* n_chunk < 2^31, n_ctx <= 2^24, row words <= 2^24 + 6: every product fits 64 bits. */
    uint64_t token_bytes = (uint64_t)b->n_chunk * n_ctx * sizeof(inf_token);
    b->chunk_bytes = (uint64_t)rows_per_chunk(n_ctx) * inf_logprob_row_words(b->n_vocab) * 2;
    b->rows_offset = BASE_HEADER_BYTES + token_bytes;
    uint64_t rows_bytes = (uint64_t)b->n_chunk * b->chunk_bytes;
    if (rows_bytes / b->chunk_bytes != (uint64_t)b->n_chunk ||
        b->rows_offset + rows_bytes < b->rows_offset) {
        ggtk_error_set(err, GGTK_ERR_OVERFLOW, 8, "%s: header sizes overflow", b->path);
        return false;
    }
    uint64_t expected = b->rows_offset + rows_bytes;
    if (file_size != expected) {
        ggtk_error_set(err, file_size < expected ? GGTK_ERR_TRUNCATED : GGTK_ERR_LAYOUT,
                       file_size < expected ? file_size : expected,
                       "%s: %s: the header (n_ctx %u, n_vocab %d, n_chunk %d) "
                       "announces %llu bytes, the file has %llu", b->path,
                       file_size < expected ? "truncated" : "trailing data", n_ctx,
                       b->n_vocab, b->n_chunk, (unsigned long long)expected,
                       (unsigned long long)file_size);
        return false;
    }
    return true;
}

/* Read and check the tokens. */
static bool base_read_tokens(inf_kld_base *b, ggtk_error *err)
{
    size_t n = (size_t)b->n_chunk * (size_t)b->n_ctx;
    b->tokens = malloc(n * sizeof *b->tokens);
    if (!b->tokens) {
        ggtk_error_set(err, GGTK_ERR_NOMEM, GGTK_NO_OFFSET,
                       "%s: out of memory for %zu tokens", b->path, n);
        return false;
    }
    if (fread(b->tokens, sizeof *b->tokens, n, b->file) != n) {
        ggtk_error_set(err, ferror(b->file) ? GGTK_ERR_IO : GGTK_ERR_TRUNCATED, BASE_HEADER_BYTES,
                       "%s: cannot read the tokens: %s", b->path,
                       ferror(b->file) ? strerror(errno) : "unexpected end of file");
        return false;
    }
    for (size_t i = 0; i < n; i++) {
        if (b->tokens[i] < 0 || b->tokens[i] >= b->n_vocab) {
            ggtk_error_set(err, GGTK_ERR_INVALID, BASE_HEADER_BYTES + 4 * i,
                           "%s: token %zu (at byte %zu) is %d, outside the "
                           "vocabulary of %d", b->path, i, BASE_HEADER_BYTES + 4 * i,
                           b->tokens[i], b->n_vocab);
            return false;
        }
    }
    return true;
}

inf_kld_base *inf_kld_base_open(const char *path, ggtk_error *err)
{
    inf_kld_base *b = calloc(1, sizeof *b);
    if (!b || !(b->path = strdup(path))) {
        ggtk_error_set(err, GGTK_ERR_NOMEM, GGTK_NO_OFFSET, "%s: out of memory", path);
        free(b);
        return NULL;
    }
    b->file = fopen(path, "rb");
    struct stat st;
    if (!b->file || fstat(fileno(b->file), &st) != 0) {
        ggtk_error_set(err, GGTK_ERR_IO, GGTK_NO_OFFSET,
                       "%s: cannot open: %s", path, strerror(errno));
        inf_kld_base_close(b);
        return NULL;
    }
    uint8_t header[BASE_HEADER_BYTES];
    if (fread(header, 1, sizeof header, b->file) != sizeof header ||
        memcmp(header, BASE_MAGIC, sizeof BASE_MAGIC) != 0) {
        ggtk_error_set(err, GGTK_ERR_MAGIC, 0, "%s: not a base log-probability file (expected "
                       "\"_logits_\" and a 20-byte header)", path);
        inf_kld_base_close(b);
        return NULL;
    }
    uint32_t n_ctx;
    memcpy(&n_ctx, header + 8, 4);
    memcpy(&b->n_vocab, header + 12, 4);
    memcpy(&b->n_chunk, header + 16, 4);
    if (!base_check_layout(b, n_ctx, (uint64_t)st.st_size, err) ||
        !base_read_tokens(b, err)) {
        inf_kld_base_close(b);
        return NULL;
    }
    return b;
}

void inf_kld_base_close(inf_kld_base *b)
{
    if (!b)
        return;
    if (b->file)
        fclose(b->file);
    free(b->tokens);
    free(b->path);
    free(b);
}

int32_t inf_kld_base_n_ctx(const inf_kld_base *b) { return b->n_ctx; }
int32_t inf_kld_base_n_vocab(const inf_kld_base *b) { return b->n_vocab; }
int32_t inf_kld_base_n_chunk(const inf_kld_base *b) { return b->n_chunk; }
const inf_token *inf_kld_base_tokens(const inf_kld_base *b) { return b->tokens; }

ggtk_status inf_kld_base_read_chunk(inf_kld_base *b, int32_t chunk, uint16_t *rows, ggtk_error *err)
{
    if (chunk < 0 || chunk >= b->n_chunk) {
        ggtk_error_set(err, GGTK_ERR_USAGE, GGTK_NO_OFFSET,
                       "%s: no chunk %d (the file has %d)", b->path, chunk,
                       b->n_chunk);
        return GGTK_ERR_USAGE;
    }
    uint64_t offset = b->rows_offset + (uint64_t)chunk * b->chunk_bytes;
    if (fseeko(b->file, (off_t)offset, SEEK_SET) != 0 ||
        fread(rows, 1, b->chunk_bytes, b->file) != b->chunk_bytes) {
        ggtk_error_set(err, GGTK_ERR_IO, offset,
                       "%s: cannot read chunk %d at byte %llu: %s", b->path,
                       chunk, (unsigned long long)offset,
                       ferror(b->file) ? strerror(errno) : "unexpected end of file");
        return GGTK_ERR_IO;
    }
    return GGTK_OK;
}
