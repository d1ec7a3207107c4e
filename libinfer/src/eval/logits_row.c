/* logits_row.c - what a program does with one decoded row of logits: turn it into probabilities
 * (softmax) or pick its most likely tokens (top-k), on the same exponential the scores use. */
#include <math.h>

#include "logits_math.h"
#include <ggtk/inf_eval.h>

ggtk_status inf_logits_softmax(const float *logits, int32_t n, float *probs, ggtk_error *err)
{
    if (n < 1)
        return ggtk_error_set(err, GGTK_ERR_USAGE, GGTK_NO_OFFSET,
                              "softmax: a row of %d logits (expected at least 1)", n);
    float max = -INFINITY;
    for (int32_t i = 0; i < n; i++) {
        if (isnan(logits[i]) || logits[i] == INFINITY)
            return ggtk_error_set(err, GGTK_ERR_NONFINITE, GGTK_NO_OFFSET,
                                  "softmax: logit %d is %f (expected a finite value or -inf)", i,
                                  (double)logits[i]);
        max = logits[i] > max ? logits[i] : max;
    }
    if (max == -INFINITY)
        return ggtk_error_set(err, GGTK_ERR_NONFINITE, GGTK_NO_OFFSET,
                              "softmax: all %d logits are -inf (logit 0 is -inf)", n);
    /* Subtracting the maximum keeps every exponent <= 0: no overflow, and the largest term is 1,
     * so the sum cannot underflow to 0. */
    for (int32_t i = 0; i < n; i++)
        probs[i] = logits[i] - max;
    logits_exp(probs, n);
    double sum = 0;
    for (int32_t i = 0; i < n; i++)
        sum += probs[i];
    const float scale = (float)(1.0 / sum);
    for (int32_t i = 0; i < n; i++)
        probs[i] *= scale;
    return GGTK_OK;
}

/* Whether logit `a` (at id ia) ranks before logit `b` (at id ib): larger first, then lower id. */
static bool ranks_before(float a, int32_t ia, float b, int32_t ib)
{
    return a > b || (a == b && ia < ib);
}

/* Restore the heap order below `at` in a heap whose root is the entry that ranks last. */
static void sift_down(const float *logits, inf_token *heap, int32_t size, int32_t at)
{
    for (;;) {
        int32_t last = at;
        for (int32_t child = 2 * at + 1; child <= 2 * at + 2 && child < size; child++)
            if (ranks_before(logits[heap[last]], heap[last], logits[heap[child]], heap[child]))
                last = child;
        if (last == at)
            return;
        inf_token t = heap[at];
        heap[at] = heap[last];
        heap[last] = t;
        at = last;
    }
}

ggtk_status inf_logits_top_k(const float *logits, int32_t n, int32_t k, inf_token *ids,
                             float *values, ggtk_error *err)
{
    if (n < 1 || k < 1 || k > n)
        return ggtk_error_set(err, GGTK_ERR_USAGE, GGTK_NO_OFFSET,
                              "top-k: k %d outside 1..%d (the row's logits)", k, n);
    for (int32_t i = 0; i < n; i++)
        if (isnan(logits[i]))
            return ggtk_error_set(err, GGTK_ERR_NONFINITE, GGTK_NO_OFFSET,
                                  "top-k: logit %d is NaN", i);
    /* ids[0..k) is a heap whose root is the kept entry that ranks last: a later logit replaces
     * it when it ranks before it. The heap is built from the first k ids, then fed the rest. */
    for (int32_t i = 0; i < k; i++)
        ids[i] = i;
    for (int32_t i = k / 2 - 1; i >= 0; i--)
        sift_down(logits, ids, k, i);
    for (int32_t i = k; i < n; i++) {
        if (ranks_before(logits[i], i, logits[ids[0]], ids[0])) {
            ids[0] = i;
            sift_down(logits, ids, k, 0);
        }
    }
    /* Heap sort: the root (last-ranked) goes to the end, so the array ends up best first. */
    for (int32_t size = k - 1; size > 0; size--) {
        inf_token t = ids[0];
        ids[0] = ids[size];
        ids[size] = t;
        sift_down(logits, ids, size, 0);
    }
    for (int32_t j = 0; values && j < k; j++)
        values[j] = logits[ids[j]];
    return GGTK_OK;
}
