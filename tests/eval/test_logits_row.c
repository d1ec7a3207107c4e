/* Tests of the decoded-row helpers (inf_logits_softmax, inf_logits_top_k) against brute-force
 * references: softmax in double without shifting, top-k by sorting the whole row. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <ggtk/inf_eval.h>

#include "test.h"

/* Logits with many exact ties (values on a coarse grid) and a wide range. */
static void make_row(float *row, int32_t n, unsigned seed)
{
    srand(seed);
    for (int32_t i = 0; i < n; i++)
        row[i] = (float)(rand() % 41 - 20) * 0.5f;
}

TEST(test_softmax_matches_a_double_reference_and_sums_to_one)
{
    enum { N = 3000 };
    static float logits[N], probs[N];
    make_row(logits, N, 7);
    logits[17] = 60.0f; /* e^60 overflows float: only the shifted form survives */
    CHECK(inf_logits_softmax(logits, N, probs, NULL) == GGTK_OK);
    double sum_exp = 0, sum = 0;
    for (int32_t i = 0; i < N; i++)
        sum_exp += exp((double)logits[i] - 60.0);
    double worst = 0;
    for (int32_t i = 0; i < N; i++) {
        double want = exp((double)logits[i] - 60.0) / sum_exp;
        double rel = fabs(probs[i] - want) / (want > 1e-30 ? want : 1e-30);
        worst = rel > worst && want > 1e-30 ? rel : worst;
        sum += probs[i];
    }
    CHECK_MSG(worst < 1e-5, "worst relative error %g", worst);
    CHECK_MSG(fabs(sum - 1.0) < 1e-5, "sum %.9f", sum);
}

TEST(test_softmax_works_in_place_and_gives_minus_inf_zero)
{
    float row[4] = {1.0f, -INFINITY, 1.0f, 0.0f};
    CHECK(inf_logits_softmax(row, 4, row, NULL) == GGTK_OK);
    double z = 2 * exp(1.0) + 1.0;
    CHECK(row[1] == 0.0f);
    CHECK(fabs(row[0] - exp(1.0) / z) < 1e-6 && row[0] == row[2]);
    CHECK(fabs(row[3] - 1.0 / z) < 1e-6);
}

TEST(test_softmax_refuses_bad_rows_through_ggtk_error)
{
    float probs[3];
    ggtk_error err;
    float nan_row[3] = {0.0f, NAN, 1.0f};
    CHECK(inf_logits_softmax(nan_row, 3, probs, &err) == GGTK_ERR_NONFINITE);
    CHECK(err.offset == GGTK_NO_OFFSET && strstr(err.message, "logit 1"));
    float inf_row[2] = {INFINITY, 0.0f};
    CHECK(inf_logits_softmax(inf_row, 2, probs, &err) == GGTK_ERR_NONFINITE);
    float empty_row[2] = {-INFINITY, -INFINITY};
    CHECK(inf_logits_softmax(empty_row, 2, probs, &err) == GGTK_ERR_NONFINITE);
    CHECK(strstr(err.message, "-inf"));
    CHECK(inf_logits_softmax(nan_row, 0, probs, &err) == GGTK_ERR_USAGE);
    CHECK(inf_logits_softmax(nan_row, 3, probs, NULL) == GGTK_ERR_NONFINITE);
}

/* Larger first, then lower id: the order inf_logits_top_k promises. */
static const float *sort_row;
static int by_rank(const void *a, const void *b)
{
    int32_t ia = *(const int32_t *)a, ib = *(const int32_t *)b;
    if (sort_row[ia] != sort_row[ib])
        return sort_row[ia] > sort_row[ib] ? -1 : 1;
    return ia < ib ? -1 : 1;
}

TEST(test_top_k_matches_a_full_sort_with_ties_by_lower_id)
{
    enum { N = 2000 };
    static float logits[N];
    static int32_t order[N];
    static inf_token ids[N];
    static float values[N];
    for (unsigned seed = 1; seed <= 4; seed++) {
        make_row(logits, N, seed);
        logits[N - 1] = INFINITY;
        logits[3] = -INFINITY;
        for (int32_t i = 0; i < N; i++)
            order[i] = i;
        sort_row = logits;
        qsort(order, N, sizeof *order, by_rank);
        const int32_t ks[] = {1, 2, 7, 50, 999, N};
        for (size_t t = 0; t < sizeof ks / sizeof ks[0]; t++) {
            int32_t k = ks[t];
            CHECK(inf_logits_top_k(logits, N, k, ids, values, NULL) == GGTK_OK);
            int32_t first_bad = -1;
            for (int32_t j = 0; j < k && first_bad < 0; j++)
                if (ids[j] != order[j] || values[j] != logits[order[j]])
                    first_bad = j;
            CHECK_MSG(first_bad < 0, "seed %u k %d: rank %d is id %d, expected %d", seed, k,
                      first_bad, first_bad < 0 ? 0 : ids[first_bad],
                      first_bad < 0 ? 0 : order[first_bad]);
        }
    }
    float row[5] = {1, 3, 3, 2, 3};
    CHECK(inf_logits_top_k(row, 5, 3, ids, NULL, NULL) == GGTK_OK);
    CHECK(ids[0] == 1 && ids[1] == 2 && ids[2] == 4);
}

TEST(test_top_k_refuses_bad_arguments_through_ggtk_error)
{
    float row[3] = {1, NAN, 2};
    inf_token ids[4] = {-1, -1, -1, -1};
    ggtk_error err;
    CHECK(inf_logits_top_k(row, 3, 2, ids, NULL, &err) == GGTK_ERR_NONFINITE);
    CHECK(strstr(err.message, "logit 1 is NaN") && ids[0] == -1);
    row[1] = 0;
    CHECK(inf_logits_top_k(row, 3, 4, ids, NULL, &err) == GGTK_ERR_USAGE);
    CHECK(strstr(err.message, "k 4"));
    CHECK(inf_logits_top_k(row, 3, 0, ids, NULL, NULL) == GGTK_ERR_USAGE);
    CHECK(ids[0] == -1);
}
