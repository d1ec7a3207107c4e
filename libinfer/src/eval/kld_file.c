/* kld_file.c - base log-probability files in llama-perplexity's --kl-divergence-base layout, so
 * that a base written by either tool can be compared against by the other. Written through a
 * temporary file renamed into place; read with every header field and the file size checked. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "eval_internal.h"
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

/* Create "<path>.tmp.XXXXXX" (written into `temp`, `size` bytes) with O_EXCL and mode 0666, so that
 * the umask and the directory's default ACLs apply as to any new file (mkstemp makes it 0600).
 * The fd, or -1 with errno set. */
static int create_temp(const char *path, char *temp, size_t size)
{
    for (unsigned attempt = 0; attempt < 100; attempt++) {
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        uint64_t bits = ((uint64_t)ts.tv_nsec ^ ((uint64_t)getpid() << 32) ^ attempt) *
                        0x9E3779B97F4A7C15u;
        snprintf(temp, size, "%s.tmp.%06llx", path, (unsigned long long)(bits >> 40));
        int fd = open(temp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
        if (fd >= 0 || errno != EEXIST)
            return fd;
    }
    return -1;
}

inf_kld_base_writer *inf_kld_base_writer_create(const char *path, int32_t n_ctx, int32_t n_vocab,
                                                int32_t n_chunk, const inf_token *tokens,
                                                char *err, size_t err_size)
{
    if (n_ctx < 3 || n_vocab < 1 || n_chunk < 1) {
        inf_eval_set_error(err, err_size, "%s: bad base file shape (n_ctx %d, n_vocab %d, "
                           "n_chunk %d)", path, n_ctx, n_vocab, n_chunk);
        return NULL;
    }
    /* The rename would replace a device node or a FIFO. */
    struct stat st;
    if (stat(path, &st) == 0 && !S_ISREG(st.st_mode)) {
        inf_eval_set_error(err, err_size, "%s: exists and is not a regular file", path);
        return NULL;
    }
    inf_kld_base_writer *w = calloc(1, sizeof *w);
    size_t path_len = strlen(path);
    if (w) {
        w->path = strdup(path);
        w->temp_path = malloc(path_len + 16);
    }
    if (!w || !w->path || !w->temp_path) {
        inf_eval_set_error(err, err_size, "%s: out of memory", path);
        inf_kld_base_writer_abort(w);
        return NULL;
    }
    int fd = create_temp(path, w->temp_path, path_len + 16);
    if (fd < 0 || !(w->file = fdopen(fd, "wb"))) {
        inf_eval_set_error(err, err_size, "%s: cannot create: %s", path, strerror(errno));
        if (fd >= 0) {
            close(fd);
            unlink(w->temp_path);
        }
        free(w->temp_path);
        w->temp_path = NULL;
        inf_kld_base_writer_abort(w);
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
        inf_eval_set_error(err, err_size, "%s: write failed: %s", path, strerror(errno));
        inf_kld_base_writer_abort(w);
        return NULL;
    }
    return w;
}

inf_status inf_kld_base_writer_write(inf_kld_base_writer *w, const uint16_t *rows, size_t n_rows,
                                     char *err, size_t err_size)
{
    if ((int64_t)n_rows > w->rows_expected - w->rows_written) {
        inf_eval_set_error(err, err_size, "%s: more rows than the header announces", w->path);
        return INF_ERR_USAGE;
    }
    if (fwrite(rows, w->row_words * sizeof *rows, n_rows, w->file) != n_rows) {
        inf_eval_set_error(err, err_size, "%s: write failed: %s", w->path, strerror(errno));
        return INF_ERR_IO;
    }
    w->rows_written += (int64_t)n_rows;
    return INF_OK;
}

/* Make the rename durable. Filesystems that cannot sync a directory say EINVAL; that is fine. */
static int sync_directory(const char *path)
{
    const char *slash = strrchr(path, '/');
    char *directory = !slash ? strdup(".") : slash == path ? strdup("/")
                                                           : strndup(path, (size_t)(slash - path));
    int fd = directory ? open(directory, O_RDONLY | O_DIRECTORY | O_CLOEXEC) : -1;
    int code = !directory ? ENOMEM : fd < 0 ? errno : 0;
    free(directory);
    if (fd >= 0) {
        code = fsync(fd) == 0 || errno == EINVAL ? 0 : errno;
        close(fd);
    }
    return code;
}

/* Flush, fsync and close the file; 0 or the errno of the first failure. */
static int close_synced(FILE *f)
{
    int code = fflush(f) != 0 ? errno : fsync(fileno(f)) != 0 ? errno : 0;
    if (fclose(f) != 0 && code == 0)
        code = errno;
    return code;
}

inf_status inf_kld_base_writer_finish(inf_kld_base_writer *w, char *err, size_t err_size)
{
    if (w->rows_written != w->rows_expected) {
        inf_eval_set_error(err, err_size, "%s: only %lld of %lld rows written", w->path,
                           (long long)w->rows_written, (long long)w->rows_expected);
        inf_kld_base_writer_abort(w);
        return INF_ERR_USAGE;
    }
    FILE *f = w->file;
    w->file = NULL;
    int code = close_synced(f);
    if (code == 0 && rename(w->temp_path, w->path) != 0)
        code = errno;
    if (code == 0) {
        free(w->temp_path);
        w->temp_path = NULL;
        code = sync_directory(w->path);
    }
    if (code != 0)
        inf_eval_set_error(err, err_size, "%s: cannot finish the file: %s", w->path,
                           strerror(code));
    inf_kld_base_writer_abort(w);
    return code == 0 ? INF_OK : INF_ERR_IO;
}

void inf_kld_base_writer_abort(inf_kld_base_writer *w)
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
static bool base_check_layout(inf_kld_base *b, uint32_t n_ctx, uint64_t file_size, char *err,
                              size_t err_size)
{
    if (n_ctx < 3 || n_ctx > (1u << 24)) {
        inf_eval_set_error(err, err_size, "%s: n_ctx at byte 8 is %u, expected 3..%u", b->path,
                           n_ctx, 1u << 24);
        return false;
    }
    if (b->n_vocab < 1 || b->n_vocab > (1 << 24)) {
        inf_eval_set_error(err, err_size, "%s: n_vocab at byte 12 is %d, expected 1..%d", b->path,
                           b->n_vocab, 1 << 24);
        return false;
    }
    if (b->n_chunk < 1) {
        inf_eval_set_error(err, err_size, "%s: n_chunk at byte 16 is %d, expected > 0", b->path,
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
        inf_eval_set_error(err, err_size, "%s: header sizes overflow", b->path);
        return false;
    }
    uint64_t expected = b->rows_offset + rows_bytes;
    if (file_size != expected) {
        inf_eval_set_error(err, err_size, "%s: %s: the header (n_ctx %u, n_vocab %d, n_chunk %d) "
                           "announces %llu bytes, the file has %llu", b->path,
                           file_size < expected ? "truncated" : "trailing data", n_ctx,
                           b->n_vocab, b->n_chunk, (unsigned long long)expected,
                           (unsigned long long)file_size);
        return false;
    }
    return true;
}

/* Read and check the tokens. */
static bool base_read_tokens(inf_kld_base *b, char *err, size_t err_size)
{
    size_t n = (size_t)b->n_chunk * (size_t)b->n_ctx;
    b->tokens = malloc(n * sizeof *b->tokens);
    if (!b->tokens) {
        inf_eval_set_error(err, err_size, "%s: out of memory for %zu tokens", b->path, n);
        return false;
    }
    if (fread(b->tokens, sizeof *b->tokens, n, b->file) != n) {
        inf_eval_set_error(err, err_size, "%s: cannot read the tokens: %s", b->path,
                           ferror(b->file) ? strerror(errno) : "unexpected end of file");
        return false;
    }
    for (size_t i = 0; i < n; i++) {
        if (b->tokens[i] < 0 || b->tokens[i] >= b->n_vocab) {
            inf_eval_set_error(err, err_size, "%s: token %zu (at byte %zu) is %d, outside the "
                               "vocabulary of %d", b->path, i, BASE_HEADER_BYTES + 4 * i,
                               b->tokens[i], b->n_vocab);
            return false;
        }
    }
    return true;
}

inf_kld_base *inf_kld_base_open(const char *path, char *err, size_t err_size)
{
    inf_kld_base *b = calloc(1, sizeof *b);
    if (!b || !(b->path = strdup(path))) {
        inf_eval_set_error(err, err_size, "%s: out of memory", path);
        free(b);
        return NULL;
    }
    b->file = fopen(path, "rb");
    struct stat st;
    if (!b->file || fstat(fileno(b->file), &st) != 0) {
        inf_eval_set_error(err, err_size, "%s: cannot open: %s", path, strerror(errno));
        inf_kld_base_close(b);
        return NULL;
    }
    uint8_t header[BASE_HEADER_BYTES];
    if (fread(header, 1, sizeof header, b->file) != sizeof header ||
        memcmp(header, BASE_MAGIC, sizeof BASE_MAGIC) != 0) {
        inf_eval_set_error(err, err_size, "%s: not a base log-probability file (expected "
                           "\"_logits_\" and a 20-byte header)", path);
        inf_kld_base_close(b);
        return NULL;
    }
    uint32_t n_ctx;
    memcpy(&n_ctx, header + 8, 4);
    memcpy(&b->n_vocab, header + 12, 4);
    memcpy(&b->n_chunk, header + 16, 4);
    if (!base_check_layout(b, n_ctx, (uint64_t)st.st_size, err, err_size) ||
        !base_read_tokens(b, err, err_size)) {
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

inf_status inf_kld_base_read_chunk(inf_kld_base *b, int32_t chunk, uint16_t *rows, char *err,
                                   size_t err_size)
{
    if (chunk < 0 || chunk >= b->n_chunk) {
        inf_eval_set_error(err, err_size, "%s: no chunk %d (the file has %d)", b->path, chunk,
                           b->n_chunk);
        return INF_ERR_USAGE;
    }
    uint64_t offset = b->rows_offset + (uint64_t)chunk * b->chunk_bytes;
    if (fseeko(b->file, (off_t)offset, SEEK_SET) != 0 ||
        fread(rows, 1, b->chunk_bytes, b->file) != b->chunk_bytes) {
        inf_eval_set_error(err, err_size, "%s: cannot read chunk %d at byte %llu: %s", b->path,
                           chunk, (unsigned long long)offset,
                           ferror(b->file) ? strerror(errno) : "unexpected end of file");
        return INF_ERR_IO;
    }
    return INF_OK;
}
