/* ref_ops.c - naive reference implementations of libinfer's operations (see ref_ops.h). */
#include "ref_ops.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "infer_util.h"

#define FOR_EACH(t)                                                                            \
    for (int64_t i3 = 0; i3 < (t)->ne[3]; i3++)                                                \
        for (int64_t i2 = 0; i2 < (t)->ne[2]; i2++)                                            \
            for (int64_t i1 = 0; i1 < (t)->ne[1]; i1++)                                        \
                for (int64_t i0 = 0; i0 < (t)->ne[0]; i0++)

float *ref_dense(const inf_tensor *t)
{
    float *out = malloc((size_t)inf_tensor_nelements(t) * sizeof *out);
    size_t k = 0;
    FOR_EACH(t) out[k++] = tensor_get(t, i0, i1, i2, i3);
    return out;
}

void ref_binary(const inf_tensor *a, const inf_tensor *b, inf_op op, float *out)
{
    size_t k = 0;
    FOR_EACH(a)
    {
        float x = tensor_get(a, i0, i1, i2, i3);
        float y = tensor_get(b, i0 % b->ne[0], i1 % b->ne[1], i2 % b->ne[2], i3 % b->ne[3]);
        out[k++] = op == INF_OP_ADD ? x + y : x * y;
    }
}

void ref_scale(const inf_tensor *a, float s, float *out)
{
    size_t k = 0;
    FOR_EACH(a) out[k++] = tensor_get(a, i0, i1, i2, i3) * s;
}

static double silu(double x)
{
    return x / (1.0 + exp(-x));
}

void ref_silu(const inf_tensor *a, float *out)
{
    size_t k = 0;
    FOR_EACH(a) out[k++] = (float)silu(tensor_get(a, i0, i1, i2, i3));
}

void ref_swiglu(const inf_tensor *gate, const inf_tensor *up, float *out)
{
    size_t k = 0;
    FOR_EACH(gate)
    out[k++] = (float)(silu(tensor_get(gate, i0, i1, i2, i3)) * tensor_get(up, i0, i1, i2, i3));
}

void ref_rms_norm(const inf_tensor *a, float eps, float *out)
{
    size_t k = 0;
    for (int64_t i3 = 0; i3 < a->ne[3]; i3++)
        for (int64_t i2 = 0; i2 < a->ne[2]; i2++)
            for (int64_t i1 = 0; i1 < a->ne[1]; i1++) {
                double sum = 0;
                for (int64_t i0 = 0; i0 < a->ne[0]; i0++) {
                    double x = tensor_get(a, i0, i1, i2, i3);
                    sum += x * x;
                }
                double scale = 1.0 / sqrt(sum / (double)a->ne[0] + eps);
                for (int64_t i0 = 0; i0 < a->ne[0]; i0++)
                    out[k++] = (float)(tensor_get(a, i0, i1, i2, i3) * scale);
            }
}

void ref_rope(const inf_tensor *a, const inf_tensor *pos, int n_dims, inf_rope_mode mode,
              float freq_base, float freq_scale, float *out)
{
    const int64_t ne0 = a->ne[0];
    const float theta_scale = powf(freq_base, -2.0f / (float)n_dims);
    for (int64_t t = 0; t < a->ne[2]; t++) {
        float theta = tensor_get(pos, t, 0, 0, 0);
        double *angle = malloc((size_t)n_dims / 2 * sizeof *angle);
        for (int i = 0; i < n_dims / 2; i++, theta *= theta_scale)
            angle[i] = (double)(theta * freq_scale);
        for (int64_t h = 0; h < a->ne[1]; h++) {
            float *o = out + (t * a->ne[1] + h) * ne0;
            for (int64_t i = 0; i < ne0; i++)
                o[i] = tensor_get(a, i, h, t, 0);
            for (int i = 0; i < n_dims / 2; i++) {
                int64_t j0 = mode == INF_ROPE_NEOX ? i : 2 * i;
                int64_t j1 = mode == INF_ROPE_NEOX ? i + n_dims / 2 : 2 * i + 1;
                double x0 = tensor_get(a, j0, h, t, 0), x1 = tensor_get(a, j1, h, t, 0);
                o[j0] = (float)(x0 * cos(angle[i]) - x1 * sin(angle[i]));
                o[j1] = (float)(x0 * sin(angle[i]) + x1 * cos(angle[i]));
            }
        }
        free(angle);
    }
}

void ref_soft_max(const inf_tensor *a, const inf_tensor *mask, float scale, bool causal,
                  int64_t n_past, float *out)
{
    const int64_t n = a->ne[0];
    double *v = malloc((size_t)n * sizeof *v);
    size_t k = 0;
    for (int64_t i3 = 0; i3 < a->ne[3]; i3++)
        for (int64_t i2 = 0; i2 < a->ne[2]; i2++)
            for (int64_t i1 = 0; i1 < a->ne[1]; i1++) {
                double max = -INFINITY, sum = 0;
                for (int64_t i0 = 0; i0 < n; i0++) {
                    v[i0] = (double)tensor_get(a, i0, i1, i2, i3) * scale;
                    if (mask)
                        v[i0] += tensor_get(mask, i0, i1, 0, 0);
                    if (causal && i0 > n_past + i1)
                        v[i0] = -INFINITY;
                    max = v[i0] > max ? v[i0] : max;
                }
                for (int64_t i0 = 0; i0 < n; i0++)
                    sum += v[i0] = isinf(v[i0]) ? 0.0 : exp(v[i0] - max);
                for (int64_t i0 = 0; i0 < n; i0++)
                    out[k++] = (float)(v[i0] / sum);
            }
    free(v);
}

void ref_get_rows(const inf_tensor *a, const inf_tensor *ids, float *out)
{
    for (int64_t i = 0; i < ids->ne[0]; i++) {
        int64_t row = (int64_t)tensor_get(ids, i, 0, 0, 0);
        inf_dequantize_row(a->type, (const char *)a->data + row * a->nb[1], out + i * a->ne[0],
                           a->ne[0]);
    }
}

/* Row (i1, i2, i3) of a as floats; through the activation format when `round_to` is a Q8 type. */
static void ref_row(const inf_tensor *t, int64_t i1, int64_t i2, int64_t i3,
                    ggtk_tensor_type round_to, float *row)
{
    if (t->type == GGTK_TENSOR_F32 || t->type == GGTK_TENSOR_F16 || t->type == GGTK_TENSOR_BF16) {
        for (int64_t i0 = 0; i0 < t->ne[0]; i0++)
            row[i0] = tensor_get(t, i0, i1, i2, i3);
    } else {
        inf_dequantize_row(t->type, (const char *)t->data + i1 * t->nb[1] + i2 * t->nb[2] + i3 * t->nb[3],
                           row, t->ne[0]);
    }
    if (round_to != GGTK_TENSOR_F32) {
        void *q = malloc((size_t)t->ne[0] * 2);
        inf_quantize_row(round_to, row, q, t->ne[0]);
        inf_dequantize_row(round_to, q, row, t->ne[0]);
        free(q);
    }
}

void ref_mul_mat(const inf_tensor *w, const inf_tensor *x, float *out)
{
    const int64_t K = w->ne[0], M = w->ne[1], N = x->ne[1];
    const ggtk_tensor_type act = w->type == GGTK_TENSOR_Q4_1   ? GGTK_TENSOR_Q8_1
                                 : w->type == GGTK_TENSOR_Q8_0 ? GGTK_TENSOR_Q8_0
                                 : w->type == GGTK_TENSOR_Q4_0 ? GGTK_TENSOR_Q8_0
                                                               : GGTK_TENSOR_F32;
    float *wr = malloc((size_t)K * sizeof *wr), *xr = malloc((size_t)K * sizeof *xr);
    size_t k = 0;
    for (int64_t i3 = 0; i3 < x->ne[3]; i3++)
        for (int64_t i2 = 0; i2 < x->ne[2]; i2++)
            for (int64_t n = 0; n < N; n++) {
                ref_row(x, n, i2, i3, act, xr);
                for (int64_t m = 0; m < M; m++) {
                    ref_row(w, m, i2 / (x->ne[2] / w->ne[2]), i3 / (x->ne[3] / w->ne[3]),
                            GGTK_TENSOR_F32, wr);
                    double sum = 0;
                    for (int64_t i = 0; i < K; i++)
                        sum += (double)wr[i] * xr[i];
                    out[k++] = (float)sum;
                }
            }
    free(wr);
    free(xr);
}
