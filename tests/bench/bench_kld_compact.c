/* bench_kld_compact.c - size and accuracy of the compact base format on real base files, where
 * gguf-eval cannot run the model (Gemma 3 at 262,144 tokens): BASE.kld and Q.kld are llama-format
 * bases of two models over the same tokens (written by llama-perplexity or gguf-eval). BASE is
 * converted to the compact format (--kl-divergence-base-convert's path), then every position's
 * KL-divergence of Q against BASE is computed from the llama row and from the compact row, with
 * Q's log-probabilities decoded from its own row as the logits. Prints one line per measure;
 * the rows are read a group at a time, so the peak RSS shows that neither format is held whole.
 *
 *   bench_kld_compact BASE.kld Q.kld OUT.ckld [EPSILON [MAX_ENTRIES]]
 */
#include <math.h>
#include <string.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>

#include "eval/kld_file.h"

enum { GROUP = 16 };

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static long long file_size(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 ? (long long)st.st_size : -1;
}

static int fail(const ggtk_error *err)
{
    fprintf(stderr, "bench_kld_compact: %s\n", err->message);
    return 1;
}

/* BASE rewritten as a compact base at `out`. */
static ggtk_status convert(inf_kld_base *in, const char *out, const inf_kld_compact_params *params,
                           ggtk_error *err)
{
    const int32_t per_chunk = (int32_t)kld_rows_per_chunk(in->n_ctx);
    uint16_t *rows = malloc((size_t)GROUP * inf_logprob_row_words(in->n_vocab) * sizeof *rows);
    inf_kld_base_writer *w = inf_kld_base_writer_open_compact(out, in->n_ctx, in->n_vocab,
                                                              in->n_chunk, in->tokens, params, err);
    ggtk_status status = w && rows ? GGTK_OK : GGTK_ERR_NOMEM;
    for (int32_t c = 0; c < in->n_chunk && status == GGTK_OK; c++)
        for (int32_t f = 0; f < per_chunk && status == GGTK_OK; f += GROUP) {
            const int32_t n = per_chunk - f < GROUP ? per_chunk - f : GROUP;
            status = inf_kld_base_read_rows(in, c, f, n, rows, err);
            if (status == GGTK_OK)
                status = inf_kld_base_writer_write(w, rows, (size_t)n, err);
        }
    free(rows);
    if (status == GGTK_OK)
        return inf_kld_base_writer_finish(w, err);
    inf_kld_base_writer_close(w);
    return status;
}

/* A llama row's log-probabilities, used as Q's logits. */
static void decode_row(const uint16_t *row, int32_t n_vocab, float *out)
{
    float h[2];
    memcpy(h, row, sizeof h);
    for (int32_t i = 0; i < n_vocab; i++)
        out[i] = h[0] * row[4 + i] + h[1];
}

int main(int argc, char **argv)
{
    if (argc < 4) {
        fprintf(stderr, "usage: bench_kld_compact BASE.kld Q.kld OUT.ckld [EPSILON [MAX_ENTRIES]]\n");
        return 2;
    }
    inf_kld_compact_params params = inf_kld_compact_params_default();
    if (argc > 4)
        params.epsilon = strtof(argv[4], NULL);
    if (argc > 5)
        params.max_entries = atoi(argv[5]);
    ggtk_error err = {0};
    inf_kld_base *base = inf_kld_base_open(argv[1], &err), *q = NULL, *compact = NULL;
    if (!base || !(q = inf_kld_base_open(argv[2], &err)))
        return fail(&err);
    if (q->n_vocab != base->n_vocab || q->n_ctx != base->n_ctx ||
        memcmp(q->tokens, base->tokens, (size_t)base->n_chunk * base->n_ctx * 4) != 0) {
        fprintf(stderr, "bench_kld_compact: %s and %s do not hold the same tokens\n", argv[1],
                argv[2]);
        return 1;
    }
    double t0 = now();
    if (convert(base, argv[3], &params, &err) != GGTK_OK)
        return fail(&err);
    const double convert_seconds = now() - t0;
    if (!(compact = inf_kld_base_open(argv[3], &err)))
        return fail(&err);
    const int32_t n_vocab = base->n_vocab, per_chunk = (int32_t)kld_rows_per_chunk(base->n_ctx);
    const size_t words = inf_logprob_row_words(n_vocab);
    uint16_t *rows = malloc(GROUP * words * 2), *q_rows = malloc(GROUP * words * 2);
    float *logits = malloc((size_t)n_vocab * sizeof *logits);
    sparse_row sparse[GROUP] = {{0}};
    inf_kld_stats s_full = {0}, s_compact = {0};
    double max_diff = 0;
    long long entries = 0;
    for (int32_t c = 0; c < base->n_chunk; c++)
        for (int32_t f = 0; f < per_chunk; f += GROUP) {
            const int32_t n = per_chunk - f < GROUP ? per_chunk - f : GROUP;
            if (inf_kld_base_read_rows(base, c, f, n, rows, &err) != GGTK_OK ||
                inf_kld_base_read_rows(q, c, f, n, q_rows, &err) != GGTK_OK ||
                kld_base_read_sparse(compact, c, f, n, sparse, &err) != GGTK_OK)
                return fail(&err);
            for (int32_t r = 0; r < n; r++) {
                const inf_token token = base->tokens[(size_t)c * base->n_ctx +
                                                     base->n_ctx / 2 + f + r + 1];
                decode_row(q_rows + r * words, n_vocab, logits);
                const double a = inf_kld_token(logits, n_vocab, rows + r * words, token, &s_full,
                                               NULL);
                const double b = sparse_kld_token(logits, n_vocab, &sparse[r], token, &s_compact,
                                                  NULL);
                max_diff = fabs(a - b) > max_diff ? fabs(a - b) : max_diff;
                entries += sparse[r].n;
            }
        }
    struct rusage usage;
    getrusage(RUSAGE_SELF, &usage);
    const long long full_bytes = file_size(argv[1]), compact_bytes = file_size(argv[3]);
    const double kld_full = s_full.sum_kld / s_full.count;
    const double kld_compact = s_compact.sum_kld / s_compact.count;
    printf("n_vocab %d, positions %lld, epsilon %g, max_entries %d\n", n_vocab,
           (long long)s_full.count, params.epsilon, params.max_entries);
    printf("llama format   %lld bytes (%.1f KiB per position)\n", full_bytes,
           full_bytes / 1024.0 / s_full.count);
    printf("compact format %lld bytes (%.1f KiB per position, %.0f entries on average), "
           "%.1fx smaller, converted in %.1f s\n", compact_bytes,
           compact_bytes / 1024.0 / s_full.count, (double)entries / s_full.count,
           (double)full_bytes / compact_bytes, convert_seconds);
    printf("mean KLD       llama %.6f, compact %.6f, difference %.2e; largest per position "
           "%.2e\n", kld_full, kld_compact, kld_compact - kld_full, max_diff);
    printf("same top       llama %lld, compact %lld of %lld\n", (long long)s_full.n_same_top,
           (long long)s_compact.n_same_top, (long long)s_full.count);
    printf("PPL(base)      llama %.4f, compact %.4f\n", exp(s_full.sum_nll_base / s_full.count),
           exp(s_compact.sum_nll_base / s_compact.count));
    printf("peak memory    %.1f MiB (max RSS)\n", usage.ru_maxrss / 1024.0);
    for (int r = 0; r < GROUP; r++)
        sparse_row_free(&sparse[r]);
    free(rows);
    free(q_rows);
    free(logits);
    inf_kld_base_close(compact);
    inf_kld_base_close(q);
    inf_kld_base_close(base);
    return 0;
}
