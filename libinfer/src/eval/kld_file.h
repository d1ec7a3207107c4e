/* kld_file.h - what the base-file code shares inside libinfer/src/eval: the reader and writer
 * of both formats (kld_file.c: the public functions and llama-perplexity's format;
 * kld_compact_file.c: ggtk's compact format), the span of log-probabilities a llama row stores,
 * and the reader's stream entry point, through which the fuzzers (tests/fuzz/fuzz_kld_base.c,
 * fuzz_kld_compact.c) feed it from memory. */
#ifndef KLD_FILE_H
#define KLD_FILE_H

#include <stdio.h>

#include <ggtk/atomic_file.h>
#include <ggtk/inf_eval.h>

#include "kld_sparse.h"

/* Log-probabilities further than this below the most likely token are not stored exactly. */
#define LOGPROB_RANGE 16.0f

/* The compact format's magic: 8 bytes, then its version (uint32). */
#define COMPACT_MAGIC "GGTK-KLD"
enum { COMPACT_VERSION = 1, COMPACT_HEADER_BYTES = 32 };

/* Positions scored per chunk of n_ctx tokens. */
static inline int64_t kld_rows_per_chunk(int64_t n_ctx) { return n_ctx - 1 - n_ctx / 2; }

struct inf_kld_base_writer {
    inf_kld_base_format format;
    ggtk_atomic_file *out;
    FILE *file;       /* out's stream */
    const char *path; /* out's target */
    int32_t n_ctx, n_vocab, n_chunk;
    size_t row_words; /* of a llama row */
    int64_t rows_per_chunk;
    int64_t rows_expected;
    int64_t rows_written;
    /* compact format */
    inf_kld_compact_params params;
    uint64_t offset;         /* bytes written so far */
    uint64_t *chunk_ends;    /* the end offset of each chunk written */
    inf_token *tokens;       /* n_chunk * n_ctx: the scored tokens of llama rows to convert */
    sparse_row converted;    /* a llama row given to inf_kld_base_writer_write(), as entries */
    sparse_scratch scratch;
    float *log_p;            /* n_vocab: a llama row's decoded log-probabilities */
};

struct inf_kld_base {
    inf_kld_base_format format;
    FILE *file;
    char *path;
    int32_t n_ctx, n_vocab, n_chunk;
    inf_token *tokens;
    uint64_t rows_offset; /* byte offset of chunk 0's rows */
    /* llama format */
    uint64_t chunk_bytes; /* bytes of one chunk's rows */
    /* compact format */
    inf_kld_compact_params params; /* as the header states them */
    uint64_t *chunk_ends;          /* chunk c spans [c ? chunk_ends[c-1] : rows_offset, end) */
    int32_t next_chunk, next_row;  /* where the stream stands, to read on without seeking */
    uint64_t next_offset;
    sparse_row skipped;            /* rows read past to reach the first one asked for */
};

/* inf_kld_base_open() on an open stream (a file, or an fmemopen() buffer: its size is found by
 * seeking to its end); `path` names it in messages. The reader owns `file` from then on, and
 * closes it on failure too. */
inf_kld_base *kld_base_open_stream(FILE *file, const char *path, ggtk_error *err);

/* inf_kld_base_read_rows() for a compact base: each row decoded into rows[i] (grown as
 * needed). Reading on from where the last call stopped needs no seek; any other start
 * re-reads the chunk from its beginning. */
ggtk_status kld_base_read_sparse(inf_kld_base *base, int32_t chunk, int32_t first_row,
                                 int32_t n_rows, sparse_row *rows, ggtk_error *err);

/* Append n rows to a compact writer (GGTK_ERR_USAGE on a llama one, or past the header's
 * rows). */
ggtk_status kld_base_writer_write_sparse(inf_kld_base_writer *writer, const sparse_row *rows,
                                         size_t n_rows, ggtk_error *err);

/* kld_compact_file.c's parts of the public functions. */
bool compact_writer_start(inf_kld_base_writer *w, const inf_token *tokens, ggtk_error *err);
ggtk_status compact_writer_end(inf_kld_base_writer *w, ggtk_error *err);
void compact_writer_free(inf_kld_base_writer *w);
ggtk_status compact_writer_write_llama_rows(inf_kld_base_writer *w, const uint16_t *rows,
                                            size_t n_rows, ggtk_error *err);
/* Check the header after the magic (`header`: the first COMPACT_HEADER_BYTES bytes), the
 * tokens and the chunk table at the end of the file, of `size` bytes. */
bool compact_reader_open(inf_kld_base *b, const uint8_t *header, uint64_t size, ggtk_error *err);
void compact_reader_free(inf_kld_base *b);
/* Read and check the tokens at the stream's position (both formats). */
bool kld_base_read_tokens(inf_kld_base *b, uint64_t offset, ggtk_error *err);

#endif
