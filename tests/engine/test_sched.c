/* test_sched.c - the graph scheduler on two CPU backends: a two-layer graph whose layer-1 weights
 * are declared backend 0's gives bit for bit the single-backend result with the splits and copies
 * the assignment rules predict; views and in-place operations across a split boundary; per-backend
 * compute buffer sizes; a refused op falling back; observers; errors. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <ggtk/inf_sched.h>

#include "infer_util.h"
#include "sched_test_support.h"
#include "test.h"

enum { LOGITS = MLP_VOCAB * MLP_TOKENS };

/* The logits of the graph on one CPU backend with the plain graph allocator. */
static bool reference_logits(const mlp_weights *w, float *logits)
{
    mlp_graph g;
    float x[MLP_EMBD * MLP_TOKENS];
    mlp_input(x);
    inf_backend *cpu = inf_backend_cpu_new(1);
    inf_graph_allocator *alloc = inf_graph_allocator_new(cpu);
    bool ok = mlp_graph_build(&g, w) && inf_graph_allocator_alloc(alloc, g.graph, NULL) == GGTK_OK &&
              inf_tensor_write(g.x, x, 0, sizeof x, NULL) == GGTK_OK &&
              inf_backend_compute(cpu, g.graph, NULL) == GGTK_OK &&
              inf_tensor_read(g.logits, logits, 0, LOGITS * sizeof *logits, NULL) == GGTK_OK;
    inf_graph_allocator_free(alloc);
    inf_backend_free(cpu);
    inf_context_free(g.ctx);
    return ok;
}

/* Allocate, write the input, compute through `sched` and read the logits. */
static ggtk_status sched_logits(inf_sched *sched, mlp_graph *g, float *logits, ggtk_error *err)
{
    float x[MLP_EMBD * MLP_TOKENS];
    mlp_input(x);
    ggtk_status st = inf_sched_alloc_graph(sched, g->graph, err);
    if (st == GGTK_OK)
        st = inf_tensor_write(g->x, x, 0, sizeof x, err);
    if (st == GGTK_OK)
        st = inf_sched_compute(sched, g->graph, err);
    if (st == GGTK_OK)
        st = inf_tensor_read(g->logits, logits, 0, LOGITS * sizeof *logits, err);
    return st;
}

static inf_tensor *find_node(const inf_graph *graph, const char *name)
{
    for (int i = 0; i < inf_graph_n_nodes(graph); i++)
        if (strcmp(inf_graph_node(graph, i)->name, name) == 0)
            return inf_graph_node(graph, i);
    return NULL;
}

/* Backend 0 a picky backend refusing `refused` (INF_OP_COUNT: none) that owns the layer-1 weights
 * and is declared their backend, backend 1 a plain CPU backend; the weights of `seed` and their
 * graph built. */
typedef struct picky_first {
    mlp_weights w;
    inf_backend *cpu0, *backends[2];
    inf_sched *sched;
    mlp_graph g;
} picky_first;

/* False (err set when the scheduler refused) when any step fails; close in every case. */
static bool picky_first_open(picky_first *t, uint64_t seed, inf_op refused, ggtk_error *err)
{
    memset(t, 0, sizeof *t);
    if (!mlp_weights_new(&t->w, seed))
        return false;
    t->cpu0 = inf_backend_cpu_new(1);
    t->backends[0] = picky_backend_new(t->cpu0, refused);
    t->backends[1] = inf_backend_cpu_new(1);
    t->sched = inf_sched_new(t->backends, 2, err);
    return t->sched && picky_backend_own(t->backends[0], t->w.buffers[1]) &&
           inf_sched_set_buffer_backend(t->sched, t->w.buffers[1], 0, err) == GGTK_OK &&
           mlp_graph_build(&t->g, &t->w);
}

static void picky_first_close(picky_first *t)
{
    inf_sched_free(t->sched);
    inf_context_free(t->g.ctx);
    inf_backend_free(t->backends[0]);
    inf_backend_free(t->backends[1]);
    inf_backend_free(t->cpu0);
    mlp_weights_free(&t->w);
}

TEST(test_sched_two_backends_match_one_bit_for_bit_with_the_predicted_splits)
{
    /* Backend 0 computes only on its own memory, as a device backend does. */
    picky_first t;
    ggtk_error err = {0};
    CHECK_MSG(picky_first_open(&t, 7, INF_OP_COUNT, &err), "%s", err.message);
    inf_sched *sched = t.sched;
    const mlp_graph *g = &t.g;
    float want[LOGITS], got[LOGITS];
    CHECK(reference_logits(&t.w, want));
    CHECK_MSG(sched_logits(sched, &t.g, got, &err) == GGTK_OK, "%s", err.message);
    CHECK_MSG(memcmp(got, want, sizeof want) == 0, "split logits differ from one backend's");

    /* Layer 0 and the output matrix on the fallback; layer 1 (and the residual add between the
     * layers, which no weight places, spread backward from layer 1) on backend 0. */
    inf_sched_stats st = inf_sched_get_stats(sched);
    CHECK_MSG(st.n_splits == 3, "%d splits", st.n_splits);
    CHECK(inf_sched_node_backend(sched, find_node(g->graph, "kq_soft_max.0")) == 1);
    CHECK(inf_sched_node_backend(sched, find_node(g->graph, "kq_soft_max.1")) == 0);
    CHECK(inf_sched_node_backend(sched, find_node(g->graph, "layer_out.0")) == 0);
    CHECK(inf_sched_node_backend(sched, g->logits) == 1);
    CHECK(inf_sched_node_backend(sched, g->x) == 1);
    /* Copied: the two inputs of layer_out.0 into backend 0, the normed output into backend 1. */
    CHECK_MSG(st.n_copies == 3 && st.copy_bytes == 3 * MLP_EMBD * MLP_TOKENS * sizeof(float),
              "%d copies, %zu bytes", st.n_copies, st.copy_bytes);
    inf_sched_split split;
    CHECK(inf_sched_get_split(sched, 1, &split, NULL) == GGTK_OK);
    CHECK(split.backend == 0 && split.n_copies == 2 &&
          inf_graph_node(g->graph, split.first_node) == find_node(g->graph, "layer_out.0"));
    CHECK(inf_sched_get_split(sched, 3, &split, &err) == GGTK_ERR_USAGE);
    CHECK(st.n_nodes[0] + st.n_nodes[1] == inf_graph_n_nodes(g->graph));

    /* Scheduling the same graph again (memory already given) and with poisoned releases gives
     * the same bits. */
    inf_sched_set_poison(sched, 0xff);
    memset(got, 0, sizeof got);
    CHECK_MSG(sched_logits(sched, &t.g, got, &err) == GGTK_OK, "%s", err.message);
    CHECK_MSG(memcmp(got, want, sizeof want) == 0, "poisoned run differs");
    CHECK(inf_sched_get_stats(sched).n_splits == 3);
    picky_first_close(&t);
}

TEST(test_sched_refused_op_falls_back_to_the_next_backend)
{
    picky_first t;
    ggtk_error err = {0};
    CHECK_MSG(picky_first_open(&t, 11, INF_OP_SOFT_MAX, &err), "%s", err.message);
    float want[LOGITS], got[LOGITS];
    CHECK(reference_logits(&t.w, want));
    CHECK_MSG(sched_logits(t.sched, &t.g, got, &err) == GGTK_OK, "%s", err.message);
    CHECK_MSG(memcmp(got, want, sizeof want) == 0, "logits differ");
    CHECK(inf_sched_node_backend(t.sched, find_node(t.g.graph, "kq_soft_max.1")) == 1);
    /* Layer 1 is cut around its softmax: fallback, 0, 1 (softmax), 0, 1 (output). */
    inf_sched_stats st = inf_sched_get_stats(t.sched);
    CHECK_MSG(st.n_splits == 5, "%d splits", st.n_splits);
    picky_first_close(&t);
}

TEST(test_sched_node_no_backend_supports_is_one_line_naming_it)
{
    mlp_weights w;
    CHECK(mlp_weights_new(&w, 3));
    inf_backend *cpu = inf_backend_cpu_new(1);
    inf_backend *backends[2] = {picky_backend_new(cpu, INF_OP_SOFT_MAX),
                                picky_backend_new(cpu, INF_OP_SOFT_MAX)};
    inf_sched *sched = inf_sched_new(backends, 2, NULL);
    mlp_graph g;
    CHECK(sched && mlp_graph_build(&g, &w));
    ggtk_error err = {0};
    CHECK(inf_sched_reserve(sched, g.graph, &err) == GGTK_ERR_UNSUPPORTED);
    CHECK_MSG(strstr(err.message, "no backend can compute") && strstr(err.message, "kq_soft_max.0") &&
                  strstr(err.message, "SOFT_MAX") && !strchr(err.message, '\n'),
              "%s", err.message);
    CHECK(inf_sched_compute(sched, g.graph, &err) == GGTK_ERR_USAGE);
    inf_sched_free(sched);

    /* Construction errors. */
    CHECK(!inf_sched_new(backends, 0, &err) && err.status == GGTK_ERR_USAGE);
    inf_backend *twice[2] = {cpu, cpu};
    CHECK(!inf_sched_new(twice, 2, &err) && strstr(err.message, "again"));
    inf_context_free(g.ctx);
    inf_backend_free(backends[0]);
    inf_backend_free(backends[1]);
    inf_backend_free(cpu);
    mlp_weights_free(&w);
}

/* A node that must run where its memory is, on a backend that refuses it. */
TEST(test_sched_write_into_a_refusing_backends_memory_is_an_error)
{
    inf_backend *cpu = inf_backend_cpu_new(1);
    inf_backend *backends[2] = {picky_backend_new(cpu, INF_OP_CPY), inf_backend_cpu_new(1)};
    inf_context *ctx = inf_context_new(32 * inf_tensor_overhead() + inf_graph_overhead(32), true);
    inf_tensor *cache = inf_tensor_new_1d(ctx, GGTK_TENSOR_F32, 64);
    inf_buffer *buffer = inf_backend_alloc_context_tensors(backends[0], ctx, NULL);
    inf_tensor *x = inf_tensor_new_1d(ctx, GGTK_TENSOR_F32, 64);
    inf_tensor_set_input(x);
    inf_tensor *stored = inf_tensor_set_name(inf_cpy(ctx, x, cache), "store");
    inf_graph *graph = inf_graph_new(ctx, 32);
    inf_sched *sched = inf_sched_new(backends, 2, NULL);
    CHECK(stored && graph && buffer && sched && inf_graph_expand(graph, stored, NULL) == GGTK_OK);
    CHECK(inf_sched_set_buffer_backend(sched, buffer, 0, NULL) == GGTK_OK);
    ggtk_error err = {0};
    CHECK(inf_sched_reserve(sched, graph, &err) == GGTK_ERR_UNSUPPORTED);
    CHECK_MSG(strstr(err.message, "'store'") && strstr(err.message, "picky") &&
                  !strchr(err.message, '\n'), "%s", err.message);
    CHECK(inf_sched_set_buffer_backend(sched, buffer, 2, &err) == GGTK_ERR_USAGE);
    inf_sched_free(sched);
    inf_buffer_free(buffer);
    inf_context_free(ctx);
    inf_backend_free(backends[0]);
    inf_backend_free(backends[1]);
    inf_backend_free(cpu);
}

/* x [32, 1] -> a = w0 x [64] on the fallback; out = w1 a [16] on backend 0, which gets a copy of
 * a. Buffer 1: x (128 bytes) and a (256); buffer 0: the copy of a (256) and out (64). */
TEST(test_sched_plans_each_backends_compute_buffer)
{
    inf_context *wctx[2] = {inf_context_new(4 * inf_tensor_overhead(), true),
                            inf_context_new(4 * inf_tensor_overhead(), true)};
    inf_tensor *w0 = inf_tensor_new_2d(wctx[0], GGTK_TENSOR_F32, 32, 64);
    inf_tensor *w1 = inf_tensor_new_2d(wctx[1], GGTK_TENSOR_F32, 64, 16);
    inf_backend *backends[2] = {inf_backend_cpu_new(1), inf_backend_cpu_new(1)};
    inf_buffer *b0 = inf_backend_alloc_context_tensors(backends[1], wctx[0], NULL);
    inf_buffer *b1 = inf_backend_alloc_context_tensors(backends[0], wctx[1], NULL);
    CHECK(b0 && b1);
    test_rng rng = {5};
    tensor_fill(w0, &rng, -1, 1);
    tensor_fill(w1, &rng, -1, 1);
    inf_context *ctx = inf_context_new(16 * inf_tensor_overhead() + inf_graph_overhead(16), true);
    inf_tensor *x = inf_tensor_new_2d(ctx, GGTK_TENSOR_F32, 32, 1);
    inf_tensor_set_input(x);
    inf_tensor *a = inf_mul_mat(ctx, w0, x);
    inf_tensor *out = inf_mul_mat(ctx, w1, a);
    inf_tensor_set_output(out);
    inf_graph *graph = inf_graph_new(ctx, 16);
    CHECK(graph && inf_graph_expand(graph, out, NULL) == GGTK_OK);
    inf_sched *sched = inf_sched_new(backends, 2, NULL);
    CHECK(sched && inf_sched_set_buffer_backend(sched, b1, 0, NULL) == GGTK_OK);
    CHECK(inf_sched_reserve(sched, graph, NULL) == GGTK_OK);
    inf_sched_stats st = inf_sched_get_stats(sched);
    CHECK_MSG(st.buffer_size[1] == 384 && st.buffer_size[0] == 320, "buffers %zu and %zu",
              st.buffer_size[0], st.buffer_size[1]);
    CHECK(st.n_splits == 2 && st.n_copies == 1 && st.copy_bytes == 256);
    CHECK(!x->data && !a->data); /* reserve gives no memory */
    float input[32], got[16], want[16];
    for (int i = 0; i < 32; i++)
        input[i] = 0.25f * (float)(i % 9) - 1.0f;
    CHECK(inf_sched_alloc_graph(sched, graph, NULL) == GGTK_OK);
    CHECK(inf_tensor_write(x, input, 0, sizeof input, NULL) == GGTK_OK);
    CHECK(inf_sched_compute(sched, graph, NULL) == GGTK_OK);
    CHECK(inf_tensor_read(out, got, 0, sizeof got, NULL) == GGTK_OK);
    for (int m = 0; m < 16; m++) {
        double sum = 0;
        for (int k = 0; k < 64; k++) {
            double ak = 0;
            for (int j = 0; j < 32; j++)
                ak += (double)tensor_get(w0, j, k, 0, 0) * input[j];
            sum += (double)tensor_get(w1, k, m, 0, 0) * ak;
        }
        want[m] = (float)sum;
        CHECK_MSG(fabsf(got[m] - want[m]) <= 1e-4f * (1 + fabsf(want[m])), "out[%d] %g vs %g", m,
                  got[m], want[m]);
    }
    char *printed = NULL;
    size_t printed_size = 0;
    FILE *out_file = open_memstream(&printed, &printed_size);
    inf_sched_print(sched, out_file);
    fclose(out_file);
    CHECK_MSG(strstr(printed, "split 1 on backend 0 (cpu): nodes 1..1") &&
                  strstr(printed, "backend 0 (cpu): compute buffer 320 bytes"), "%s", printed);
    free(printed);
    inf_sched_free(sched);
    inf_context_free(ctx);
    inf_buffer_free(b0);
    inf_buffer_free(b1);
    inf_context_free(wctx[0]);
    inf_context_free(wctx[1]);
    inf_backend_free(backends[0]);
    inf_backend_free(backends[1]);
}

/* t = w0 x on the fallback; backend 0 reads a row window of t (w1 * window, + window, in place)
 * and its transpose (made contiguous, then scaled in place): one copy of t, the two views
 * recreated over it. */
typedef struct view_graph {
    inf_context *ctx;
    inf_graph *graph;
    inf_tensor *x, *t, *u, *s, *c, *sc;
} view_graph;

static bool view_graph_build(view_graph *v, inf_tensor *w0, inf_tensor *w1)
{
    v->ctx = inf_context_new(32 * inf_tensor_overhead() + inf_graph_overhead(32), true);
    v->x = inf_tensor_new_2d(v->ctx, GGTK_TENSOR_F32, 16, 8);
    inf_tensor_set_input(v->x);
    v->t = inf_mul_mat(v->ctx, w0, v->x);
    inf_tensor *window = inf_view_2d(v->ctx, v->t, 16, 4, v->t->nb[1], 2 * v->t->nb[1]);
    v->u = inf_mul_mat(v->ctx, w1, window);
    v->s = inf_add(v->ctx, v->u, window);
    v->c = inf_cont(v->ctx, inf_transpose(v->ctx, v->t));
    v->sc = inf_scale(v->ctx, v->c, 0.5f);
    inf_tensor_set_output(v->s);
    inf_tensor_set_output(v->sc);
    v->graph = inf_graph_new(v->ctx, 32);
    return v->graph && !inf_context_error(v->ctx) && inf_graph_expand(v->graph, v->s, NULL) == GGTK_OK &&
           inf_graph_expand(v->graph, v->sc, NULL) == GGTK_OK;
}

TEST(test_sched_views_and_in_place_across_a_split_boundary)
{
    inf_context *wctx = inf_context_new(4 * inf_tensor_overhead(), true);
    inf_context *wctx0 = inf_context_new(4 * inf_tensor_overhead(), true);
    inf_tensor *w0 = inf_tensor_new_2d(wctx, GGTK_TENSOR_F32, 16, 16);
    inf_tensor *w1 = inf_tensor_new_2d(wctx0, GGTK_TENSOR_F32, 16, 16);
    inf_backend *backends[2] = {inf_backend_cpu_new(1), inf_backend_cpu_new(1)};
    inf_buffer *host = inf_backend_alloc_context_tensors(backends[1], wctx, NULL);
    inf_buffer *of_backend0 = inf_backend_alloc_context_tensors(backends[0], wctx0, NULL);
    CHECK(host && of_backend0);
    test_rng rng = {9};
    tensor_fill(w0, &rng, -1, 1);
    tensor_fill(w1, &rng, -1, 1);
    float input[16 * 8], want_s[16 * 4], want_sc[8 * 16], got_s[16 * 4], got_sc[8 * 16];
    for (int i = 0; i < 16 * 8; i++)
        input[i] = rng_uniform(&rng, -1, 1);

    view_graph ref, v;
    CHECK(view_graph_build(&ref, w0, w1) && view_graph_build(&v, w0, w1));
    inf_graph_allocator *alloc = inf_graph_allocator_new(backends[1]);
    CHECK(inf_graph_allocator_alloc(alloc, ref.graph, NULL) == GGTK_OK &&
          inf_tensor_write(ref.x, input, 0, sizeof input, NULL) == GGTK_OK &&
          inf_backend_compute(backends[1], ref.graph, NULL) == GGTK_OK);
    CHECK(inf_tensor_read(ref.s, want_s, 0, sizeof want_s, NULL) == GGTK_OK &&
          inf_tensor_read(ref.sc, want_sc, 0, sizeof want_sc, NULL) == GGTK_OK);

    inf_sched *sched = inf_sched_new(backends, 2, NULL);
    ggtk_error err = {0};
    CHECK(sched && inf_sched_set_buffer_backend(sched, of_backend0, 0, NULL) == GGTK_OK);
    inf_sched_set_poison(sched, 0x7f);
    CHECK_MSG(inf_sched_alloc_graph(sched, v.graph, &err) == GGTK_OK, "%s", err.message);
    CHECK(inf_tensor_write(v.x, input, 0, sizeof input, NULL) == GGTK_OK);
    CHECK_MSG(inf_sched_compute(sched, v.graph, &err) == GGTK_OK, "%s", err.message);
    CHECK(inf_tensor_read(v.s, got_s, 0, sizeof got_s, NULL) == GGTK_OK &&
          inf_tensor_read(v.sc, got_sc, 0, sizeof got_sc, NULL) == GGTK_OK);
    CHECK(memcmp(got_s, want_s, sizeof want_s) == 0 && memcmp(got_sc, want_sc, sizeof want_sc) == 0);

    inf_sched_stats st = inf_sched_get_stats(sched);
    CHECK_MSG(st.n_splits == 2 && st.n_copies == 1 && st.copy_bytes == sizeof input,
              "%d splits, %d copies, %zu bytes", st.n_splits, st.n_copies, st.copy_bytes);
    CHECK(inf_sched_node_backend(sched, v.t) == 1 && inf_sched_node_backend(sched, v.c) == 0);
    /* In place on backend 0, in its own buffer; t stays in the fallback's. */
    CHECK(v.s->data == v.u->data && v.sc->data == v.c->data);
    CHECK(v.s->buffer == v.u->buffer && v.t->buffer != v.u->buffer);
    /* The caller's graph is as it was built: sources point at the caller's tensors. */
    CHECK(v.u->src[1]->view_src == v.t && v.c->src[0]->view_src == v.t);

    inf_sched_free(sched);
    inf_graph_allocator_free(alloc);
    inf_context_free(ref.ctx);
    inf_context_free(v.ctx);
    inf_buffer_free(host);
    inf_buffer_free(of_backend0);
    inf_context_free(wctx);
    inf_context_free(wctx0);
    inf_backend_free(backends[0]);
    inf_backend_free(backends[1]);
}

/* What an observer saw. */
typedef struct observed {
    const inf_graph *graph;
    int calls;
    int last;
    bool in_order;
    bool wrong_graph;
    int stop_at; /* -1: never */
} observed;

static bool observe(const inf_graph *graph, int node_index, void *user)
{
    observed *o = user;
    o->wrong_graph |= graph != o->graph;
    o->in_order &= node_index > o->last;
    o->last = node_index;
    o->calls++;
    return node_index != o->stop_at;
}

static bool only_mul_mat(const inf_tensor *node, void *user)
{
    (void)user;
    return node->op == INF_OP_MUL_MAT;
}

TEST(test_sched_observer_sees_the_callers_graph_and_indices)
{
    mlp_weights w;
    CHECK(mlp_weights_new(&w, 5));
    inf_backend *backends[2] = {inf_backend_cpu_new(1), inf_backend_cpu_new(1)};
    inf_sched *sched = inf_sched_new(backends, 2, NULL);
    mlp_graph g;
    CHECK(sched && mlp_graph_build(&g, &w) &&
          inf_sched_set_buffer_backend(sched, w.buffers[1], 0, NULL) == GGTK_OK &&
          inf_sched_alloc_graph(sched, g.graph, NULL) == GGTK_OK);
    const int n = inf_graph_n_nodes(g.graph);
    int n_mul_mat = 0;
    for (int i = 0; i < n; i++)
        n_mul_mat += inf_graph_node(g.graph, i)->op == INF_OP_MUL_MAT;

    observed all = {g.graph, 0, -1, true, false, -1};
    CHECK(inf_sched_compute_filtered(sched, g.graph, NULL, observe, &all, NULL) == GGTK_OK);
    CHECK_MSG(all.calls == n && all.last == n - 1 && all.in_order && !all.wrong_graph,
              "%d calls of %d nodes", all.calls, n);

    observed some = {g.graph, 0, -1, true, false, -1};
    CHECK(inf_sched_compute_filtered(sched, g.graph, only_mul_mat, observe, &some, NULL) == GGTK_OK);
    CHECK_MSG(some.calls == n_mul_mat && some.in_order &&
                  inf_graph_node(g.graph, some.last)->op == INF_OP_MUL_MAT,
              "%d calls, %d matrix products", some.calls, n_mul_mat);

    /* Stopping in the middle split: nothing after it runs. */
    inf_sched_split middle;
    CHECK(inf_sched_get_split(sched, 1, &middle, NULL) == GGTK_OK);
    observed stopped = {g.graph, 0, -1, true, false, middle.first_node};
    CHECK(inf_sched_compute_filtered(sched, g.graph, NULL, observe, &stopped, NULL) == GGTK_OK);
    CHECK(stopped.calls == middle.first_node + 1 && stopped.last == middle.first_node);

    inf_sched_free(sched);
    inf_context_free(g.ctx);
    inf_backend_free(backends[0]);
    inf_backend_free(backends[1]);
    mlp_weights_free(&w);
}

static int place_by_name(const inf_tensor *tensor, void *user)
{
    (void)user;
    return tensor->name[0] == 'b' ? 1 : tensor->name[0] == 'z' ? 7 : 0;
}

/* The multi-buffer allocator alone: tensors named b* in buffer 1, others in buffer 0, no in-place
 * reuse across buffers, an unused buffer never allocated, a placement out of range refused. */
TEST(test_alloc_multi_places_each_tensor_in_its_buffer)
{
    inf_backend *backends[3] = {inf_backend_cpu_new(1), inf_backend_cpu_new(1),
                                inf_backend_cpu_new(1)};
    inf_graph_allocator *alloc = inf_graph_allocator_new_multi(backends, 3, place_by_name, NULL);
    inf_context *ctx = inf_context_new(16 * inf_tensor_overhead() + inf_graph_overhead(16), true);
    inf_tensor *x = inf_tensor_set_name(inf_tensor_new_1d(ctx, GGTK_TENSOR_F32, 64), "x");
    inf_tensor_set_input(x);
    inf_tensor *a = inf_tensor_set_name(inf_cont(ctx, x), "a");    /* buffer 0 */
    inf_tensor *b = inf_tensor_set_name(inf_scale(ctx, a, 2), "b"); /* 1: not in place over a */
    inf_tensor *c = inf_tensor_set_name(inf_scale(ctx, b, 3), "c"); /* 0 */
    inf_tensor_set_output(c);
    inf_graph *graph = inf_graph_new(ctx, 16);
    CHECK(alloc && graph && inf_graph_expand(graph, c, NULL) == GGTK_OK);
    CHECK(inf_graph_allocator_alloc(alloc, graph, NULL) == GGTK_OK);
    CHECK(x->buffer == inf_graph_allocator_buffer_at(alloc, 0) &&
          b->buffer == inf_graph_allocator_buffer_at(alloc, 1) &&
          c->buffer == inf_graph_allocator_buffer_at(alloc, 0));
    CHECK(!inf_graph_allocator_buffer_at(alloc, 2) && !inf_graph_allocator_buffer_at(alloc, 3));
    /* Buffer 0: x (pinned) and a, then c in a's freed block; buffer 1: b alone. */
    CHECK_MSG(inf_graph_allocator_buffer_size(alloc, 0) == 512 &&
                  inf_graph_allocator_buffer_size(alloc, 1) == 256 &&
                  inf_graph_allocator_stats(alloc).buffer_size == 768,
              "%zu + %zu", inf_graph_allocator_buffer_size(alloc, 0),
              inf_graph_allocator_buffer_size(alloc, 1));
    float in[64], out[64];
    for (int i = 0; i < 64; i++)
        in[i] = (float)i;
    CHECK(inf_tensor_write(x, in, 0, sizeof in, NULL) == GGTK_OK &&
          inf_backend_compute(backends[0], graph, NULL) == GGTK_OK &&
          inf_tensor_read(c, out, 0, sizeof out, NULL) == GGTK_OK && out[5] == 30.0f);

    ggtk_error err = {0};
    inf_graph_allocator *again = inf_graph_allocator_new_multi(backends, 3, place_by_name, NULL);
    inf_context *ctx2 = inf_context_new(16 * inf_tensor_overhead() + inf_graph_overhead(16), true);
    inf_tensor *z = inf_tensor_set_name(inf_cont(ctx2, inf_tensor_new_1d(ctx2, GGTK_TENSOR_F32, 8)), "z");
    inf_graph *graph2 = inf_graph_new(ctx2, 16);
    CHECK(graph2 && inf_graph_expand(graph2, z, NULL) == GGTK_OK);
    CHECK(inf_graph_allocator_reserve(again, graph2, &err) == GGTK_ERR_USAGE);
    CHECK_MSG(strstr(err.message, "'z'") && strstr(err.message, "3 compute buffers"), "%s",
              err.message);
    CHECK(!inf_graph_allocator_new_multi(backends, 0, NULL, NULL));
    inf_graph_allocator_free(again);
    inf_graph_allocator_free(alloc);
    inf_context_free(ctx);
    inf_context_free(ctx2);
    for (int i = 0; i < 3; i++)
        inf_backend_free(backends[i]);
}
