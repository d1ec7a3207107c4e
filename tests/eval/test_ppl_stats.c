/* test_ppl_stats.c - the score of one token and llama-perplexity's PPL / uncertainty formulas,
 * checked against values worked out by hand. */
#include <math.h>
#include <stdlib.h>

#include <ggtk/inf_simd.h>
#include <ggtk/inf_eval.h>
#include "test.h"

TEST(test_token_nll_of_uniform_logits_is_log_vocab)
{
    float logits[1000];
    for (int i = 0; i < 1000; i++)
        logits[i] = 3.25f;
    CHECK(fabs(inf_token_nll(logits, 1000, 17) - log(1000.0)) < 1e-9);
}

TEST(test_token_nll_matches_log_softmax_by_hand)
{
    const float logits[4] = {1.0f, 2.0f, 3.0f, -50.0f};
    double norm = exp(1.0) + exp(2.0) + exp(3.0) + exp(-50.0);
    for (int t = 0; t < 4; t++) {
        double expected = -(logits[t] - log(norm));
        CHECK_MSG(fabs(inf_token_nll(logits, 4, t) - expected) < 1e-6, "token %d: %.9f vs %.9f",
                  t, inf_token_nll(logits, 4, t), expected);
    }
}

TEST(test_token_nll_is_stable_for_huge_logits)
{
    const float logits[3] = {1e30f, 1e30f, -1e30f};
    CHECK(fabs(inf_token_nll(logits, 3, 0) - log(2.0)) < 1e-9);
    CHECK(isinf(inf_token_nll(logits, 3, 2)) || inf_token_nll(logits, 3, 2) > 1e29);
}

TEST(test_ppl_stats_final_estimate_formula)
{
    inf_ppl_stats s = {0};
    const double scores[3] = {1.0, 2.0, 3.0};
    for (int i = 0; i < 3; i++)
        inf_ppl_stats_add(&s, scores[i]);
    CHECK(s.count == 3);
    CHECK(fabs(inf_ppl_stats_ppl(&s) - exp(2.0)) < 1e-12);
    /* mean 2, mean of squares 14/3, variance 2/3, standard error sqrt(2/3 / 2) */
    double expected = exp(2.0) * sqrt((2.0 / 3.0) / 2.0);
    CHECK(fabs(inf_ppl_stats_error(&s) - expected) < 1e-12);
}

TEST(test_ppl_stats_without_spread_has_no_error)
{
    inf_ppl_stats s = {0};
    CHECK(isnan(inf_ppl_stats_ppl(&s)));
    inf_ppl_stats_add(&s, 0.5);
    CHECK(isnan(inf_ppl_stats_error(&s)));
    inf_ppl_stats_add(&s, 0.5);
    CHECK(isnan(inf_ppl_stats_error(&s)));
    CHECK(fabs(inf_ppl_stats_ppl(&s) - exp(0.5)) < 1e-12);
}

TEST(test_token_nll_agrees_with_double_precision_at_every_simd_level)
{
    enum { N = 49152 };
    float *logits = malloc(N * sizeof *logits);
    CHECK(logits != NULL);
    unsigned x = 7;
    for (int i = 0; i < N; i++) {
        x = x * 1103515245u + 12345u;
        logits[i] = (float)((x >> 8) & 0xffff) / 4096.0f - 8.0f; /* [-8, 8) */
    }
    double max = -INFINITY, sum = 0;
    for (int i = 0; i < N; i++)
        max = logits[i] > max ? logits[i] : max;
    for (int i = 0; i < N; i++)
        sum += exp(logits[i] - max);
    const int tokens[3] = {0, 12345, N - 1};
    for (int level = INF_SIMD_SCALAR; level < INF_SIMD_LEVEL_COUNT; level++) {
        inf_simd_force((inf_simd_level)level);
        for (int t = 0; t < 3; t++) {
            double expected = -(logits[tokens[t]] - max - log(sum));
            double got = inf_token_nll(logits, N, tokens[t]);
            CHECK_MSG(fabs(got - expected) < 1e-6, "level %d token %d: %.9f vs %.9f", level,
                      tokens[t], got, expected);
        }
    }
    free(logits);
}
