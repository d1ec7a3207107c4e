/* graph_blocks.c - the shared blocks of the forward passes (see graph_blocks.h).
 *
 * The KV cache of a layer is K [n_embd_kv, n_ctx] (one row per position) and V stored transposed,
 * [n_ctx, n_embd_kv], so that the product with the attention weights reads contiguous rows of
 * positions. New keys and values are copied into the cache first (the graph is expanded with
 * those copies before the reads are built, which orders them), then attention reads positions
 * 0 .. n_past + n_tokens - 1 back from the cache, in the cache's type, as llama.cpp does. A
 * sliding-window layer's cache holds positions from shape.swa_first on (kv_window.h), and its
 * queries read only the window's positions. */
#include "graph_blocks.h"

#include <math.h>

/* Attention runs in at most ATTENTION_BLOCKS blocks of at least ATTENTION_MIN_BLOCK queries
 * (see attention_columns()). model_graph.c sizes graphs from this. */
enum { ATTENTION_BLOCKS = 8, ATTENTION_MIN_BLOCK = 128 };

inf_tensor *block_rms_norm(graph_builder *b, inf_tensor *x, inf_tensor *weight)
{
    inf_tensor *y = inf_rms_norm(b->ctx, x, b->hp->rms_eps);
    return weight ? inf_mul(b->ctx, y, weight) : y;
}

inf_tensor *block_linear(graph_builder *b, inf_tensor *w, inf_tensor *bias, inf_tensor *x)
{
    inf_tensor *y = inf_mul_mat(b->ctx, w, x);
    return bias ? inf_add(b->ctx, y, bias) : y;
}

/* Columns [begin, begin + n) of a 2-D activation. */
static inf_tensor *columns(graph_builder *b, inf_tensor *x, int64_t begin, int64_t n)
{
    if (!x)
        return NULL;
    return inf_view_2d(b->ctx, x, x->ne[0], n, x->nb[1], (size_t)begin * x->nb[1]);
}

/* `heads` heads of `head` elements starting at element `first` of every column of x. */
static inf_tensor *head_view(graph_builder *b, inf_tensor *x, int64_t head, int64_t heads,
                             int64_t first)
{
    if (!x)
        return NULL;
    return inf_view_3d(b->ctx, x, head, heads, x->ne[1], head * x->nb[0], x->nb[1],
                       (size_t)first * x->nb[0]);
}

qkv_heads block_qkv(graph_builder *b, const model_layer *w, inf_tensor *x)
{
    const inf_model_hparams *hp = b->hp;
    const int64_t head = hp->n_embd_head, n_q = head * hp->n_head, n_kv = head * hp->n_head_kv;
    qkv_heads out;
    if (w->wqkv) {
        inf_tensor *qkv = block_linear(b, w->wqkv, w->bqkv, x);
        out.q = head_view(b, qkv, head, hp->n_head, 0);
        out.k = head_view(b, qkv, head, hp->n_head_kv, n_q);
        out.v = qkv ? inf_view_2d(b->ctx, qkv, n_kv, qkv->ne[1], qkv->nb[1],
                                  (size_t)(n_q + n_kv) * qkv->nb[0])
                    : NULL;
        return out;
    }
    const int64_t n = x ? x->ne[1] : 0;
    out.q = inf_reshape_3d(b->ctx, block_linear(b, w->wq, w->bq, x), head, hp->n_head, n);
    out.k = inf_reshape_3d(b->ctx, block_linear(b, w->wk, w->bk, x), head, hp->n_head_kv, n);
    out.v = block_linear(b, w->wv, w->bv, x);
    return out;
}

inf_tensor *block_rope(graph_builder *b, inf_tensor *t, const rope_config *rope)
{
    return inf_rope_ext(b->ctx, t, b->positions, b->rope_factors, rope->n_dims, rope->mode,
                        &rope->params);
}

attn_options attn_options_default(const graph_builder *b)
{
    attn_options opt = {1.0f / sqrtf((float)b->hp->n_embd_head), 0.0f, 0};
    return opt;
}

/* The cache cell of this batch's first token: its position, less the positions a
 * sliding-window layer's cache has dropped (kv_window.h). */
static int64_t first_cell(const graph_builder *b, const attn_options *opt)
{
    return b->shape.n_past - (opt->window > 0 ? b->shape.swa_first : 0);
}

/* Copy this batch's keys and values into the layer's cache from cell `cell` on and order the
 * copies before any later read of the cache. */
static void store_kv(graph_builder *b, inf_tensor *k_cache, inf_tensor *v_cache, inf_tensor *k,
                     inf_tensor *v, int64_t cell)
{
    const int32_t n = b->shape.n_tokens;
    const int64_t n_embd_kv = k_cache->ne[0];
    inf_tensor *k_dst = inf_view_2d(b->ctx, k_cache, n_embd_kv, n, k_cache->nb[1],
                                    (size_t)cell * k_cache->nb[1]);
    inf_tensor *v_dst = inf_view_2d(b->ctx, v_cache, n, n_embd_kv, v_cache->nb[1],
                                    (size_t)cell * v_cache->nb[0]);
    inf_tensor *k_stored = inf_cpy(b->ctx, k, k_dst);
    inf_tensor *v_stored = inf_cpy(b->ctx, inf_transpose(b->ctx, v), v_dst);
    if (!k_stored || !v_stored || inf_graph_expand(b->graph, k_stored, NULL) != GGTK_OK ||
        inf_graph_expand(b->graph, v_stored, NULL) != GGTK_OK)
        b->ok = false;
}

/* The sources of attention for the query tokens [c0, c0 + nq) of q ([head, n_head, n_tokens]):
 * the queries [head, nq, n_head], the cached keys [head, n_kv, n_head_kv] and values (transposed,
 * [n_kv, head, n_head_kv]) of the cells they may see - up to their own, and with a sliding window
 * only the last opt->window - and the key index of query c0's own cell. */
typedef struct attn_sources {
    inf_tensor *q, *k, *vt;
    int64_t n_past;
} attn_sources;

static attn_sources attn_sources_of(graph_builder *b, inf_tensor *k_cache, inf_tensor *v_cache,
                                    inf_tensor *q, int32_t c0, int32_t nq, const attn_options *opt)
{
    const inf_model_hparams *hp = b->hp;
    const int64_t head = hp->n_embd_head;
    const int64_t q_cell = first_cell(b, opt) + c0; /* the cell of query c0 */
    /* the first key any query of the block sees */
    const int64_t k0 = opt->window > 0 && q_cell >= opt->window ? q_cell - opt->window + 1 : 0;
    const int64_t n_kv = q_cell + nq - k0;
    const size_t k_head_bytes = inf_type_row_size(k_cache->type, head);
    attn_sources s;
    s.k = inf_view_3d(b->ctx, k_cache, head, n_kv, hp->n_head_kv, k_cache->nb[1], k_head_bytes,
                      (size_t)k0 * k_cache->nb[1]);
    s.vt = inf_view_3d(b->ctx, v_cache, n_kv, head, hp->n_head_kv, v_cache->nb[1],
                       (size_t)head * v_cache->nb[1], (size_t)k0 * v_cache->nb[0]);
    inf_tensor *q_block = inf_view_3d(b->ctx, q, head, hp->n_head, nq, q->nb[1], q->nb[2],
                                      (size_t)c0 * q->nb[2]);
    s.q = inf_permute(b->ctx, q_block, 0, 2, 1, 3); /* [head, nq, n_head] */
    s.n_past = q_cell - k0;
    return s;
}

/* Attention of the query tokens [c0, c0 + nq) of q over the cache cells they may see
 * (grouped-query: head h reads key/value head h / (n_head / n_head_kv)). Scores are soft-capped
 * before the softmax when opt->softcap > 0. Returns [head, nq, n_head]. */
static inf_tensor *attend(graph_builder *b, inf_tensor *k_cache, inf_tensor *v_cache,
                          inf_tensor *q, int32_t c0, int32_t nq, const attn_options *opt)
{
    const attn_sources s = attn_sources_of(b, k_cache, v_cache, q, c0, nq, opt);
    inf_tensor *kq = inf_mul_mat(b->ctx, s.k, s.q);                    /* [n_kv, nq, n_head] */
    if (opt->softcap > 0)
        kq = inf_softcap(b->ctx, kq, opt->softcap);
    kq = opt->window > 0
             ? inf_soft_max_causal_window(b->ctx, kq, opt->kq_scale, s.n_past, opt->window)
             : inf_soft_max_causal(b->ctx, kq, opt->kq_scale, s.n_past);
    return inf_mul_mat(b->ctx, s.vt, kq);                              /* [head, nq, n_head] */
}

/* The same attention for the query tokens [begin, n_tokens) as one FLASH_ATTN node, which reads
 * only the keys each query may see and never stores the scores: no blocks and no scratch.
 * Returns [n_embd_q, n_tokens - begin]. */
static inf_tensor *attention_fused(graph_builder *b, inf_tensor *k_cache, inf_tensor *v_cache,
                                   inf_tensor *q, int32_t begin, const attn_options *opt)
{
    const int32_t n = b->shape.n_tokens - begin;
    const attn_sources s = attn_sources_of(b, k_cache, v_cache, q, begin, n, opt);
    inf_tensor *v = inf_transpose(b->ctx, s.vt); /* [head, n_kv, n_head_kv] */
    inf_tensor *out = inf_flash_attn_causal(b->ctx, s.q, s.k, v, opt->kq_scale, opt->softcap,
                                            s.n_past, opt->window);
    return inf_reshape_2d(b->ctx, out, (int64_t)b->hp->n_embd_head * b->hp->n_head, n);
}

/* Attention output of the query tokens [begin, n_tokens), [n_embd_q, n_tokens - begin].
 * Queries go in blocks so that each block reads only the keys it may see: with the causal mask
 * about half of a full n x n product would be thrown away (8 blocks do 56% of it). The blocks'
 * results are copied into the session's attention scratch (a tensor with memory of its own, which
 * every layer reuses: a layer's copies depend on the previous layer's output, so they run after
 * its read); the read is built after the copies, which orders it after them. */
static inf_tensor *attention_columns(graph_builder *b, inf_tensor *k_cache, inf_tensor *v_cache,
                                     inf_tensor *q, int32_t begin, const attn_options *opt)
{
    const int64_t n_embd_q = (int64_t)b->hp->n_embd_head * b->hp->n_head;
    const int32_t n = b->shape.n_tokens - begin;
    int32_t block = (n + ATTENTION_BLOCKS - 1) / ATTENTION_BLOCKS;
    block = block < ATTENTION_MIN_BLOCK ? ATTENTION_MIN_BLOCK : block;
    if (n <= block) {
        inf_tensor *kqv = attend(b, k_cache, v_cache, q, begin, n, opt);
        inf_tensor *merged = inf_cont(b->ctx, inf_permute(b->ctx, kqv, 0, 2, 1, 3));
        return inf_reshape_2d(b->ctx, merged, n_embd_q, n);
    }
    inf_tensor *merged = b->cache->attn_scratch;
    for (int32_t c0 = 0; c0 < n && b->ok && merged; c0 += block) {
        const int32_t nq = n - c0 < block ? n - c0 : block;
        inf_tensor *kqv = attend(b, k_cache, v_cache, q, begin + c0, nq, opt);
        inf_tensor *written = inf_cpy(b->ctx, inf_permute(b->ctx, kqv, 0, 2, 1, 3),
                                      columns(b, merged, c0, nq));
        if (!written || inf_graph_expand(b->graph, written, NULL) != GGTK_OK)
            b->ok = false;
    }
    return columns(b, merged, 0, n);
}

inf_tensor *block_attention(graph_builder *b, const qkv_heads *qkv, const attn_options *opt)
{
    if (!qkv->q || !qkv->k || !qkv->v) {
        b->ok = false;
        return NULL;
    }
    inf_tensor *k_cache = b->cache->k[b->il], *v_cache = b->cache->v[b->il];
    store_kv(b, k_cache, v_cache, qkv->k, qkv->v, first_cell(b, opt));
    const bool last = b->il + 1 == (int)b->hp->n_layer;
    if (last && b->shape.n_out == 0)
        return NULL;
    const int32_t begin = last ? b->shape.out_begin : 0;
    return b->cache->flash_attn ? attention_fused(b, k_cache, v_cache, qkv->q, begin, opt)
                                : attention_columns(b, k_cache, v_cache, qkv->q, begin, opt);
}

inf_tensor *block_residual(graph_builder *b, inf_tensor *x, inf_tensor *y)
{
    if (!x || !y)
        return NULL;
    if (y->ne[1] < x->ne[1])
        x = columns(b, x, x->ne[1] - y->ne[1], y->ne[1]);
    return inf_add(b->ctx, x, y);
}

inf_tensor *block_ffn_gated(graph_builder *b, const model_layer *w, inf_tensor *x,
                            ffn_activation act)
{
    inf_tensor *gate, *up;
    if (w->ffn_gate) {
        gate = block_linear(b, w->ffn_gate, w->ffn_gate_b, x);
        up = block_linear(b, w->ffn_up, w->ffn_up_b, x);
    } else {
        inf_tensor *both = block_linear(b, w->ffn_up, w->ffn_up_b, x);
        const int64_t n_ff = both ? both->ne[0] / 2 : 0;
        gate = both ? inf_view_2d(b->ctx, both, n_ff, both->ne[1], both->nb[1], 0) : NULL;
        up = both ? inf_view_2d(b->ctx, both, n_ff, both->ne[1], both->nb[1],
                                (size_t)n_ff * both->nb[0])
                  : NULL;
    }
    inf_tensor *h = NULL;
    switch (act) {
    case FFN_SILU: h = inf_swiglu(b->ctx, gate, up); break;
    case FFN_GELU: h = inf_geglu(b->ctx, gate, up); break;
    }
    return block_linear(b, w->ffn_down, w->ffn_down_b, h);
}

inf_tensor *block_decoder_layer(graph_builder *b, int il, inf_tensor *x,
                                const decoder_options *opt)
{
    const model_layer *w = &b->model->layers[il];
    qkv_heads qkv = block_qkv(b, w, block_rms_norm(b, x, w->attn_norm));
    if (w->attn_q_norm) {
        qkv.q = block_rms_norm(b, qkv.q, w->attn_q_norm);
        qkv.k = block_rms_norm(b, qkv.k, w->attn_k_norm);
    }
    qkv.q = block_rope(b, qkv.q, opt->rope);
    qkv.k = block_rope(b, qkv.k, opt->rope);
    if (opt->q_scale != 0.0f)
        qkv.q = inf_scale(b->ctx, qkv.q, opt->q_scale);
    inf_tensor *attn = block_attention(b, &qkv, &opt->attn);
    if (!attn)
        return NULL;
    attn = block_linear(b, w->wo, w->bo, attn);
    if (w->attn_post_norm)
        attn = block_rms_norm(b, attn, w->attn_post_norm);
    x = block_residual(b, x, attn);
    inf_tensor *ffn = block_ffn_gated(b, w, block_rms_norm(b, x, w->ffn_norm), opt->ffn);
    if (w->ffn_post_norm)
        ffn = block_rms_norm(b, ffn, w->ffn_post_norm);
    return block_residual(b, x, ffn);
}
