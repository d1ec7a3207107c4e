/* synth_llama.c - a synthetic Llama forward pass (see synth_llama.h). */
#include "synth_llama.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "infer_util.h"

static inf_tensor *weight(inf_context *ctx, ggtk_tensor_type type, int64_t ne0, int64_t ne1)
{
    return ne1 > 1 ? inf_tensor_new_2d(ctx, type, ne0, ne1) : inf_tensor_new_1d(ctx, type, ne0);
}

llama_model *synth_model_new(inf_backend *backend, const llama_shape *s, bool fill, uint64_t seed)
{
    llama_model *m = calloc(1, sizeof *m);
    m->shape = *s;
    m->layers = calloc((size_t)s->n_layer, sizeof *m->layers);
    m->ctx = inf_context_new((size_t)(16 * s->n_layer + 8) * inf_tensor_overhead(), true);
    const int n_kv = s->n_embd / s->n_head * s->n_head_kv;
    const ggtk_tensor_type wt = s->weight_type;
    m->tok_embd = weight(m->ctx, wt, s->n_embd, s->n_vocab);
    m->out_norm = weight(m->ctx, GGTK_TENSOR_F32, s->n_embd, 1);
    m->output = weight(m->ctx, wt, s->n_embd, s->n_vocab);
    for (int l = 0; l < s->n_layer; l++) {
        llama_layer *L = &m->layers[l];
        L->attn_norm = weight(m->ctx, GGTK_TENSOR_F32, s->n_embd, 1);
        L->wq = weight(m->ctx, wt, s->n_embd, s->n_embd);
        L->wk = weight(m->ctx, wt, s->n_embd, n_kv);
        L->wv = weight(m->ctx, wt, s->n_embd, n_kv);
        L->wo = weight(m->ctx, wt, s->n_embd, s->n_embd);
        L->ffn_norm = weight(m->ctx, GGTK_TENSOR_F32, s->n_embd, 1);
        L->w_gate = weight(m->ctx, wt, s->n_embd, s->n_ff);
        L->w_up = weight(m->ctx, wt, s->n_embd, s->n_ff);
        L->w_down = weight(m->ctx, wt, s->n_ff, s->n_embd);
        L->k_cache = weight(m->ctx, GGTK_TENSOR_F16, n_kv, s->n_ctx);
        L->v_cache = weight(m->ctx, GGTK_TENSOR_F16, n_kv, s->n_ctx);
    }
    m->buffer = inf_backend_alloc_context_tensors(backend, m->ctx, NULL);
    if (!m->buffer || inf_context_error(m->ctx)) {
        synth_model_free(m);
        return NULL;
    }
    if (fill) {
        test_rng rng = {seed};
        for (inf_tensor *t = inf_context_next_tensor(m->ctx, NULL); t;
             t = inf_context_next_tensor(m->ctx, t))
            tensor_fill_quantized(t, &rng, -0.5f, 0.5f);
        for (int l = 0; l < s->n_layer; l++) {
            memset(m->layers[l].k_cache->data, 0, inf_tensor_nbytes(m->layers[l].k_cache));
            memset(m->layers[l].v_cache->data, 0, inf_tensor_nbytes(m->layers[l].v_cache));
        }
    }
    return m;
}

void synth_model_free(llama_model *model)
{
    if (!model)
        return;
    inf_buffer_free(model->buffer);
    inf_context_free(model->ctx);
    free(model->layers);
    free(model);
}

/* Self-attention of one layer: project, rotate, write K and V into the caches, attend over
 * positions 0..n_past+n_tokens-1, project back. V is read transposed straight from its cache. */
static inf_tensor *attention(inf_context *ctx, const llama_model *m, const llama_layer *L,
                             inf_tensor *cur, inf_tensor *pos, inf_tensor *slots, int n_tokens,
                             int n_past)
{
    const llama_shape *s = &m->shape;
    const int head = s->n_embd / s->n_head, n_kv = n_past + n_tokens;
    inf_tensor *q = inf_reshape_3d(ctx, inf_mul_mat(ctx, L->wq, cur), head, s->n_head, n_tokens);
    inf_tensor *k = inf_reshape_3d(ctx, inf_mul_mat(ctx, L->wk, cur), head, s->n_head_kv, n_tokens);
    inf_tensor *v = inf_mul_mat(ctx, L->wv, cur);
    q = inf_rope(ctx, q, pos, head, INF_ROPE_NORMAL, 10000.0f, 1.0f);
    k = inf_rope(ctx, k, pos, head, INF_ROPE_NORMAL, 10000.0f, 1.0f);
    inf_tensor *k_all = inf_set_rows(ctx, L->k_cache, inf_reshape_2d(ctx, k, head * s->n_head_kv, n_tokens), slots);
    inf_tensor *v_all = inf_set_rows(ctx, L->v_cache, v, slots);
    const size_t row = L->k_cache->nb[1], hsize = (size_t)head * sizeof(uint16_t);
    inf_tensor *keys = inf_view_3d(ctx, k_all, head, n_kv, s->n_head_kv, row, hsize, 0);
    inf_tensor *values = inf_transpose(ctx, inf_view_3d(ctx, v_all, head, n_kv, s->n_head_kv, row, hsize, 0));
    inf_tensor *kq = inf_mul_mat(ctx, keys, inf_permute(ctx, q, 0, 2, 1, 3));
    kq = inf_soft_max_causal(ctx, kq, 1.0f / sqrtf((float)head), n_past);
    inf_tensor *kqv = inf_mul_mat(ctx, values, kq); /* [head, n_tokens, n_head] */
    inf_tensor *merged = inf_cont(ctx, inf_permute(ctx, kqv, 0, 2, 1, 3));
    return inf_mul_mat(ctx, L->wo, inf_reshape_2d(ctx, merged, s->n_embd, n_tokens));
}

inf_tensor *synth_forward(inf_context *ctx, const llama_model *m, int n_tokens, int n_past,
                          inf_tensor **tokens, inf_tensor **positions)
{
    const llama_shape *s = &m->shape;
    inf_tensor *ids = inf_tensor_set_name(inf_tensor_new_1d(ctx, GGTK_TENSOR_I32, n_tokens), "tokens");
    inf_tensor *pos = inf_tensor_set_name(inf_tensor_new_1d(ctx, GGTK_TENSOR_I32, n_tokens), "positions");
    inf_tensor_set_input(ids);
    inf_tensor_set_input(pos);
    *tokens = ids;
    *positions = pos;
    inf_tensor *x = inf_get_rows(ctx, m->tok_embd, ids);
    for (int l = 0; l < s->n_layer; l++) {
        const llama_layer *L = &m->layers[l];
        inf_tensor *cur = inf_mul(ctx, inf_rms_norm(ctx, x, 1e-5f), L->attn_norm);
        x = inf_add(ctx, x, attention(ctx, m, L, cur, pos, pos, n_tokens, n_past));
        cur = inf_mul(ctx, inf_rms_norm(ctx, x, 1e-5f), L->ffn_norm);
        inf_tensor *ffn = inf_swiglu(ctx, inf_mul_mat(ctx, L->w_gate, cur), inf_mul_mat(ctx, L->w_up, cur));
        x = inf_add(ctx, x, inf_mul_mat(ctx, L->w_down, ffn));
    }
    inf_tensor *logits = inf_mul_mat(ctx, m->output, inf_mul(ctx, inf_rms_norm(ctx, x, 1e-5f), m->out_norm));
    if (logits)
        inf_tensor_set_output(logits);
    return logits;
}
