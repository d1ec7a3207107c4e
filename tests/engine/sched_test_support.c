/* sched_test_support.c - the refusing backend and the two-layer graph of the scheduler tests. */
#include "sched_test_support.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "engine/backend/backend_internal.h"
#include "infer_util.h"

enum { PICKY_MAX_BUFFERS = 64 };

typedef struct picky {
    inf_backend *inner;
    inf_op refused;
    const inf_buffer *memory[PICKY_MAX_BUFFERS]; /* allocated or owned (freed ones stay listed) */
    int n_memory;
} picky;

bool picky_backend_own(inf_backend *backend, const inf_buffer *buffer)
{
    picky *p = backend->impl;
    if (p->n_memory == PICKY_MAX_BUFFERS)
        return false;
    p->memory[p->n_memory++] = buffer;
    return true;
}

static bool is_own(const picky *p, const inf_tensor *t)
{
    const inf_buffer *buffer = t->view_src ? t->view_src->buffer : t->buffer;
    for (int i = 0; i < p->n_memory; i++)
        if (p->memory[i] == buffer)
            return true;
    return false;
}

static void picky_release(inf_backend *backend)
{
    free(backend->impl);
    free(backend);
}

static inf_buffer *picky_alloc_buffer(inf_backend *backend, size_t size, ggtk_error *err)
{
    picky *p = backend->impl;
    inf_buffer *buffer = inf_backend_alloc_buffer_checked(p->inner, size, err);
    if (buffer && !picky_backend_own(backend, buffer)) {
        inf_buffer_free(buffer);
        return NULL;
    }
    return buffer;
}

static bool picky_supports(const inf_backend *backend, const inf_tensor *node)
{
    const picky *p = backend->impl;
    return node->op != p->refused && inf_backend_supports(p->inner, node);
}

static ggtk_status picky_compute(inf_backend *backend, const inf_graph *graph,
                                 inf_node_filter filter, inf_node_observer observer, void *user,
                                 ggtk_error *err)
{
    picky *p = backend->impl;
    for (int i = 0; i < inf_graph_n_nodes(graph); i++) {
        const inf_tensor *node = inf_graph_node(graph, i);
        for (int s = -1; s < INF_MAX_SRC; s++) {
            const inf_tensor *t = s < 0 ? node : node->src[s];
            if (t && !is_own(p, t))
                return ggtk_error_set(err, GGTK_ERR_USAGE, GGTK_NO_OFFSET,
                                      "picky: node %d '%s' reads '%s' outside its memory", i,
                                      node->name, t->name);
        }
    }
    return inf_backend_compute_filtered(p->inner, graph, filter, observer, user, err);
}

static const inf_backend_ops picky_ops = {
    .name = "picky",
    .alignment = 64,
    .release = picky_release,
    .alloc_buffer = picky_alloc_buffer,
    .supports = picky_supports,
    .compute = picky_compute,
};

inf_backend *picky_backend_new(inf_backend *inner, inf_op refused)
{
    inf_backend *backend = calloc(1, sizeof *backend);
    picky *p = calloc(1, sizeof *p);
    if (!backend || !p) {
        free(backend);
        free(p);
        return NULL;
    }
    *p = (picky){.inner = inner, .refused = refused};
    *backend = (inf_backend){&picky_ops, p};
    return backend;
}

static inf_tensor *weight(inf_context *ctx, int64_t ne0, int64_t ne1, const char *name, int layer)
{
    inf_tensor *t = ne1 > 0 ? inf_tensor_new_2d(ctx, GGTK_TENSOR_F32, ne0, ne1)
                            : inf_tensor_new_1d(ctx, GGTK_TENSOR_F32, ne0);
    return inf_tensor_set_name(t, "%s.%d", name, layer);
}

bool mlp_weights_new(mlp_weights *w, uint64_t seed)
{
    memset(w, 0, sizeof *w);
    inf_backend *cpu = inf_backend_cpu_new(1);
    bool ok = cpu != NULL;
    for (int l = 0; ok && l < MLP_LAYERS; l++) {
        w->ctx[l] = inf_context_new(16 * inf_tensor_overhead(), true);
        if (!w->ctx[l])
            return false;
        w->norm[l] = weight(w->ctx[l], MLP_EMBD, 0, "norm", l);
        w->wq[l] = weight(w->ctx[l], MLP_EMBD, MLP_EMBD, "wq", l);
        w->wk[l] = weight(w->ctx[l], MLP_EMBD, MLP_EMBD, "wk", l);
        w->wgate[l] = weight(w->ctx[l], MLP_EMBD, MLP_FF, "wgate", l);
        w->wup[l] = weight(w->ctx[l], MLP_EMBD, MLP_FF, "wup", l);
        w->wdown[l] = weight(w->ctx[l], MLP_FF, MLP_EMBD, "wdown", l);
        if (l == 0)
            w->wout = weight(w->ctx[0], MLP_EMBD, MLP_VOCAB, "wout", 0);
        w->buffers[l] = inf_backend_alloc_context_tensors(cpu, w->ctx[l], NULL);
        ok = w->buffers[l] != NULL && !inf_context_error(w->ctx[l]);
    }
    test_rng rng = {seed};
    for (int l = 0; ok && l < MLP_LAYERS; l++) {
        for (inf_tensor *t = inf_context_next_tensor(w->ctx[l], NULL); t;
             t = inf_context_next_tensor(w->ctx[l], t))
            tensor_fill(t, &rng, -0.5f, 0.5f);
    }
    inf_backend_free(cpu);
    return ok;
}

void mlp_weights_free(mlp_weights *w)
{
    for (int l = 0; l < MLP_LAYERS; l++) {
        inf_buffer_free(w->buffers[l]);
        inf_context_free(w->ctx[l]);
    }
}

static inf_tensor *layer(inf_context *ctx, const mlp_weights *w, int l, inf_tensor *x)
{
    inf_tensor *h = inf_mul(ctx, inf_rms_norm(ctx, x, 1e-6f), w->norm[l]);
    inf_tensor *q = inf_mul_mat(ctx, w->wq[l], h);
    inf_tensor *k = inf_mul_mat(ctx, w->wk[l], h);
    inf_tensor *kq = inf_soft_max_causal(ctx, inf_mul_mat(ctx, k, q), 0.125f, 0);
    inf_tensor_set_name(kq, "kq_soft_max.%d", l);
    inf_tensor *att = inf_mul_mat(ctx, inf_cont(ctx, inf_transpose(ctx, k)), kq);
    x = inf_add(ctx, x, att);
    inf_tensor *act = inf_swiglu(ctx, inf_mul_mat(ctx, w->wgate[l], x),
                                 inf_mul_mat(ctx, w->wup[l], x));
    return inf_tensor_set_name(inf_add(ctx, x, inf_mul_mat(ctx, w->wdown[l], act)),
                               "layer_out.%d", l);
}

bool mlp_graph_build(mlp_graph *g, const mlp_weights *w)
{
    g->ctx = inf_context_new(256 * inf_tensor_overhead() + inf_graph_overhead(256), true);
    if (!g->ctx)
        return false;
    g->x = inf_tensor_new_2d(g->ctx, GGTK_TENSOR_F32, MLP_EMBD, MLP_TOKENS);
    inf_tensor_set_input(inf_tensor_set_name(g->x, "x"));
    inf_tensor *x = g->x;
    for (int l = 0; l < MLP_LAYERS; l++)
        x = layer(g->ctx, w, l, x);
    g->logits = inf_mul_mat(g->ctx, w->wout, inf_rms_norm(g->ctx, x, 1e-6f));
    inf_tensor_set_output(inf_tensor_set_name(g->logits, "logits"));
    g->graph = inf_graph_new(g->ctx, 256);
    return g->graph && !inf_context_error(g->ctx) &&
           inf_graph_expand(g->graph, g->logits, NULL) == GGTK_OK;
}

void mlp_input(float *x)
{
    for (int i = 0; i < MLP_EMBD * MLP_TOKENS; i++)
        x[i] = sinf(0.37f * (float)i) + 0.1f * (float)(i % 7);
}
