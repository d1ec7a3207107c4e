/* infer_util.c - helpers shared by the libinfer tests (see infer_util.h). */
#include "infer_util.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

uint64_t rng_next(test_rng *rng)
{
    rng->state ^= rng->state >> 12;
    rng->state ^= rng->state << 25;
    rng->state ^= rng->state >> 27;
    return rng->state * 0x2545F4914F6CDD1DULL;
}

float rng_uniform(test_rng *rng, float lo, float hi)
{
    return lo + (hi - lo) * (float)(rng_next(rng) >> 40) / (float)(1 << 24);
}

int64_t rng_int(test_rng *rng, int64_t lo, int64_t hi)
{
    return lo + (int64_t)(rng_next(rng) % (uint64_t)(hi - lo + 1));
}

static char *element(const inf_tensor *t, int64_t i0, int64_t i1, int64_t i2, int64_t i3)
{
    return (char *)t->data + i0 * t->nb[0] + i1 * t->nb[1] + i2 * t->nb[2] + i3 * t->nb[3];
}

float tensor_get(const inf_tensor *t, int64_t i0, int64_t i1, int64_t i2, int64_t i3)
{
    const char *at = element(t, i0, i1, i2, i3);
    uint16_t h;
    float f;
    int32_t i;
    switch (t->type) {
    case GGTK_TENSOR_F32: memcpy(&f, at, 4); return f;
    case GGTK_TENSOR_F16: memcpy(&h, at, 2); return inf_fp16_to_fp32(h);
    case GGTK_TENSOR_BF16: memcpy(&h, at, 2); return inf_bf16_to_fp32(h);
    case GGTK_TENSOR_I32: memcpy(&i, at, 4); return (float)i;
    default: abort();
    }
}

void tensor_set(inf_tensor *t, int64_t i0, int64_t i1, int64_t i2, int64_t i3, float v)
{
    char *at = element(t, i0, i1, i2, i3);
    uint16_t h;
    int32_t i;
    switch (t->type) {
    case GGTK_TENSOR_F32: memcpy(at, &v, 4); break;
    case GGTK_TENSOR_F16: h = inf_fp32_to_fp16(v); memcpy(at, &h, 2); break;
    case GGTK_TENSOR_BF16: h = inf_fp32_to_bf16(v); memcpy(at, &h, 2); break;
    case GGTK_TENSOR_I32: i = (int32_t)v; memcpy(at, &i, 4); break;
    default: abort();
    }
}

void tensor_fill(inf_tensor *t, test_rng *rng, float lo, float hi)
{
    for (int64_t i3 = 0; i3 < t->ne[3]; i3++)
        for (int64_t i2 = 0; i2 < t->ne[2]; i2++)
            for (int64_t i1 = 0; i1 < t->ne[1]; i1++)
                for (int64_t i0 = 0; i0 < t->ne[0]; i0++)
                    tensor_set(t, i0, i1, i2, i3, rng_uniform(rng, lo, hi));
}

void tensor_fill_quantized(inf_tensor *t, test_rng *rng, float lo, float hi)
{
    const int64_t ne0 = t->ne[0], rows = inf_tensor_nrows(t);
    float *row = malloc((size_t)ne0 * sizeof *row);
    for (int64_t r = 0; r < rows; r++) {
        for (int64_t i = 0; i < ne0; i++)
            row[i] = rng_uniform(rng, lo, hi);
        inf_quantize_row(t->type, row, (char *)t->data + (size_t)r * t->nb[1], ne0);
    }
    free(row);
}

inf_context *data_context(size_t mb)
{
    return inf_context_new(mb << 20, false);
}

ggtk_status compute_graph(inf_context *ctx, inf_tensor *out, int n_threads)
{
    return compute_graph_outputs(ctx, &out, 1, n_threads);
}

ggtk_status compute_graph_outputs(inf_context *ctx, inf_tensor *const *outs, int n, int n_threads)
{
    inf_graph *graph = inf_graph_new(ctx, 256);
    if (!graph)
        return GGTK_ERR_INVALID;
    for (int i = 0; i < n; i++) {
        if (!outs[i])
            return GGTK_ERR_INVALID;
        ggtk_status st = inf_graph_expand(graph, outs[i], NULL);
        if (st != GGTK_OK)
            return st;
    }
    inf_backend *backend = inf_backend_cpu_new(n_threads);
    ggtk_error err;
    ggtk_status st = inf_backend_compute(backend, graph, &err);
    if (st != GGTK_OK)
        fprintf(stderr, "    compute: %s\n", err.message);
    inf_backend_free(backend);
    return st;
}

double compare_with(const inf_tensor *t, const float *expected, double atol, double rtol)
{
    double worst = 0.0;
    size_t k = 0;
    for (int64_t i3 = 0; i3 < t->ne[3]; i3++)
        for (int64_t i2 = 0; i2 < t->ne[2]; i2++)
            for (int64_t i1 = 0; i1 < t->ne[1]; i1++)
                for (int64_t i0 = 0; i0 < t->ne[0]; i0++, k++) {
                    double got = tensor_get(t, i0, i1, i2, i3), want = expected[k];
                    double err = got == want ? 0.0 : fabs(got - want) / (atol + rtol * fabs(want));
                    if (!(err <= worst))
                        worst = isnan(err) ? INFINITY : err;
                }
    return worst;
}
