/* test_kld.c - base rows (quantized log-probabilities), the KL-divergence of one position against
 * a direct double-precision computation, the summary formulas and percentiles, and the base file
 * (round trip, and refusal of every kind of broken file). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <ggtk/inf_eval.h>
#include "test.h"

enum { N_VOCAB = 2301 }; /* odd (the row has a padding word), over two kernel blocks */

/* Deterministic pseudo-random logits with a realistic spread (a few large, many small). */
static void fill_logits(float *logits, int n, unsigned seed)
{
    unsigned x = seed * 2654435761u + 1;
    for (int i = 0; i < n; i++) {
        x = x * 1103515245u + 12345u;
        float u = (float)((x >> 8) & 0xffff) / 65536.0f;
        logits[i] = 12.0f * u * u - 4.0f;
    }
}

/* log-softmax in double. */
static void log_softmax(const float *logits, int n, double *out)
{
    double max = logits[0];
    for (int i = 1; i < n; i++)
        max = logits[i] > max ? logits[i] : max;
    double sum = 0;
    for (int i = 0; i < n; i++)
        sum += exp(logits[i] - max);
    for (int i = 0; i < n; i++)
        out[i] = logits[i] - max - log(sum);
}

TEST(test_logprob_row_encodes_log_softmax_within_its_step)
{
    float logits[N_VOCAB];
    fill_logits(logits, N_VOCAB, 1);
    uint16_t row[2 * ((N_VOCAB + 1) / 2) + 4];
    CHECK(inf_logprob_row_words(N_VOCAB) == sizeof row / sizeof row[0]);
    double nll = inf_logprob_row_encode(logits, N_VOCAB, 5, row);
    double lp[N_VOCAB];
    log_softmax(logits, N_VOCAB, lp);
    CHECK(fabs(nll + lp[5]) < 1e-5);
    float header[2];
    memcpy(header, row, sizeof header);
    double max_lp = -INFINITY;
    for (int i = 0; i < N_VOCAB; i++)
        max_lp = lp[i] > max_lp ? lp[i] : max_lp;
    for (int i = 0; i < N_VOCAB; i++) {
        double decoded = header[0] * row[4 + i] + header[1];
        double expected = lp[i] < max_lp - 16 ? max_lp - 16 : lp[i];
        CHECK_MSG(fabs(decoded - expected) <= header[0] * 0.5 + 1e-5, "token %d: %f vs %f", i,
                  decoded, expected);
    }
    CHECK(row[4 + N_VOCAB] == 0); /* padding */
}

TEST(test_kld_of_identical_distributions_is_zero)
{
    float logits[N_VOCAB];
    fill_logits(logits, N_VOCAB, 2);
    uint16_t row[2 * ((N_VOCAB + 1) / 2) + 4];
    inf_logprob_row_encode(logits, N_VOCAB, 9, row);
    inf_kld_stats s = {0};
    float p_diff;
    double kld = inf_kld_token(logits, N_VOCAB, row, 9, &s, &p_diff);
    CHECK_MSG(fabs(kld) < 1e-4, "kld %g", kld);
    CHECK(fabsf(p_diff) < 1e-4f);
    CHECK(s.count == 1 && s.n_same_top == 1);
}

TEST(test_kld_matches_a_direct_computation)
{
    float base[N_VOCAB], q[N_VOCAB];
    fill_logits(base, N_VOCAB, 3);
    for (int i = 0; i < N_VOCAB; i++)
        q[i] = base[i] + 0.8f * sinf((float)i);
    uint16_t row[2 * ((N_VOCAB + 1) / 2) + 4];
    inf_logprob_row_encode(base, N_VOCAB, 11, row);
    double lp_base[N_VOCAB], lp_q[N_VOCAB];
    log_softmax(base, N_VOCAB, lp_base);
    log_softmax(q, N_VOCAB, lp_q);
    double expected = 0;
    for (int i = 0; i < N_VOCAB; i++)
        expected += exp(lp_base[i]) * (lp_base[i] - lp_q[i]);
    inf_kld_stats s = {0};
    float p_diff;
    double kld = inf_kld_token(q, N_VOCAB, row, 11, &s, &p_diff);
    CHECK_MSG(fabs(kld - expected) < 2e-3 * expected + 1e-5, "kld %.6f vs %.6f", kld, expected);
    CHECK(fabs(p_diff - (exp(lp_q[11]) - exp(lp_base[11]))) < 1e-4);
    CHECK(fabs(s.sum_nll + lp_q[11]) < 1e-4 && fabs(s.sum_nll_base + lp_base[11]) < 1e-3);
}

TEST(test_kld_summary_formulas_and_percentiles)
{
    /* Twelve positions: counts above 10 give uncertainties, as in llama-perplexity. */
    inf_kld_stats s = {0};
    float kld[12], p_diff[12];
    for (int i = 0; i < 12; i++) {
        double nll = 1.0 + 0.1 * i, nll_base = 1.0 + 0.05 * i;
        kld[11 - i] = (float)(0.01 * i);
        p_diff[i] = (float)(i - 6) / 100.0f;
        s.sum_nll += nll;
        s.sum_nll2 += nll * nll;
        s.sum_nll_base += nll_base;
        s.sum_nll_base2 += nll_base * nll_base;
        s.sum_nll_nll_base += nll * nll_base;
        s.sum_kld += kld[11 - i];
        s.sum_kld2 += (double)kld[11 - i] * kld[11 - i];
        s.sum_p_diff += p_diff[i];
        s.sum_p_diff2 += (double)p_diff[i] * p_diff[i];
        s.sum_p_diff4 += pow(p_diff[i], 4);
        s.n_same_top += i % 3 != 0;
        s.count++;
    }
    inf_kld_summary r = inf_kld_summarize(&s, kld, p_diff, 12);
    CHECK(fabs(r.ppl.value - exp(1.55)) < 1e-9);
    CHECK(fabs(r.ppl_base.value - exp(1.275)) < 1e-9);
    CHECK(fabs(r.log_ppl_ratio.value - 0.275) < 1e-9);
    CHECK(fabs(r.log_ppl_correlation - 1.0) < 1e-6); /* perfectly correlated series */
    CHECK(fabs(r.kld.value - 0.055) < 1e-6);
    CHECK(fabs(r.same_top.value - 8.0 / 12.0) < 1e-12);
    CHECK(r.kld_min == 0.0f && fabsf(r.kld_max - 0.11f) < 1e-6f);
    /* even count: the median is the mean of the two middle values */
    for (int i = 0; i < INF_KLD_N_PERCENTILES; i++) {
        if (inf_kld_percentile_fractions[i] == 0.5f)
            CHECK(fabsf(r.kld_percentile[i] - 0.055f) < 1e-6f);
        if (inf_kld_percentile_fractions[i] == 0.9f) /* 0.9 * 11 = 9.9 -> 0.09 + 0.9 * 0.01 */
            CHECK(fabsf(r.kld_percentile[i] - 0.099f) < 1e-6f);
    }
    CHECK(r.kld.error > 0 && r.ppl.error > 0);
}

/* Write a small base file: 2 chunks of 8 tokens over N_VOCAB. */
static int write_base(const char *path, inf_token *tokens, uint16_t *rows)
{
    const int n_ctx = 8, n_chunk = 2, per_chunk = 8 - 1 - 4;
    size_t words = inf_logprob_row_words(N_VOCAB);
    for (int i = 0; i < n_ctx * n_chunk; i++)
        tokens[i] = (i * 37) % N_VOCAB;
    ggtk_error err = {0};
    inf_kld_base_writer *w = inf_kld_base_writer_open(path, n_ctx, N_VOCAB, n_chunk, tokens,
                                                        &err);
    if (!w)
        return 0;
    for (int c = 0; c < n_chunk; c++) {
        for (int r = 0; r < per_chunk; r++) {
            float logits[N_VOCAB];
            fill_logits(logits, N_VOCAB, 100 + c * 10 + r);
            inf_logprob_row_encode(logits, N_VOCAB, 0, rows + (c * per_chunk + r) * words);
        }
        if (inf_kld_base_writer_write(w, rows + c * per_chunk * words, per_chunk, &err) != GGTK_OK)
            return 0;
    }
    return inf_kld_base_writer_finish(w, &err) == GGTK_OK;
}

TEST(test_kld_base_file_round_trip)
{
    char path[512];
    snprintf(path, sizeof path, "%s", test_tmpfile("base.kld"));
    inf_token tokens[16];
    size_t words = inf_logprob_row_words(N_VOCAB);
    uint16_t *rows = calloc(6 * words, sizeof *rows), *back = calloc(3 * words, sizeof *back);
    CHECK(rows && back);
    CHECK(write_base(path, tokens, rows));
    ggtk_error err = {0};
    inf_kld_base *b = inf_kld_base_open(path, &err);
    CHECK_MSG(b != NULL, "%s", err.message);
    CHECK(inf_kld_base_n_ctx(b) == 8 && inf_kld_base_n_vocab(b) == N_VOCAB &&
          inf_kld_base_n_chunk(b) == 2);
    CHECK(memcmp(inf_kld_base_tokens(b), tokens, sizeof tokens) == 0);
    CHECK(inf_kld_base_read_chunk(b, 1, back, &err) == GGTK_OK);
    CHECK(memcmp(back, rows + 3 * words, 3 * words * sizeof *rows) == 0);
    CHECK(inf_kld_base_read_chunk(b, 0, back, &err) == GGTK_OK);
    CHECK(memcmp(back, rows, 3 * words * sizeof *rows) == 0);
    CHECK(inf_kld_base_read_chunk(b, 2, back, &err) == GGTK_ERR_USAGE);
    inf_kld_base_close(b);
    free(rows);
    free(back);
}

TEST(test_kld_base_writer_leaves_no_file_when_incomplete)
{
    char path[512];
    ggtk_error err = {0};
    snprintf(path, sizeof path, "%s", test_tmpfile("partial.kld"));
    inf_token tokens[16] = {0};
    inf_kld_base_writer *w = inf_kld_base_writer_open(path, 8, N_VOCAB, 2, tokens, &err);
    CHECK(w != NULL);
    CHECK(inf_kld_base_writer_finish(w, &err) == GGTK_ERR_USAGE);
    CHECK(strstr(err.message, "only 0 of 6 rows"));
    CHECK(access(path, F_OK) != 0);
    CHECK(test_run(NULL, "ls -A '%s' | grep -q partial", test_tmpdir()) != 0);
    w = inf_kld_base_writer_open(path, 8, N_VOCAB, 2, tokens, &err);
    CHECK(w != NULL);
    inf_kld_base_writer_close(w);
    CHECK(test_run(NULL, "ls -A '%s' | grep -q partial", test_tmpdir()) != 0);
}

/* Expect opening `path` to fail with `needle` in the message. */
/* Opening `path` fails with `status`, at byte `offset`, and a message containing `needle`. */
static int open_fails_with(const char *path, ggtk_status status, uint64_t offset,
                           const char *needle)
{
    ggtk_error err = {0};
    inf_kld_base *b = inf_kld_base_open(path, &err);
    inf_kld_base_close(b);
    int ok = !b && err.status == status && err.offset == offset && strstr(err.message, needle);
    if (!ok)
        fprintf(stderr, "    %s: %s at %llu '%s' (wanted %s at %llu '%s')\n", path,
                ggtk_strerror(err.status), (unsigned long long)err.offset, err.message,
                ggtk_strerror(status), (unsigned long long)offset, needle);
    return ok;
}

TEST(test_kld_base_refuses_broken_files)
{
    char path[512];
    snprintf(path, sizeof path, "%s", test_tmpfile("good.kld"));
    inf_token tokens[16];
    uint16_t *rows = calloc(6 * inf_logprob_row_words(N_VOCAB), sizeof *rows);
    CHECK(rows && write_base(path, tokens, rows));
    free(rows);
    const char *dir = test_tmpdir();
    CHECK(test_run(NULL, "cd '%s' && cp good.kld cut.kld && truncate -s -1 cut.kld && "
                   "cp good.kld long.kld && printf x >> long.kld && "
                   "cp good.kld magic.kld && printf '_LOGITS_' | dd of=magic.kld conv=notrunc "
                   "status=none && cp good.kld token.kld && "
                   "printf '\\377\\377\\000\\000' | dd of=token.kld bs=1 seek=24 conv=notrunc "
                   "status=none && cp good.kld ctx.kld && "
                   "printf '\\002\\000\\000\\000' | dd of=ctx.kld bs=1 seek=8 conv=notrunc "
                   "status=none && head -c 10 good.kld > short.kld", dir) == 0);
    char p[512];
    snprintf(p, sizeof p, "%s/cut.kld", dir);
    struct stat good;
    CHECK(stat(path, &good) == 0);
    const uint64_t size = (uint64_t)good.st_size;
    /* The offset is where the file ends for a cut one, where it should end for a long one. */
    CHECK(open_fails_with(p, GGTK_ERR_TRUNCATED, size - 1, "truncated"));
    snprintf(p, sizeof p, "%s/long.kld", dir);
    CHECK(open_fails_with(p, GGTK_ERR_LAYOUT, size, "trailing data"));
    snprintf(p, sizeof p, "%s/magic.kld", dir);
    CHECK(open_fails_with(p, GGTK_ERR_MAGIC, 0, "not a base log-probability file"));
    snprintf(p, sizeof p, "%s/short.kld", dir);
    CHECK(open_fails_with(p, GGTK_ERR_MAGIC, 0, "not a base log-probability file"));
    snprintf(p, sizeof p, "%s/token.kld", dir);
    CHECK(open_fails_with(p, GGTK_ERR_INVALID, 24, "outside the vocabulary"));
    snprintf(p, sizeof p, "%s/ctx.kld", dir);
    CHECK(open_fails_with(p, GGTK_ERR_INVALID, 8, "n_ctx at byte 8"));
    snprintf(p, sizeof p, "%s/none.kld", dir);
    CHECK(open_fails_with(p, GGTK_ERR_IO, GGTK_NO_OFFSET, "cannot open"));
    CHECK(inf_kld_base_open(p, NULL) == NULL);
}

TEST(test_kld_uncertainties_of_identical_models_are_zero_not_nan)
{
    /* The variance of the difference is computed as a difference of sums, which rounding can
     * leave just below 0 (gguf-eval printed "± -nan" for a model against its own base). */
    for (unsigned seed = 1; seed <= 50; seed++) {
        inf_kld_stats s = {0};
        float logits[64];
        fill_logits(logits, 64, seed);
        for (int i = 0; i < 64; i++) {
            double nll = logits[i] + 5.0;
            s.sum_nll += nll;
            s.sum_nll2 += nll * nll;
            s.sum_nll_base += nll;
            s.sum_nll_base2 += nll * nll;
            s.sum_nll_nll_base += nll * nll;
            s.count++;
        }
        inf_kld_summary r = inf_kld_estimates(&s);
        CHECK_MSG(r.log_ppl_ratio.error >= 0 && r.log_ppl_ratio.error < 1e-6 &&
                  r.ppl_diff.error >= 0 && r.ppl_diff.error < 1e-5,
                  "seed %u: ratio error %g, difference error %g", seed, r.log_ppl_ratio.error,
                  r.ppl_diff.error);
    }
}

/* A base file of n_chunk chunks of 8 tokens whose rows come from real logits (every row
 * valid). */
static bool write_real_base(const char *path, int32_t n_vocab, int32_t n_chunk)
{
    size_t words = inf_logprob_row_words(n_vocab);
    inf_token tokens[8 * 4] = {0};
    uint16_t *rows = calloc(3 * (size_t)n_chunk * words, sizeof *rows);
    float *logits = malloc((size_t)n_vocab * sizeof *logits);
    inf_kld_base_writer *w = rows && logits ? inf_kld_base_writer_open(path, 8, n_vocab, n_chunk,
                                                                       tokens, NULL)
                                            : NULL;
    bool ok = w != NULL;
    for (int32_t r = 0; ok && r < 3 * n_chunk; r++) {
        fill_logits(logits, n_vocab, (unsigned)r + 7);
        inf_logprob_row_encode(logits, n_vocab, 0, rows + (size_t)r * words);
    }
    ok = ok && inf_kld_base_writer_write(w, rows, 3 * (size_t)n_chunk, NULL) == GGTK_OK &&
         inf_kld_base_writer_finish(w, NULL) == GGTK_OK;
    if (!ok && w)
        inf_kld_base_writer_close(w);
    free(rows);
    free(logits);
    return ok;
}

/* Write the 4 bytes of `value` at `offset` of a copy `name` of `source`; the copy's path. */
static const char *patched_copy(const char *source, const char *name, long offset,
                                const void *value)
{
    static char path[512];
    snprintf(path, sizeof path, "%s", test_tmpfile(name));
    unsigned char b[4];
    memcpy(b, value, 4);
    int rc = test_run(NULL, "cp '%s' '%s' && printf '\\%03o\\%03o\\%03o\\%03o' | dd of='%s' bs=1 "
                      "seek=%ld conv=notrunc status=none", source, path, b[0], b[1], b[2], b[3],
                      path, offset);
    return rc == 0 ? path : NULL;
}

TEST(test_kld_base_refuses_hostile_header_sizes_naming_the_field)
{
    char good[512];
    snprintf(good, sizeof good, "%s", test_tmpfile("sizes.kld"));
    CHECK(write_real_base(good, N_VOCAB, 2));
    const int32_t huge_vocab = 1 << 24, over_vocab = (1 << 24) + 1, huge_chunks = INT32_MAX;
    const uint32_t huge_ctx = 1u << 24, over_ctx = (1u << 24) + 1;
    struct stat st;
    CHECK(stat(good, &st) == 0);
    const uint64_t good_size = (uint64_t)st.st_size;
    CHECK(open_fails_with(patched_copy(good, "vocab.kld", 12, &huge_vocab), GGTK_ERR_TRUNCATED,
                          good_size, "truncated: n_chunk at byte 16 is 2, but the file's"));
    CHECK(open_fails_with(patched_copy(good, "vocab2.kld", 12, &over_vocab), GGTK_ERR_INVALID, 12,
                          "n_vocab at byte 12 is 16777217"));
    CHECK(open_fails_with(patched_copy(good, "ctx.kld", 8, &huge_ctx), GGTK_ERR_TRUNCATED,
                          good_size,
                          "hold 0 chunks of n_ctx 16777216"));
    CHECK(open_fails_with(patched_copy(good, "ctx2.kld", 8, &over_ctx), GGTK_ERR_INVALID, 8,
                          "n_ctx at byte 8 is 16777217"));
    CHECK(open_fails_with(patched_copy(good, "chunks.kld", 16, &huge_chunks), GGTK_ERR_TRUNCATED,
                          good_size,
                          "n_chunk at byte 16 is 2147483647, but the file's"));
}

/* Expect reading chunk 2 of `path` to fail naming the file, the chunk and the row. */
static int chunk_fails_with(const char *path, const char *needle)
{
    ggtk_error err = {0};
    inf_kld_base *b = inf_kld_base_open(path, &err);
    uint16_t *rows = calloc(3 * inf_logprob_row_words(N_VOCAB), sizeof *rows);
    ggtk_status status = GGTK_OK;
    int ok = b && rows && inf_kld_base_read_chunk(b, 0, rows, &err) == GGTK_OK &&
             ((status = inf_kld_base_read_chunk(b, 1, rows, &err)) == GGTK_ERR_INVALID ||
              status == GGTK_ERR_NONFINITE) &&
             strstr(err.message, path) && strstr(err.message, needle);
    if (!ok)
        fprintf(stderr, "    %s: '%s' (wanted '%s')\n", path, err.message, needle);
    free(rows);
    inf_kld_base_close(b);
    return ok;
}

TEST(test_kld_base_refuses_rows_no_model_can_produce)
{
    char good[512];
    snprintf(good, sizeof good, "%s", test_tmpfile("rows.kld"));
    CHECK(write_real_base(good, N_VOCAB, 2));
    /* Chunk 2 (0-based 1), its row 1: header floats at the row's first two words. */
    long row_bytes = 2 * (long)inf_logprob_row_words(N_VOCAB);
    long row = 20 + 2 * 8 * 4 + 3 * row_bytes + row_bytes;
    const float nan = NAN, inf = INFINITY, big_scale = 1.0f, positive = 0.5f, negative = -1.0f;
    CHECK(chunk_fails_with(patched_copy(good, "nan_scale.kld", row, &nan),
                           "chunk 2: corrupt row 1"));
    CHECK(chunk_fails_with(patched_copy(good, "inf_min.kld", row + 4, &inf), "lp_min inf"));
    CHECK(chunk_fails_with(patched_copy(good, "big_scale.kld", row, &big_scale), "scale 1,"));
    CHECK(chunk_fails_with(patched_copy(good, "pos_min.kld", row + 4, &positive),
                           "lp_min 0.5"));
    CHECK(chunk_fails_with(patched_copy(good, "neg_scale.kld", row, &negative), "scale -1,"));
}
