/* logits_math.c - see logits_math.h. The kernels work in place, so the row goes through them a
 * block at a time in a stack buffer; a 49152-token row is read twice from the L2 cache. */
#include "logits_math.h"

#include <string.h>

#include "engine/backend/cpu/vec.h"


/* Largest of sign * x[i]: the kernel scales by sign, exactly. */
static float signed_max(const float *x, int32_t n, float sign)
{
    const cpu_vec_kernels *k = cpu_vec_get();
    float buf[LOGITS_BLOCK];
    float max = sign * x[0];
    for (int32_t i = 0; i < n; i += LOGITS_BLOCK) {
        int32_t len = n - i < LOGITS_BLOCK ? n - i : LOGITS_BLOCK;
        float m = k->scale_mask_max(x + i, NULL, sign, buf, len);
        max = m > max ? m : max;
    }
    return max;
}

float logits_max(const float *x, int32_t n) { return signed_max(x, n, 1.0f); }

float logits_min(const float *x, int32_t n) { return -signed_max(x, n, -1.0f); }

double logits_sum_exp(const float *x, int32_t n, float shift)
{
    const cpu_vec_kernels *k = cpu_vec_get();
    float buf[LOGITS_BLOCK];
    double sum = 0.0;
    for (int32_t i = 0; i < n; i += LOGITS_BLOCK) {
        int32_t len = n - i < LOGITS_BLOCK ? n - i : LOGITS_BLOCK;
        memcpy(buf, x + i, (size_t)len * sizeof *buf);
        sum += k->exp_sum(buf, shift, len);
    }
    return sum;
}

void logits_exp(float *x, int32_t n)
{
    cpu_vec_get()->exp_sum(x, 0.0f, n);
}
