/* test_kld_compact.c - the compact base format: the log-probability codes, the choice of entries
 * (fewest tokens leaving at most epsilon, capped), a round trip through the file, the
 * KL-divergence against a compact row next to the llama row's, and the refusal of broken files
 * in one line naming the file and the offset. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "eval/kld_file.h"
#include "test.h"

enum { N_VOCAB = 3001, N_CTX = 8, ROWS = 3 }; /* 8 tokens per chunk: rows 4..6 scored */

/* Deterministic logits with a heavy head and a long tail, as a language model's. */
static void fill_logits(float *logits, int n, unsigned seed)
{
    unsigned x = seed * 2654435761u + 1;
    for (int i = 0; i < n; i++) {
        x = x * 1103515245u + 12345u;
        float u = (float)((x >> 8) & 0xffff) / 65536.0f;
        logits[i] = 20.0f * u * u * u * u - 6.0f;
    }
}

static void log_softmax(const float *logits, int n, float *out)
{
    double max = logits[0], sum = 0;
    for (int i = 1; i < n; i++)
        max = logits[i] > max ? logits[i] : max;
    for (int i = 0; i < n; i++)
        sum += exp(logits[i] - max);
    for (int i = 0; i < n; i++)
        out[i] = (float)(logits[i] - max - log(sum));
}

TEST(test_sparse_code_round_trips_within_half_its_step)
{
    for (float lp = 0; lp > -16; lp -= 0.000731f) {
        const uint16_t code = sparse_code(lp);
        const float step = code >= 0x8000 ? 1.0f / SPARSE_HEAD_STEPS : 1.0f / SPARSE_TAIL_STEPS;
        CHECK_MSG(fabsf(sparse_code_value(code) - lp) <= step / 2 + 1.0f / 8192,
                  "log p %f -> code %#x -> %f", lp, code, sparse_code_value(code));
        CHECK(sparse_code_bytes(code) == (lp > -SPARSE_HEAD + 1.0f / 8192 ? 2 : 1) ||
              fabsf(lp + SPARSE_HEAD + 1.0f / 8192) < 1e-4f);
    }
}

/* The fewest most likely tokens leaving at most epsilon, by a plain sort in double. */
static int32_t expected_entries(const float *log_p, int n, double epsilon, int32_t cap)
{
    double *p = malloc((size_t)n * sizeof *p);
    double total = 0;
    for (int i = 0; i < n; i++)
        total += (p[i] = exp(log_p[i]));
    for (int i = 1; i < n; i++) /* insertion sort, descending */
        for (int j = i; j > 0 && p[j] > p[j - 1]; j--) {
            double t = p[j];
            p[j] = p[j - 1];
            p[j - 1] = t;
        }
    int32_t k = 0;
    double kept = 0;
    while (k < n && k < cap && log(p[k]) > -16 && (k == 0 || total - kept > epsilon))
        kept += p[k++];
    free(p);
    return k;
}

TEST(test_sparse_row_keeps_the_fewest_tokens_leaving_at_most_epsilon)
{
    float logits[N_VOCAB], log_p[N_VOCAB];
    sparse_scratch scratch;
    sparse_row row = {0};
    CHECK(sparse_scratch_init(&scratch, N_VOCAB));
    const double epsilons[] = {0.1, 1e-2, 1e-4, 0};
    for (unsigned seed = 1; seed <= 4; seed++) {
        fill_logits(logits, N_VOCAB, seed);
        log_softmax(logits, N_VOCAB, log_p);
        for (size_t e = 0; e < sizeof epsilons / sizeof *epsilons; e++) {
            for (int32_t cap = 50; cap <= N_VOCAB; cap += N_VOCAB - 50) {
                inf_kld_compact_params params = {(float)epsilons[e], cap};
                CHECK(sparse_row_choose(log_p, N_VOCAB, log_p[7], &params, &scratch, &row));
                const int32_t want = expected_entries(log_p, N_VOCAB, params.epsilon, cap);
                CHECK_MSG(row.n == want, "seed %u eps %g cap %d: %d entries, expected %d", seed,
                          epsilons[e], cap, row.n, want);
                double listed = 0;
                for (int32_t i = 0; i < row.n; i++) {
                    CHECK(i == 0 || row.ids[i] > row.ids[i - 1]);
                    CHECK(fabsf(row.log_p[i] - log_p[row.ids[i]]) <= 1.0f / 32 + 1e-6f);
                    listed += exp(log_p[row.ids[i]]);
                }
                CHECK_MSG(fabs(listed + row.rest - 1) < 1e-5, "mass %g + rest %g", listed,
                          row.rest);
                CHECK(row.n == cap || row.rest <= params.epsilon * (1 + 1e-6) + 1e-7 ||
                      row.n == want);
                CHECK(row.log_p_token == log_p[7]);
            }
        }
    }
    sparse_row_free(&row);
    sparse_scratch_free(&scratch);
}

/* A compact base of n_chunk chunks whose rows come from fill_logits (seed = row index + 7),
 * written by converting llama rows; the tokens are 0..7 per chunk. */
static bool write_compact_base(const char *path, int32_t n_chunk, inf_kld_compact_params params)
{
    const size_t words = inf_logprob_row_words(N_VOCAB);
    inf_token tokens[N_CTX * 4];
    for (int i = 0; i < N_CTX * n_chunk; i++)
        tokens[i] = i % N_CTX;
    uint16_t *rows = malloc((size_t)ROWS * n_chunk * words * sizeof *rows);
    float logits[N_VOCAB];
    inf_kld_base_writer *w = inf_kld_base_writer_open_compact(path, N_CTX, N_VOCAB, n_chunk,
                                                              tokens, &params, NULL);
    bool ok = w && rows && inf_kld_base_writer_format(w) == INF_KLD_BASE_COMPACT;
    for (int r = 0; ok && r < ROWS * n_chunk; r++) {
        fill_logits(logits, N_VOCAB, (unsigned)r + 7);
        inf_logprob_row_encode(logits, N_VOCAB, 0, rows + (size_t)r * words);
    }
    ok = ok && inf_kld_base_writer_write(w, rows, (size_t)ROWS * n_chunk, NULL) == GGTK_OK &&
         inf_kld_base_writer_finish(w, NULL) == GGTK_OK;
    if (!ok && w)
        inf_kld_base_writer_close(w);
    free(rows);
    return ok;
}

TEST(test_compact_base_round_trips_and_scores_as_the_llama_rows_do)
{
    const char *path = test_tmpfile("round.ckld");
    const inf_kld_compact_params params = inf_kld_compact_params_default();
    CHECK(write_compact_base(path, 2, params));
    ggtk_error err = {0};
    inf_kld_base *b = inf_kld_base_open(path, &err);
    CHECK_MSG(b, "%s", err.message);
    if (!b)
        return;
    inf_kld_compact_params stored;
    CHECK(inf_kld_base_get_format(b) == INF_KLD_BASE_COMPACT);
    CHECK(inf_kld_base_get_compact_params(b, &stored) && stored.epsilon == params.epsilon &&
          stored.max_entries == N_VOCAB); /* the writer caps it at the vocabulary */
    CHECK(inf_kld_base_n_ctx(b) == N_CTX && inf_kld_base_n_vocab(b) == N_VOCAB &&
          inf_kld_base_n_chunk(b) == 2 && inf_kld_base_tokens(b)[N_CTX + 5] == 5);
    uint16_t *full = malloc(inf_logprob_row_words(N_VOCAB) * sizeof *full);
    sparse_row rows[ROWS] = {{0}};
    float base_logits[N_VOCAB], q_logits[N_VOCAB];
    /* Chunk 2 first, then chunk 1 from its second row: both need a seek. */
    CHECK(kld_base_read_sparse(b, 1, 0, ROWS, rows, &err) == GGTK_OK);
    CHECK(kld_base_read_sparse(b, 0, 1, 2, rows + 1, &err) == GGTK_OK);
    CHECK(kld_base_read_sparse(b, 0, 0, 1, rows, &err) == GGTK_OK);
    for (int r = 0; r < ROWS; r++) {
        fill_logits(base_logits, N_VOCAB, (unsigned)r + 7);
        fill_logits(q_logits, N_VOCAB, (unsigned)r + 100);
        for (int i = 0; i < N_VOCAB; i++) /* Q: the base, perturbed */
            q_logits[i] = 0.8f * base_logits[i] + 0.3f * q_logits[i];
        const inf_token token = (inf_token)(N_CTX / 2 + r + 1);
        inf_logprob_row_encode(base_logits, N_VOCAB, token, full);
        inf_kld_stats s_full = {0}, s_compact = {0};
        float dp_full, dp_compact;
        double kld_full = inf_kld_token(q_logits, N_VOCAB, full, token, &s_full, &dp_full);
        double kld_compact = sparse_kld_token(q_logits, N_VOCAB, &rows[r], token, &s_compact,
                                              &dp_compact);
        /* The left-out mass (<= epsilon) times its log-ratio: relative to the divergence. */
        CHECK_MSG(fabs(kld_full - kld_compact) < 1e-4 * (1 + kld_full),
                  "row %d: KLD %.7f (llama) vs %.7f", r, kld_full, kld_compact);
        CHECK(s_full.n_same_top == s_compact.n_same_top);
        CHECK(fabsf(dp_full - dp_compact) < 1e-4f && fabs(s_full.sum_nll_base -
                                                          s_compact.sum_nll_base) < 1e-3);
    }
    CHECK(kld_base_read_sparse(b, 2, 0, 1, rows, &err) == GGTK_ERR_USAGE);
    CHECK(inf_kld_base_read_chunk(b, 0, full, &err) == GGTK_ERR_USAGE);
    for (int r = 0; r < ROWS; r++)
        sparse_row_free(&rows[r]);
    free(full);
    inf_kld_base_close(b);
}

TEST(test_compact_writer_refuses_bad_parameters)
{
    ggtk_error err = {0};
    inf_token tokens[N_CTX] = {0};
    inf_kld_compact_params bad[] = {{-0.1f, 10}, {1.0f, 10}, {NAN, 10}, {0.1f, 0}};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        CHECK(!inf_kld_base_writer_open_compact(test_tmpfile("bad.ckld"), N_CTX, N_VOCAB, 1,
                                                tokens, &bad[i], &err));
        CHECK(err.status == GGTK_ERR_USAGE && strstr(err.message, "epsilon"));
    }
}

/* A copy `name` of `source` with `n` bytes at `offset` replaced (n 0: cut at offset). */
static const char *patched(const char *source, const char *name, long offset, const void *bytes,
                           size_t n)
{
    static char path[512];
    snprintf(path, sizeof path, "%s", test_tmpfile(name));
    FILE *in = fopen(source, "rb"), *out = fopen(path, "wb");
    int c;
    long at = 0;
    while (in && out && (c = fgetc(in)) != EOF) {
        if (n == 0 && at == offset)
            break;
        fputc(at >= offset && at < offset + (long)n ? ((const uint8_t *)bytes)[at - offset] : c,
              out);
        at++;
    }
    if (in)
        fclose(in);
    if (out)
        fclose(out);
    return path;
}

/* Opening, or reading every row of, `path` fails with `status`, one line naming the file and
 * containing `needle`. */
static bool fails_with(const char *path, ggtk_status status, const char *needle)
{
    ggtk_error err = {0};
    inf_kld_base *b = inf_kld_base_open(path, &err);
    sparse_row rows[ROWS] = {{0}};
    for (int32_t c = 0; b && c < inf_kld_base_n_chunk(b) && err.status == GGTK_OK; c++)
        kld_base_read_sparse(b, c, 0, ROWS, rows, &err);
    for (int r = 0; r < ROWS; r++)
        sparse_row_free(&rows[r]);
    inf_kld_base_close(b);
    const bool ok = err.status == status && strstr(err.message, path) &&
                    strstr(err.message, needle) && !strchr(err.message, '\n');
    if (!ok)
        fprintf(stderr, "    %s: status %d '%s' (wanted %d, '%s')\n", path, err.status,
                err.message, status, needle);
    return ok;
}

TEST(test_compact_base_refuses_broken_files_in_one_line)
{
    char good[512];
    snprintf(good, sizeof good, "%s", test_tmpfile("good.ckld"));
    CHECK(write_compact_base(good, 2, (inf_kld_compact_params){1e-3f, 400}));
    struct stat st;
    CHECK(stat(good, &st) == 0);
    const long size = (long)st.st_size, table = size - 16;
    const long rows = COMPACT_HEADER_BYTES + 2 * N_CTX * 4; /* chunk 1's first row */
    const uint32_t v2 = 2, big = 1u << 30, zero = 0;
    const float nan = NAN, two = 2.0f, positive = 0.5f;
    const uint64_t short_end = (uint64_t)rows + 20, past = (uint64_t)size;
    CHECK(fails_with(patched(good, "magic.ckld", 0, "GGTK-KLX", 8), GGTK_ERR_MAGIC, "GGTK-KLD"));
    CHECK(fails_with(patched(good, "version.ckld", 8, &v2, 4), GGTK_ERR_VERSION,
                     "version 2 at byte 8"));
    CHECK(fails_with(patched(good, "vocab.ckld", 16, &big, 4), GGTK_ERR_INVALID,
                     "n_vocab at byte 16"));
    CHECK(fails_with(patched(good, "chunks.ckld", 20, &big, 4), GGTK_ERR_TRUNCATED,
                     "n_chunk at byte 20 is 1073741824"));
    CHECK(fails_with(patched(good, "eps.ckld", 24, &nan, 4), GGTK_ERR_INVALID,
                     "epsilon at byte 24"));
    CHECK(fails_with(patched(good, "max.ckld", 28, &zero, 4), GGTK_ERR_INVALID,
                     "max_entries at byte 28"));
    CHECK(fails_with(patched(good, "token.ckld", COMPACT_HEADER_BYTES + 8, &big, 4),
                     GGTK_ERR_INVALID, "token 2 (at byte 40)"));
    CHECK(fails_with(patched(good, "cut.ckld", size - 3, NULL, 0), GGTK_ERR_LAYOUT,
                     "chunk table entry"));
    CHECK(fails_with(patched(good, "table0.ckld", table, &short_end, 8), GGTK_ERR_LAYOUT,
                     "chunk table entry 0 at byte"));
    CHECK(fails_with(patched(good, "table1.ckld", table + 8, &past, 8), GGTK_ERR_LAYOUT,
                     "chunk table entry 1"));
    CHECK(fails_with(patched(good, "nanrow.ckld", rows, &nan, 4), GGTK_ERR_INVALID,
                     "chunk 1: row 0 at byte"));
    CHECK(fails_with(patched(good, "posrow.ckld", rows, &positive, 4), GGTK_ERR_INVALID,
                     "log-probability 0.5"));
    CHECK(fails_with(patched(good, "rest.ckld", rows + 4, &two, 4), GGTK_ERR_INVALID,
                     "rest mass 2"));
    CHECK(fails_with(patched(good, "count.ckld", rows + 8, "\x00", 1), GGTK_ERR_INVALID,
                     "0 entries, expected 1..400"));
    CHECK(fails_with(patched(good, "varint.ckld", rows + 8, "\xff\xff\xff\xff\x7f", 5),
                     GGTK_ERR_OVERFLOW, "does not fit 32 bits"));
    /* A count the chunk's bytes cannot hold is refused before anything is allocated for it. */
    char wide[512];
    snprintf(wide, sizeof wide, "%s", test_tmpfile("wide.ckld"));
    CHECK(write_compact_base(wide, 2, (inf_kld_compact_params){1e-3f, N_VOCAB}));
    CHECK(fails_with(patched(wide, "huge.ckld", rows + 8, "\xb9\x17", 2), GGTK_ERR_TRUNCATED,
                     "3001 entries, but"));
    /* An entry count larger than the row's bytes runs into the next row and breaks its sums. */
    CHECK(fails_with(patched(good, "mass.ckld", rows + 8, "\x01", 1), GGTK_ERR_INVALID,
                     "carry a probability mass"));
}

TEST(test_sparse_row_keeps_the_most_likely_token_first_when_codes_tie)
{
    enum { N = 40 };
    float log_p[N];
    for (int i = 0; i < N; i++)
        log_p[i] = -6.0f;
    log_p[3] = -0.70001f; /* rounds to the same 2^-12 code as the top, at a lower id */
    log_p[7] = -0.7f;
    sparse_scratch scratch;
    sparse_row row = {0};
    inf_kld_compact_params params = {0, N};
    CHECK(sparse_scratch_init(&scratch, N));
    CHECK(sparse_code(log_p[3]) == sparse_code(log_p[7]));
    CHECK(sparse_row_choose(log_p, N, log_p[0], &params, &scratch, &row));
    int32_t first_max = 0;
    for (int32_t e = 1; e < row.n; e++)
        first_max = row.log_p[e] > row.log_p[first_max] ? e : first_max;
    CHECK_MSG(row.ids[first_max] == 7, "the first most likely entry is token %d",
              row.ids[first_max]);
    CHECK(fabsf(row.log_p[3] - log_p[3]) < 2.0f / SPARSE_HEAD_STEPS);
    sparse_row_free(&row);
    sparse_scratch_free(&scratch);
}
