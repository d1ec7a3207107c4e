/* op_soft_max.c - softmax over rows of (x * scale + mask) with an optional mask tensor or a
 * causal mask, optionally limited to a sliding window. Sums are kept in double, as ggml does. */
#include <math.h>

#include "cpu_internal.h"
#include "vec.h"
#include "engine/tensor/tensor_internal.h"

bool cpu_soft_max_supports(const inf_tensor *node)
{
    return node->src[0]->type == GGTK_TENSOR_F32 && inf_tensor_is_contiguous(node);
}

void cpu_soft_max_compute(const cpu_params *p, inf_tensor *node)
{
    const inf_tensor *a = node->src[0], *mask = node->src[1];
    const float scale = inf_op_param_f32(node, 0);
    const bool causal = node->op_params[1] != 0;
    const int64_t n_past = node->op_params[2], window = node->op_params[3];
    const int64_t n_kv = node->ne[0], n_q = node->ne[1];
    const cpu_vec_kernels *vec = cpu_vec_get();
    int64_t begin, end;
    cpu_split(inf_tensor_nrows(node), p, &begin, &end);
    for (int64_t r = begin; r < end; r++) {
        const int64_t i1 = r % n_q, i2 = r / n_q % node->ne[2], i3 = r / (n_q * node->ne[2]);
        /* Keys outside [first, first + visible) - past the causal limit or before the sliding
         * window - get weight 0 without being read. */
        const int64_t last = causal ? n_past + i1 : n_kv - 1;
        const int64_t first = window > 0 && last - window + 1 > 0 ? last - window + 1 : 0;
        const int64_t visible = last + 1 - first;
        const char *src = (const char *)a->data + first * a->nb[0] + i1 * a->nb[1] +
                          i2 * a->nb[2] + i3 * a->nb[3];
        const float *m = mask ? (const float *)((const char *)mask->data + first * mask->nb[0] +
                                                i1 * mask->nb[1])
                              : NULL;
        float *row = inf_tensor_element(node, 0, i1, i2, i3), *dst = row + first;
        float max;
        if (a->nb[0] == sizeof(float) && (!m || mask->nb[0] == sizeof(float))) {
            max = vec->scale_mask_max((const float *)src, m, scale, dst, visible);
        } else {
            max = -INFINITY;
            for (int64_t i = 0; i < visible; i++) {
                float x, mv = 0.0f;
                memcpy(&x, src + i * a->nb[0], sizeof x);
                if (m)
                    memcpy(&mv, (const char *)m + i * mask->nb[0], sizeof mv);
                dst[i] = x * scale + mv;
                max = dst[i] > max ? dst[i] : max;
            }
        }
        const double sum = max != -INFINITY ? vec->exp_sum(dst, max, visible) : 0.0;
        /* A row whose every key is hidden is all zeros rather than NaN. */
        const float norm = sum > 0.0 ? (float)(1.0 / sum) : 0.0f;
#pragma omp simd
        for (int64_t i = 0; i < visible; i++)
            dst[i] *= norm;
        memset(row, 0, (size_t)first * sizeof *row);
        memset(dst + visible, 0, (size_t)(n_kv - first - visible) * sizeof *dst);
    }
}
