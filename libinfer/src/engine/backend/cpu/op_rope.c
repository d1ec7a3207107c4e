/* op_rope.c - rotary position embedding, NORMAL (adjacent pairs) and NEOX (split halves)
 * layouts. Angles follow ggml's recurrence (theta multiplied by freq_base^(-2/n_dims) pair by
 * pair, in float) so results match llama.cpp bit for bit where the maths library does. */
#include <math.h>

#include "cpu_internal.h"
#include <ggtk/inf_ops.h>
#include "engine/tensor/tensor_internal.h"

bool cpu_rope_supports(const inf_tensor *node)
{
    return node->src[0]->type == GGTK_TENSOR_F32 && inf_tensor_is_contiguous(node);
}

/* Each thread keeps a cos/sin table of one token: n_dims floats, one cache line apart. */
size_t cpu_rope_work_size(const inf_tensor *node, int n_threads)
{
    return (size_t)n_threads * ((size_t)node->ne[0] * sizeof(float) + 64);
}

static void fill_angles(float *table, int n_dims, float position, float freq_base,
                        float freq_scale)
{
    const float theta_scale = powf(freq_base, -2.0f / (float)n_dims);
    float theta = position;
    for (int i = 0; i < n_dims; i += 2) {
        const float angle = theta * freq_scale;
        table[i] = cosf(angle);
        table[i + 1] = sinf(angle);
        theta *= theta_scale;
    }
}

void cpu_rope_compute(const cpu_params *p, inf_tensor *node)
{
    const inf_tensor *a = node->src[0], *pos = node->src[1];
    const int n_dims = node->op_params[0];
    const bool neox = node->op_params[1] == INF_ROPE_NEOX;
    const float freq_base = inf_op_param_f32(node, 2), freq_scale = inf_op_param_f32(node, 3);
    const int64_t ne0 = node->ne[0], n_head = node->ne[1], half = n_dims / 2;
    float *table = (float *)(p->work + (size_t)p->ith * ((size_t)ne0 * sizeof(float) + 64));
    int64_t begin, end, table_token = -1;
    cpu_split(n_head * node->ne[2], p, &begin, &end);
    for (int64_t r = begin; r < end; r++) {
        const int64_t head = r % n_head, token = r / n_head;
        if (token != table_token) {
            int32_t position;
            memcpy(&position, (const char *)pos->data + token * pos->nb[0], sizeof position);
            fill_angles(table, n_dims, (float)position, freq_base, freq_scale);
            table_token = token;
        }
        const char *src = (const char *)a->data + head * a->nb[1] + token * a->nb[2];
        float *dst = inf_tensor_element(node, 0, head, token, 0);
        for (int64_t i = 0; i < n_dims; i += 2) {
            const int64_t i0 = neox ? i / 2 : i, i1 = neox ? i / 2 + half : i + 1;
            float x0, x1;
            memcpy(&x0, src + i0 * a->nb[0], sizeof x0);
            memcpy(&x1, src + i1 * a->nb[0], sizeof x1);
            dst[i0] = x0 * table[i] - x1 * table[i + 1];
            dst[i1] = x0 * table[i + 1] + x1 * table[i];
        }
        for (int64_t i = n_dims; i < ne0; i++)
            memcpy(&dst[i], src + i * a->nb[0], sizeof(float));
    }
}
