/* test_sched_model.c - SmolLM2's forward graph split by layer across two CPU backends, as -ngl
 * splits it between a GPU and the CPU: the weights and KV cache of the last N layers moved into a
 * buffer declared backend 0's; the logits must equal the single-backend run's bit for bit.
 * Builds the graph through the model's internal builder (model_internal.h) with a KV cache of
 * its own, without a session. Skips without the model. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <ggtk/inf_sched.h>

#include "model/model_internal.h"
#include "test.h"

enum { N_CTX = 256, N_OFFLOADED = 10, N_OUT = 4 };

static size_t align_up(size_t n, size_t alignment)
{
    return (n + alignment - 1) / alignment * alignment;
}

/* Layer of a weight named "blk.<il>.*", or -1. */
static int layer_of(const inf_tensor *t)
{
    int il;
    return sscanf(t->name, "blk.%d.", &il) == 1 ? il : -1;
}

/* Move the weights of layers >= first into one new buffer of `backend` (what a session does when
 * it uploads them to a device). NULL when out of memory. */
static inf_buffer *move_layers(inf_model *model, int first, inf_backend *backend)
{
    const size_t alignment = inf_backend_alignment(backend);
    size_t total = 0;
    for (inf_tensor *t = inf_context_next_tensor(model->weights, NULL); t;
         t = inf_context_next_tensor(model->weights, t))
        if (layer_of(t) >= first)
            total = align_up(total, alignment) + inf_tensor_nbytes(t);
    inf_buffer *buffer = inf_backend_alloc_buffer(backend, total);
    size_t offset = 0;
    for (inf_tensor *t = inf_context_next_tensor(model->weights, NULL); t && buffer;
         t = inf_context_next_tensor(model->weights, t)) {
        if (layer_of(t) < first)
            continue;
        const void *old = t->data;
        t->data = NULL;
        t->buffer = NULL;
        offset = align_up(offset, alignment);
        inf_buffer_place_tensor(buffer, t, offset, NULL); /* fits: sized for all */
        memcpy(t->data, old, inf_tensor_nbytes(t));
        offset += inf_tensor_nbytes(t);
    }
    return buffer;
}

/* A KV cache whose layers >= first are in a buffer of backends[0], the rest (and the attention
 * scratch) in one of backends[1]. */
typedef struct split_cache {
    model_cache cache;
    inf_context *ctx[2];
    inf_buffer *buffer[2];
} split_cache;

static bool split_cache_new(split_cache *c, const inf_model *model, int first,
                            inf_backend *const *backends, int n_batch)
{
    const inf_model_hparams *hp = &model->hparams;
    const int64_t n_embd_kv = (int64_t)hp->n_embd_head * hp->n_head_kv;
    memset(c, 0, sizeof *c);
    c->cache.n_ctx = N_CTX;
    c->cache.k = calloc(hp->n_layer, sizeof *c->cache.k);
    c->cache.v = calloc(hp->n_layer, sizeof *c->cache.v);
    for (int b = 0; b < 2; b++)
        c->ctx[b] = inf_context_new((2 * hp->n_layer + 1) * inf_tensor_overhead(), true);
    if (!c->cache.k || !c->cache.v || !c->ctx[0] || !c->ctx[1])
        return false;
    for (int il = 0; il < (int)hp->n_layer; il++) {
        inf_context *ctx = c->ctx[il >= first ? 0 : 1];
        c->cache.k[il] = inf_tensor_set_name(inf_tensor_new_2d(ctx, GGTK_TENSOR_F16, n_embd_kv, N_CTX),
                                             "k_cache.%d", il);
        c->cache.v[il] = inf_tensor_set_name(inf_tensor_new_2d(ctx, GGTK_TENSOR_F16, N_CTX, n_embd_kv),
                                             "v_cache.%d", il);
    }
    c->cache.attn_scratch = inf_tensor_new_2d(c->ctx[1], GGTK_TENSOR_F32,
                                              (int64_t)hp->n_embd_head * hp->n_head, n_batch);
    for (int b = 0; b < 2; b++) {
        c->buffer[b] = inf_backend_alloc_context_tensors(backends[b], c->ctx[b], NULL);
        if (!c->buffer[b] || inf_buffer_fill(c->buffer[b], 0, NULL) != GGTK_OK)
            return false;
    }
    return true;
}

static void split_cache_free(split_cache *c)
{
    for (int b = 0; b < 2; b++) {
        inf_buffer_free(c->buffer[b]);
        inf_context_free(c->ctx[b]);
    }
    free(c->cache.k);
    free(c->cache.v);
}

/* Build the graph of n_tokens tokens at position 0 (logits of the last N_OUT) and write its
 * inputs after `allocate` gave them memory; `sched` NULL: one CPU backend. */
static bool run_graph(const inf_model *model, const split_cache *cache, int n_tokens,
                      inf_sched *sched, inf_backend *cpu, float *logits, ggtk_error *err)
{
    inf_context *ctx = inf_context_new(model_graph_context_size(model), true);
    model_batch_shape shape = {n_tokens, 0, n_tokens - N_OUT, N_OUT, 0};
    model_graph g;
    inf_graph_allocator *alloc = sched ? NULL : inf_graph_allocator_new(cpu);
    bool ok = ctx && model_build_graph(model, ctx, &cache->cache, shape, &g, err);
    if (ok)
        ok = (sched ? inf_sched_alloc_graph(sched, g.graph, err)
                    : inf_graph_allocator_alloc(alloc, g.graph, err)) == GGTK_OK;
    int32_t *tokens = malloc((size_t)n_tokens * sizeof *tokens);
    int32_t *positions = malloc((size_t)n_tokens * sizeof *positions);
    for (int i = 0; tokens && positions && i < n_tokens; i++) {
        tokens[i] = (int32_t)((i * 7919 + 13) % (int)model->hparams.n_vocab);
        positions[i] = i;
    }
    const size_t bytes = (size_t)n_tokens * sizeof(int32_t);
    ok = ok && tokens && positions && inf_tensor_write(g.tokens, tokens, 0, bytes, err) == GGTK_OK &&
         inf_tensor_write(g.positions, positions, 0, bytes, err) == GGTK_OK;
    ok = ok && (sched ? inf_sched_compute(sched, g.graph, err)
                      : inf_backend_compute(cpu, g.graph, err)) == GGTK_OK;
    ok = ok && inf_tensor_read(g.logits, logits, 0,
                               (size_t)N_OUT * model->hparams.n_vocab * sizeof(float), err) == GGTK_OK;
    if (ok && sched) { /* every node reading an offloaded weight ran on backend 0, others on 1 */
        for (int i = 0; i < inf_graph_n_nodes(g.graph); i++) {
            const inf_tensor *node = inf_graph_node(g.graph, i);
            for (int s = 0; s < INF_MAX_SRC; s++) {
                const int il = node->src[s] && node->src[s]->op == INF_OP_NONE
                                   ? layer_of(node->src[s]) : -1;
                const int want = il < 0 ? -1 : il >= (int)model->hparams.n_layer - N_OFFLOADED ? 0 : 1;
                if (want >= 0 && inf_sched_node_backend(sched, node) != want) {
                    ggtk_error_set(err, GGTK_ERR_INVALID, GGTK_NO_OFFSET, "node '%s' on backend %d",
                                   node->name, inf_sched_node_backend(sched, node));
                    ok = false;
                }
            }
        }
    }
    if (ok && sched && n_tokens <= 128)
        inf_sched_print(sched, stdout);
    free(tokens);
    free(positions);
    inf_graph_allocator_free(alloc);
    inf_context_free(ctx);
    return ok;
}

/* SmolLM2 with its last N_OFFLOADED layers on backend 0: `n_tokens` tokens, logits compared with
 * one backend's; returns the split count through *n_splits. */
static void check_split_model(int n_tokens, int *n_splits)
{
    const char *path = test_model_path();
    if (!path)
        SKIP("SmolLM2 model not present (make models)");
    ggtk_error err = {0};
    inf_model *model = inf_model_open(path, NULL, &err);
    CHECK_MSG(model, "%s", err.message);
    const int n_layer = (int)model->hparams.n_layer, first = n_layer - N_OFFLOADED;
    inf_backend *backends[2] = {inf_backend_cpu_new(2), inf_backend_cpu_new(2)};
    inf_buffer *offloaded = move_layers(model, first, backends[0]);
    split_cache cache;
    CHECK(offloaded && split_cache_new(&cache, model, first, backends, n_tokens));
    const size_t n_logits = (size_t)N_OUT * model->hparams.n_vocab;
    float *want = malloc(n_logits * sizeof *want), *got = malloc(n_logits * sizeof *got);
    CHECK(want && got);
    CHECK_MSG(run_graph(model, &cache, n_tokens, NULL, backends[1], want, &err), "%s", err.message);

    inf_sched *sched = inf_sched_new(backends, 2, &err);
    CHECK(sched && inf_sched_set_buffer_backend(sched, offloaded, 0, NULL) == GGTK_OK &&
          inf_sched_set_buffer_backend(sched, cache.buffer[0], 0, NULL) == GGTK_OK);
    CHECK_MSG(run_graph(model, &cache, n_tokens, sched, NULL, got, &err), "%s", err.message);
    CHECK_MSG(memcmp(want, got, n_logits * sizeof *got) == 0, "split logits differ");
    inf_sched_stats st = inf_sched_get_stats(sched);
    printf("    %d tokens, layers %d..%d on backend 0: %d splits, %d copies (%zu bytes), compute "
           "buffers %.2f + %.2f MiB\n", n_tokens, first, n_layer - 1, st.n_splits, st.n_copies,
           st.copy_bytes, (double)st.buffer_size[0] / 1048576.0,
           (double)st.buffer_size[1] / 1048576.0);
    *n_splits = st.n_splits;
    inf_sched_free(sched);
    free(want);
    free(got);
    split_cache_free(&cache);
    inf_model_close(model);
    inf_buffer_free(offloaded);
    inf_backend_free(backends[0]);
    inf_backend_free(backends[1]);
}

/* 64 tokens: attention needs no scratch, so the graph cuts in three: the first layers, the
 * offloaded ones (with the residual add before them and the final norm), the output projection
 * (the tied embedding matrix stays on the fallback). */
TEST(test_sched_smollm2_last_layers_offloaded_match_one_backend)
{
    int n_splits = 0;
    check_split_model(64, &n_splits);
    CHECK_MSG(n_splits == 3, "%d splits", n_splits);
}

/* 200 tokens: attention runs in blocks copied into the one attention scratch, which lives on the
 * fallback, so every offloaded layer goes back and forth; still the same bits. */
TEST(test_sched_smollm2_offloaded_with_the_attention_scratch_matches)
{
    int n_splits = 0;
    check_split_model(200, &n_splits);
    CHECK_MSG(n_splits > 3, "%d splits", n_splits);
}
