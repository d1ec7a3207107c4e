/* cuda_op_compare.c - one operation on the CPU backend and on the CUDA backend, same inputs,
 * results compared (see cuda_op_compare.h). */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <ggtk/inf_quant.h>

#include "cuda_op_compare.h"
#include "engine/infer_util.h"

#define MAX_NODES 64

inf_backend *cuda_test_backend(void)
{
    static inf_backend *shared;
    if (shared)
        return shared;
    ggtk_error err;
    if (inf_cuda_device_count(&err) == 0)
        SKIP("%s", err.message);
    shared = inf_backend_cuda_new(0, &err);
    if (!shared)
        SKIP("%s", err.message);
    return shared;
}

static bool fail(char *why, size_t why_size, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static bool fail(char *why, size_t why_size, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(why, why_size, fmt, ap);
    va_end(ap);
    return false;
}

/* The default inputs: uniform in [-1, 1) for float types (quantized row by row), in [0, 4) for
 * integer types. False for a type with no default. */
static bool default_fill(const inf_tensor *leaf, void *data, test_rng *rng)
{
    const int64_t n = inf_tensor_nelements(leaf), ne0 = leaf->ne[0];
    if (leaf->type == GGTK_TENSOR_I32 || leaf->type == GGTK_TENSOR_I64) {
        for (int64_t i = 0; i < n; i++) {
            int64_t v = rng_int(rng, 0, 3);
            if (leaf->type == GGTK_TENSOR_I32)
                ((int32_t *)data)[i] = (int32_t)v;
            else
                ((int64_t *)data)[i] = v;
        }
        return true;
    }
    float *values = malloc((size_t)n * sizeof *values);
    if (!values)
        return false;
    for (int64_t i = 0; i < n; i++)
        values[i] = rng_uniform(rng, -1.0f, 1.0f);
    bool ok = true;
    if (leaf->type == GGTK_TENSOR_F32)
        memcpy(data, values, (size_t)n * sizeof *values);
    else if (leaf->type == GGTK_TENSOR_F16)
        inf_fp32_to_fp16_row(values, data, n);
    else if (leaf->type == GGTK_TENSOR_BF16)
        inf_fp32_to_bf16_row(values, data, n);
    else if (inf_type_can_quantize(leaf->type))
        ok = inf_quantize_rows(leaf->type, values, data, n / ne0, ne0, 1);
    else
        ok = false;
    free(values);
    return ok;
}

/* The inputs both backends get: one host array per graph leaf, made on the first run. */
typedef struct leaf_inputs {
    int count;
    void **data;
    size_t *nbytes;
} leaf_inputs;

static void leaf_inputs_free(leaf_inputs *in)
{
    for (int i = 0; i < in->count; i++)
        free(in->data[i]);
    free(in->data);
    free(in->nbytes);
}

static bool make_inputs(const cuda_op_case *c, const inf_graph *graph, leaf_inputs *in, char *why,
                        size_t why_size)
{
    test_rng rng = {c->seed ? c->seed : 1};
    in->count = inf_graph_n_leaves(graph);
    in->data = calloc((size_t)in->count + 1, sizeof *in->data);
    in->nbytes = calloc((size_t)in->count + 1, sizeof *in->nbytes);
    if (!in->data || !in->nbytes)
        return fail(why, why_size, "out of memory");
    for (int i = 0; i < in->count; i++) {
        const inf_tensor *leaf = inf_graph_leaf(graph, i);
        in->nbytes[i] = inf_tensor_nbytes(leaf);
        in->data[i] = malloc(in->nbytes[i] ? in->nbytes[i] : 1);
        if (!in->data[i])
            return fail(why, why_size, "out of memory");
        bool given = c->fill && c->fill(leaf, i, in->data[i], in->nbytes[i], c->user);
        if (!given && !default_fill(leaf, in->data[i], &rng))
            return fail(why, why_size, "leaf '%s': no default fill for type %s (give a fill)",
                        leaf->name, ggtk_tensor_type_name(leaf->type));
    }
    return true;
}

/* The output of one backend: the node's shape and its bytes. */
typedef struct op_output {
    inf_tensor shape; /* a copy of the node: type, ne, nb */
    unsigned char *bytes;
    size_t nbytes;
} op_output;

/* Build the case in a fresh context, place all its tensors in one buffer of `backend`, write the
 * inputs (made here on the first run), compute and read the node back. */
static bool run_on(inf_backend *backend, const cuda_op_case *c, leaf_inputs *in, op_output *out,
                   char *why, size_t why_size)
{
    const char *name = inf_backend_name(backend);
    inf_context *ctx = inf_context_new(MAX_NODES * 2 * inf_tensor_overhead() +
                                           inf_graph_overhead(MAX_NODES), true);
    inf_graph *graph = ctx ? inf_graph_new(ctx, MAX_NODES) : NULL;
    inf_tensor *node = graph ? c->build(ctx, c->user) : NULL;
    inf_buffer *buffer = NULL;
    ggtk_error err = {0};
    bool ok = false;
    if (!node) {
        const ggtk_error *e = ctx ? inf_context_error(ctx) : NULL;
        fail(why, why_size, "build failed: %s", e && e->status ? e->message : "out of memory");
    } else if (inf_graph_expand(graph, node, &err) != GGTK_OK) {
        fail(why, why_size, "graph: %s", err.message);
    } else if (!in->data && !make_inputs(c, graph, in, why, why_size)) {
        /* why is set */
    } else if (!(buffer = inf_backend_alloc_context_tensors(backend, ctx, &err))) {
        fail(why, why_size, "%s: %s", name, err.message);
    } else {
        ok = true;
        for (int i = 0; ok && i < in->count; i++)
            if (inf_tensor_write(inf_graph_leaf(graph, i), in->data[i], 0, in->nbytes[i], &err))
                ok = fail(why, why_size, "%s: %s", name, err.message);
        if (ok && inf_backend_compute(backend, graph, &err) != GGTK_OK)
            ok = fail(why, why_size, "%s compute: %s", name, err.message);
        out->shape = *node;
        out->nbytes = inf_tensor_nbytes(node);
        out->bytes = ok ? malloc(out->nbytes ? out->nbytes : 1) : NULL;
        if (ok && !out->bytes)
            ok = fail(why, why_size, "out of memory");
        if (ok && inf_tensor_read(node, out->bytes, 0, out->nbytes, &err) != GGTK_OK)
            ok = fail(why, why_size, "%s read: %s", name, err.message);
    }
    inf_buffer_free(buffer);
    inf_context_free(ctx);
    return ok;
}

static bool numeric(ggtk_tensor_type type)
{
    return type == GGTK_TENSOR_F32 || type == GGTK_TENSOR_F16 || type == GGTK_TENSOR_BF16 ||
           type == GGTK_TENSOR_I32 || type == GGTK_TENSOR_I64;
}

static double value_at(const op_output *o, const int64_t i[4])
{
    const unsigned char *p = o->bytes;
    for (int d = 0; d < 4; d++)
        p += (size_t)i[d] * o->shape.nb[d];
    switch (o->shape.type) {
    case GGTK_TENSOR_F32: {
        float v;
        memcpy(&v, p, sizeof v);
        return v;
    }
    case GGTK_TENSOR_F16: {
        inf_fp16 v;
        memcpy(&v, p, sizeof v);
        return inf_fp16_to_fp32(v);
    }
    case GGTK_TENSOR_BF16: {
        inf_bf16 v;
        memcpy(&v, p, sizeof v);
        return inf_bf16_to_fp32(v);
    }
    case GGTK_TENSOR_I32: {
        int32_t v;
        memcpy(&v, p, sizeof v);
        return v;
    }
    default: {
        int64_t v;
        memcpy(&v, p, sizeof v);
        return (double)v;
    }
    }
}

/* Compare element by element; `why` gets the summary of the failures. */
static bool compare(const cuda_op_case *c, const op_output *cpu, const op_output *cuda, char *why,
                    size_t why_size)
{
    const int64_t *ne = cpu->shape.ne;
    int64_t bad = 0, first = -1, flat = 0;
    double max_abs = 0, max_rel = 0, first_cpu = 0, first_cuda = 0;
    int64_t i[4];
    for (i[3] = 0; i[3] < ne[3]; i[3]++)
        for (i[2] = 0; i[2] < ne[2]; i[2]++)
            for (i[1] = 0; i[1] < ne[1]; i[1]++)
                for (i[0] = 0; i[0] < ne[0]; i[0]++, flat++) {
                    double want = value_at(cpu, i), got = value_at(cuda, i);
                    bool same = (isnan(want) && isnan(got)) || want == got;
                    double diff = fabs(got - want);
                    if (!same && !isnan(diff)) {
                        max_abs = diff > max_abs ? diff : max_abs;
                        double rel = want != 0 ? diff / fabs(want) : diff;
                        max_rel = rel > max_rel ? rel : max_rel;
                    }
                    if (same || diff <= c->atol + c->rtol * fabs(want))
                        continue;
                    if (bad++ == 0) {
                        first = flat;
                        first_cpu = want;
                        first_cuda = got;
                    }
                }
    if (bad == 0)
        return true;
    return fail(why, why_size,
                "%lld of %lld elements differ (atol %g, rtol %g): max abs %g, max rel %g; first at "
                "element %lld: cpu %.9g, cuda %.9g",
                (long long)bad, (long long)flat, c->atol, c->rtol, max_abs, max_rel,
                (long long)first, first_cpu, first_cuda);
}

bool cuda_op_compare(const cuda_op_case *c, char *why, size_t why_size)
{
    inf_backend *cuda = cuda_test_backend();
    inf_backend *cpu = inf_backend_cpu_new(1);
    leaf_inputs in = {0};
    op_output want = {0}, got = {0};
    bool ok = cpu && run_on(cpu, c, &in, &want, why, why_size) &&
              run_on(cuda, c, &in, &got, why, why_size);
    if (!cpu)
        ok = fail(why, why_size, "out of memory");
    if (ok && (want.shape.type != got.shape.type || !inf_tensor_same_shape(&want.shape, &got.shape)))
        ok = fail(why, why_size, "the two builds differ in type or shape");
    if (ok && numeric(want.shape.type))
        ok = compare(c, &want, &got, why, why_size);
    else if (ok && (want.nbytes != got.nbytes || memcmp(want.bytes, got.bytes, want.nbytes) != 0))
        ok = fail(why, why_size, "the %zu bytes of the %s result differ", want.nbytes,
                  ggtk_tensor_type_name(want.shape.type));
    free(want.bytes);
    free(got.bytes);
    leaf_inputs_free(&in);
    inf_backend_free(cpu);
    return ok;
}
