/* test_model_simd_levels.c - the real model (SmolLM2-135M-Instruct Q4_1) gives bit-identical
 * logits, and so the same perplexity, at every SIMD level this CPU has: 128 tokens in one
 * batch, with attention's softmax and float products, silu and the quantized products. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <ggtk/inf_eval.h>
#include <ggtk/inf_model.h>
#include <ggtk/inf_simd.h>
#include "test.h"

enum { N_TOKENS = 128 };

/* All N_TOKENS logit rows of `tokens` at the active level, and their perplexity (each row
 * predicting the next token). NULL on failure. */
static float *level_logits(inf_model *m, const inf_token *tokens, int32_t n_vocab, double *ppl)
{
    ggtk_error err = {0};
    inf_session_params sp = inf_session_params_default();
    sp.n_ctx = N_TOKENS;
    sp.n_batch = N_TOKENS;
    sp.n_threads = 2;
    inf_session *s = inf_session_new(m, &sp, &err);
    float *copy = NULL;
    int32_t rows = 0;
    if (s && inf_session_decode(s, tokens, N_TOKENS, 0, &err) == GGTK_OK) {
        const float *logits = inf_session_logits(s, &rows);
        copy = rows == N_TOKENS ? malloc((size_t)rows * n_vocab * sizeof *copy) : NULL;
        if (copy) {
            memcpy(copy, logits, (size_t)rows * n_vocab * sizeof *copy);
            inf_ppl_stats stats = {0};
            for (int32_t i = 0; i + 1 < rows; i++)
                inf_ppl_stats_add(&stats, inf_token_nll(copy + (size_t)i * n_vocab, n_vocab, tokens[i + 1]));
            *ppl = inf_ppl_stats_ppl(&stats);
        }
    } else {
        fprintf(stderr, "    %s\n", err.message);
    }
    inf_session_free(s);
    return copy;
}

TEST(test_smollm2_logits_are_identical_at_every_simd_level)
{
    const char *path = test_model_path();
    if (!path)
        SKIP("the real model is not fetched (make models)");
    ggtk_error err = {0};
    inf_model *m = inf_model_open(path, NULL, &err);
    CHECK_MSG(m != NULL, "%s", err.message);
    const int32_t n_vocab = 49152;
    /* Tokens from a fixed generator: any sequence exercises the same kernels. */
    inf_token tokens[N_TOKENS];
    uint32_t state = 12345;
    for (int i = 0; i < N_TOKENS; i++) {
        state = state * 1664525u + 1013904223u;
        tokens[i] = (inf_token)((state >> 8) % 20000u);
    }
    const inf_simd_level before = inf_simd_active();
    inf_simd_force(INF_SIMD_SCALAR);
    double want_ppl = 0;
    float *want = level_logits(m, tokens, n_vocab, &want_ppl);
    CHECK(want != NULL);
    int compared = 0;
    for (int level = INF_SIMD_SCALAR + 1; level < INF_SIMD_LEVEL_COUNT; level++) {
        if (inf_simd_force((inf_simd_level)level) != (inf_simd_level)level)
            continue;
        double ppl = 0;
        float *got = level_logits(m, tokens, n_vocab, &ppl);
        CHECK(got != NULL);
        compared++;
        size_t differ = 0, first = 0;
        float worst = 0;
        for (size_t i = 0; i < (size_t)N_TOKENS * n_vocab; i++) {
            if (memcmp(&got[i], &want[i], sizeof *got) != 0) {
                first = differ++ ? first : i;
                worst = fmaxf(worst, fabsf(got[i] - want[i]));
            }
        }
        CHECK_MSG(differ == 0, "%s: %zu logits differ from scalar's (first at %zu, largest by %g), PPL %.6f vs %.6f",
                  inf_simd_level_name((inf_simd_level)level), differ, first, worst, ppl, want_ppl);
        CHECK_MSG(memcmp(&ppl, &want_ppl, sizeof ppl) == 0, "%s PPL %.9f, scalar %.9f",
                  inf_simd_level_name((inf_simd_level)level), ppl, want_ppl);
        free(got);
    }
    inf_simd_force(before);
    free(want);
    inf_model_close(m);
    if (!compared)
        SKIP("this CPU has no SIMD level to compare with scalar");
}
