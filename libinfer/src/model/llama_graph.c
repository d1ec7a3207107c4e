/* llama_graph.c - the Llama forward pass of one batch as an engine graph.
 *
 * Shapes (dimension 0 first): activations are [n_embd, n_tokens]; per layer the K cache is
 * [n_embd_kv, n_ctx] (one row per position) and the V cache is stored transposed, [n_ctx,
 * n_embd_kv], so that the product with the attention weights reads contiguous rows of
 * positions. New keys and values are copied into the cache first (the graph is expanded with
 * those copies before the reads are built, which orders them), then attention reads positions
 * 0 .. n_past + n_tokens - 1 back from the cache, in the cache's type, as llama.cpp does. */
#include <math.h>
#include <stdio.h>

#include <ggtk/inf_ops.h>
#include "model_internal.h"

/* Attention runs in at most ATTENTION_BLOCKS blocks of at least ATTENTION_MIN_BLOCK queries
 * (see attention()). */
enum { ATTENTION_BLOCKS = 8, ATTENTION_MIN_BLOCK = 128 };
/* Upper bound of graph nodes per layer and for the rest (counted from the builder below with
 * room to spare: about 30 per layer plus 12 per attention block). */
enum { NODES_PER_LAYER = 48 + 12 * ATTENTION_BLOCKS, NODES_EXTRA = 64 };

size_t llama_graph_context_size(const inf_model *model)
{
    size_t max_nodes = (size_t)model->hparams.n_layer * NODES_PER_LAYER + NODES_EXTRA;
    return 2 * max_nodes * inf_tensor_overhead() + inf_graph_overhead(max_nodes);
}

/* Everything the per-layer builders need. */
typedef struct builder {
    const inf_model *model;
    const inf_model_hparams *hp;
    inf_context *ctx;
    inf_graph *graph;
    llama_batch_shape shape;
    inf_tensor *positions;
    inf_tensor *attn_scratch;
    bool ok;
} builder;

static inf_tensor *norm(builder *b, inf_tensor *x, inf_tensor *weight)
{
    return inf_mul(b->ctx, inf_rms_norm(b->ctx, x, b->hp->rms_eps), weight);
}

/* w * x (+ bias when present). */
static inf_tensor *linear(builder *b, inf_tensor *w, inf_tensor *bias, inf_tensor *x)
{
    inf_tensor *y = inf_mul_mat(b->ctx, w, x);
    return bias ? inf_add(b->ctx, y, bias) : y;
}

/* Columns [begin, begin + n) of a 2-D activation. */
static inf_tensor *columns(builder *b, inf_tensor *x, int32_t begin, int32_t n)
{
    if (!x)
        return NULL;
    return inf_view_2d(b->ctx, x, x->ne[0], n, x->nb[1], (size_t)begin * x->nb[1]);
}

/* Copy this batch's keys and values into the layer's cache and order the copies before any
 * later read of the cache. */
static void store_kv(builder *b, inf_tensor *k_cache, inf_tensor *v_cache, inf_tensor *k,
                     inf_tensor *v)
{
    const int32_t n = b->shape.n_tokens;
    const int64_t n_embd_kv = k_cache->ne[0];
    inf_tensor *k_dst = inf_view_2d(b->ctx, k_cache, n_embd_kv, n, k_cache->nb[1],
                                    (size_t)b->shape.n_past * k_cache->nb[1]);
    inf_tensor *v_dst = inf_view_2d(b->ctx, v_cache, n, n_embd_kv, v_cache->nb[1],
                                    (size_t)b->shape.n_past * v_cache->nb[0]);
    inf_tensor *k_stored = inf_cpy(b->ctx, k, k_dst);
    inf_tensor *v_stored = inf_cpy(b->ctx, inf_transpose(b->ctx, v), v_dst);
    if (!k_stored || !v_stored || inf_graph_expand(b->graph, k_stored, NULL) != GGTK_OK ||
        inf_graph_expand(b->graph, v_stored, NULL) != GGTK_OK)
        b->ok = false;
}

/* Attention of the query tokens [c0, c0 + nq) of q ([head, n_head, n_tokens]) over the cache
 * positions they may see, 0 .. n_past + c0 + nq - 1 (grouped-query: head h reads key/value head
 * h / (n_head / n_head_kv)). Returns [head, nq, n_head]. */
static inf_tensor *attend(builder *b, inf_tensor *k_cache, inf_tensor *v_cache, inf_tensor *q,
                          int32_t c0, int32_t nq)
{
    const inf_model_hparams *hp = b->hp;
    const int64_t head = hp->n_embd_head;
    const int64_t n_kv = b->shape.n_past + c0 + nq;
    const size_t k_head_bytes = inf_type_row_size(k_cache->type, head);
    inf_tensor *k = inf_view_3d(b->ctx, k_cache, head, n_kv, hp->n_head_kv, k_cache->nb[1],
                                k_head_bytes, 0);
    inf_tensor *v = inf_view_3d(b->ctx, v_cache, n_kv, head, hp->n_head_kv, v_cache->nb[1],
                                (size_t)head * v_cache->nb[1], 0);
    inf_tensor *q_block = inf_view_3d(b->ctx, q, head, hp->n_head, nq, q->nb[1], q->nb[2],
                                      (size_t)c0 * q->nb[2]);
    inf_tensor *q_heads = inf_permute(b->ctx, q_block, 0, 2, 1, 3);   /* [head, nq, n_head] */
    inf_tensor *kq = inf_mul_mat(b->ctx, k, q_heads);                  /* [n_kv, nq, n_head] */
    kq = inf_soft_max_causal(b->ctx, kq, 1.0f / sqrtf((float)head), b->shape.n_past + c0);
    return inf_mul_mat(b->ctx, v, kq);                                 /* [head, nq, n_head] */
}

/* Attention output of the query tokens [begin, n_tokens), [n_embd_q, n_tokens - begin].
 * Queries go in blocks so that each block reads only the keys it may see: with the causal mask
 * about half of a full n x n product would be thrown away (8 blocks do 56% of it). The blocks'
 * results are copied into the session's attention scratch (a tensor with memory of its own, which
 * every layer reuses: a layer's copies depend on the previous layer's output, so they run after
 * its read); the read is built after the copies, which orders it after them. */
static inf_tensor *attention(builder *b, inf_tensor *k_cache, inf_tensor *v_cache, inf_tensor *q,
                             int32_t begin)
{
    const int64_t n_embd_q = (int64_t)b->hp->n_embd_head * b->hp->n_head;
    const int32_t n = b->shape.n_tokens - begin;
    int32_t block = (n + ATTENTION_BLOCKS - 1) / ATTENTION_BLOCKS;
    block = block < ATTENTION_MIN_BLOCK ? ATTENTION_MIN_BLOCK : block;
    if (n <= block) {
        inf_tensor *kqv = attend(b, k_cache, v_cache, q, begin, n);
        inf_tensor *merged = inf_cont(b->ctx, inf_permute(b->ctx, kqv, 0, 2, 1, 3));
        return inf_reshape_2d(b->ctx, merged, n_embd_q, n);
    }
    inf_tensor *merged = b->attn_scratch;
    for (int32_t c0 = 0; c0 < n && b->ok && merged; c0 += block) {
        const int32_t nq = n - c0 < block ? n - c0 : block;
        inf_tensor *kqv = attend(b, k_cache, v_cache, q, begin + c0, nq);
        inf_tensor *written = inf_cpy(b->ctx, inf_permute(b->ctx, kqv, 0, 2, 1, 3),
                                      columns(b, merged, c0, nq));
        if (!written || inf_graph_expand(b->graph, written, NULL) != GGTK_OK)
            b->ok = false;
    }
    return columns(b, merged, 0, n);
}

/* One transformer block. In the last block only the columns whose logits are wanted go on
 * past attention (the others only had to reach the cache). */
static inf_tensor *layer_forward(builder *b, const llama_layer *w, inf_tensor *k_cache,
                                 inf_tensor *v_cache, inf_tensor *x, bool last)
{
    const inf_model_hparams *hp = b->hp;
    const int32_t n = b->shape.n_tokens;
    inf_tensor *cur = norm(b, x, w->attn_norm);
    inf_tensor *q = inf_reshape_3d(b->ctx, linear(b, w->wq, w->bq, cur), hp->n_embd_head,
                                   hp->n_head, n);
    inf_tensor *k = inf_reshape_3d(b->ctx, linear(b, w->wk, w->bk, cur), hp->n_embd_head,
                                   hp->n_head_kv, n);
    inf_tensor *v = linear(b, w->wv, w->bv, cur);
    q = inf_rope(b->ctx, q, b->positions, (int)hp->n_rot, INF_ROPE_NORMAL, hp->rope_freq_base,
                 hp->rope_freq_scale);
    k = inf_rope(b->ctx, k, b->positions, (int)hp->n_rot, INF_ROPE_NORMAL, hp->rope_freq_base,
                 hp->rope_freq_scale);
    if (!q || !k || !v) {
        b->ok = false;
        return NULL;
    }
    store_kv(b, k_cache, v_cache, k, v);
    if (last && b->shape.n_out == 0)
        return NULL;
    const int32_t begin = last ? b->shape.out_begin : 0;
    cur = attention(b, k_cache, v_cache, q, begin);
    if (begin > 0)
        x = columns(b, x, begin, n - begin);
    x = inf_add(b->ctx, x, linear(b, w->wo, w->bo, cur));
    cur = norm(b, x, w->ffn_norm);
    inf_tensor *gate = linear(b, w->ffn_gate, w->ffn_gate_b, cur);
    inf_tensor *up = linear(b, w->ffn_up, w->ffn_up_b, cur);
    cur = linear(b, w->ffn_down, w->ffn_down_b, inf_swiglu(b->ctx, gate, up));
    return inf_add(b->ctx, x, cur);
}

bool llama_build_graph(const inf_model *model, inf_context *ctx, const llama_cache *cache,
                       llama_batch_shape shape, llama_graph *out, ggtk_error *err)
{
    const inf_model_hparams *hp = &model->hparams;
    size_t max_nodes = (size_t)hp->n_layer * NODES_PER_LAYER + NODES_EXTRA;
    builder b = {model, hp, ctx, inf_graph_new(ctx, max_nodes), shape, NULL, cache->attn_scratch,
                 true};
    out->logits = NULL;
    out->tokens = inf_tensor_new_1d(ctx, GGTK_TENSOR_I32, shape.n_tokens);
    out->positions = inf_tensor_new_1d(ctx, GGTK_TENSOR_I32, shape.n_tokens);
    b.positions = out->positions;
    if (out->tokens && out->positions) {
        inf_tensor_set_input(inf_tensor_set_name(out->tokens, "tokens"));
        inf_tensor_set_input(inf_tensor_set_name(out->positions, "positions"));
    }
    inf_tensor *x = inf_get_rows(ctx, model->tok_embd, out->tokens);
    for (uint32_t il = 0; il < hp->n_layer && b.ok && b.graph; il++)
        x = layer_forward(&b, &model->layers[il], cache->k[il], cache->v[il], x,
                          il + 1 == hp->n_layer);
    if (shape.n_out > 0 && b.ok) {
        x = norm(&b, x, model->output_norm);
        out->logits = inf_mul_mat(ctx, model->output, x);
        if (out->logits) {
            inf_tensor_set_output(inf_tensor_set_name(out->logits, "logits"));
            b.ok = inf_graph_expand(b.graph, out->logits, NULL) == GGTK_OK;
        }
    }
    const ggtk_error *cerr = inf_context_error(ctx);
    if (!b.graph || !b.ok || cerr || (shape.n_out > 0 && !out->logits)) {
        ggtk_error_set(err, cerr ? cerr->status : GGTK_ERR_NOMEM, GGTK_NO_OFFSET,
                       "building the forward graph failed: %s",
                       cerr ? cerr->message : "graph too large");
        return false;
    }
    out->graph = b.graph;
    return true;
}
