/* op_rope.c - rotary position embedding, NORMAL (adjacent pairs) and NEOX (split halves)
 * layouts, with frequency factors (src[2]), linear and YaRN scaling. Angles follow ggml's
 * recurrence (theta multiplied by freq_base^(-2/n_dims) pair by pair, in float) and its order of
 * operations, so results match llama.cpp's to float rounding: its build fuses multiply-adds
 * (tests/engine/test_rope_ggml.c measures the difference), libinfer's does not. */
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

/* The rope parameters of a node (see inf_rope_ext in ops.c for the layout). */
typedef struct rope_angles {
    int n_dims;
    float freq_base, freq_scale, ext_factor, attn_factor;
    float range[2];           /* YaRN: first and last blended pair dimension */
    const float *factors;     /* frequency factors, or NULL */
} rope_angles;

/* YaRN's weight of extrapolation for the pair starting at element i: 1 below the range, 0 above,
 * linear in between (ggml's ramp, on the pair index i / 2). */
static float yarn_ramp(const float range[2], int64_t i)
{
    const float span = range[1] - range[0] > 0.001f ? range[1] - range[0] : 0.001f;
    const float y = ((float)(i / 2) - range[0]) / span;
    return 1.0f - (y < 0 ? 0.0f : y > 1 ? 1.0f : y);
}

/* cos and sin of every pair's angle at `position`, in ggml's order of operations: theta starts
 * at the position and is multiplied by freq_base^(-2/n_dims) pair by pair in float; each pair
 * divides it by its frequency factor, scales it by freq_scale and, with YaRN, blends it with the
 * unscaled angle. */
static void fill_angles(float *table, const rope_angles *r, float position)
{
    const float theta_scale = powf(r->freq_base, -2.0f / (float)r->n_dims);
    float theta = position;
    for (int i = 0; i < r->n_dims; i += 2) {
        const float extrapolated = theta / (r->factors ? r->factors[i / 2] : 1.0f);
        float angle = r->freq_scale * extrapolated, mscale = r->attn_factor;
        if (r->ext_factor != 0.0f) {
            const float mix = yarn_ramp(r->range, i) * r->ext_factor;
            angle = angle * (1 - mix) + extrapolated * mix;
            mscale *= 1.0f + 0.1f * logf(1.0f / r->freq_scale);
        }
        table[i] = cosf(angle) * mscale;
        table[i + 1] = sinf(angle) * mscale;
        theta *= theta_scale;
    }
}

void cpu_rope_compute(const cpu_params *p, inf_tensor *node)
{
    const inf_tensor *a = node->src[0], *pos = node->src[1];
    const rope_angles angles = {
        node->op_params[0], inf_op_param_f32(node, 2), inf_op_param_f32(node, 3),
        inf_op_param_f32(node, 4), inf_op_param_f32(node, 5),
        {inf_op_param_f32(node, 6), inf_op_param_f32(node, 7)},
        node->src[2] ? (const float *)node->src[2]->data : NULL};
    const int n_dims = angles.n_dims;
    const bool neox = node->op_params[1] == INF_ROPE_NEOX;
    const int64_t ne0 = node->ne[0], n_head = node->ne[1], half = n_dims / 2;
    float *table = (float *)(p->work + (size_t)p->ith * ((size_t)ne0 * sizeof(float) + 64));
    int64_t begin, end, table_token = -1;
    cpu_split(n_head * node->ne[2], p, &begin, &end);
    for (int64_t r = begin; r < end; r++) {
        const int64_t head = r % n_head, token = r / n_head;
        if (token != table_token) {
            int32_t position;
            memcpy(&position, (const char *)pos->data + token * pos->nb[0], sizeof position);
            fill_angles(table, &angles, (float)position);
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
