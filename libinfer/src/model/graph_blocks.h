/* graph_blocks.h - the pieces every family's forward pass is built from: norms, projections,
 * Q/K/V (separate or fused), rotary embedding, attention over the KV cache with options, the
 * feed-forward variants and the residual join.
 *
 * Shapes (dimension 0 first): activations are [n_embd, n]; Q and K are [head, heads, n]; V is
 * [n_embd_kv, n]. Every block returns NULL (and leaves the context's error) when a constructor
 * fails; blocks given NULL return NULL, so a whole layer can be written straight and checked
 * once (graph_builder.ok and the context's error).
 *
 * Extending (for a family that needs it, with small changes):
 *  - attention options (attn_options): kq_scale, `softcap` (tanh soft-capping of the scores,
 *    gemma2) and `window` (the sliding-window layers of model_layer_is_swa(), gemma2/3);
 *  - per-layer rope (gemma3 local layers have their own base): copy b->model->rope, change
 *    params.freq_base, pass the copy to block_rope();
 *  - post-norms (gemma2/3 norm the attention and FFN outputs before the residual): block_rms_norm
 *    on the block's output with the new slot, then block_residual();
 *  - a new FFN activation: a value of ffn_activation and its case in block_ffn_gated();
 *  - embedding scale and final-logit softcap: the row's finish_embedding / finish_logits hooks.
 * block_decoder_layer() composes them into the pre-norm decoder layer every family here uses; a
 * family's build_layer only fills its decoder_options. */
#ifndef GRAPH_BLOCKS_H
#define GRAPH_BLOCKS_H

#include <ggtk/inf_ops.h>

#include "model_internal.h"

/* Everything the blocks of one forward graph need. */
typedef struct graph_builder {
    const inf_model *model;
    const inf_model_hparams *hp;
    inf_context *ctx;
    inf_graph *graph;
    const model_cache *cache;
    model_batch_shape shape;
    inf_tensor *positions;  /* I32 [n_tokens] */
    inf_tensor *rope_factors; /* the frequency factors every layer's rope uses, or NULL */
    int il;                 /* the block being built */
    bool ok;                /* false once anything failed */
    const char *failure;    /* why, when no constructor failed (static text), else NULL */
} graph_builder;

/* rms_norm(x) * weight (weight NULL: no multiplication). Rows are dimension 0, so on Q or K
 * [head, heads, n] it normalises each head (qwen3's q/k norms). */
inf_tensor *block_rms_norm(graph_builder *b, inf_tensor *x, inf_tensor *weight);

/* w * x (+ bias when not NULL). */
inf_tensor *block_linear(graph_builder *b, inf_tensor *w, inf_tensor *bias, inf_tensor *x);

/* Q [head, n_head, n], K [head, n_head_kv, n] and V [n_embd_kv, n] of x [n_embd, n], from the
 * layer's separate projections or views of its fused one, biases added when the file has them. */
typedef struct qkv_heads {
    inf_tensor *q, *k, *v;
} qkv_heads;
qkv_heads block_qkv(graph_builder *b, const model_layer *w, inf_tensor *x);

/* Rotary embedding of Q or K at the batch's positions as `rope` says, with b->rope_factors. */
inf_tensor *block_rope(graph_builder *b, inf_tensor *t, const rope_config *rope);

/* How attention scores are formed. */
typedef struct attn_options {
    float kq_scale; /* scores are (q . k) * kq_scale */
    float softcap;  /* > 0: scores become softcap * tanh(scores / softcap) before the softmax */
    int32_t window; /* > 0: a query sees only the last `window` positions; set exactly on the
                       layers model_layer_is_swa() names, whose cache is the sliding-window one
                       (its cell 0 holds position shape.swa_first) */
} attn_options;

/* The default: kq_scale 1/sqrt(head), no softcap, no window. */
attn_options attn_options_default(const graph_builder *b);

/* Causal self-attention of block b->il: stores this batch's K and V in the layer's cache, then
 * attends every query (in the last block only the tokens whose logits are wanted, from
 * shape.out_begin on) over the cached positions it may see: in query blocks of MUL_MAT, SOFT_MAX
 * and MUL_MAT, or as one FLASH_ATTN node when b->cache->flash_attn is set. Returns
 * [n_embd_q, n'] (before the output projection), or NULL when the last block has no outputs. */
inf_tensor *block_attention(graph_builder *b, const qkv_heads *qkv, const attn_options *opt);

/* x + y, where y may cover only the last columns of x (the last block's outputs): those columns
 * of x are taken. */
inf_tensor *block_residual(graph_builder *b, inf_tensor *x, inf_tensor *y);

/* The gated feed-forward activations. */
typedef enum ffn_activation {
    FFN_SILU, /* silu(gate) * up: SwiGLU */
    FFN_GELU, /* gelu(gate) * up: GEGLU (gemma), ggml's GELU */
} ffn_activation;

/* down(act(gate x + gate_b) * (up x + up_b)) + down_b, from the layer's ffn_* slots: separate
 * gate and up, or (ffn_gate NULL) one fused ffn_up [n_embd, 2 n_ff] whose first half is the gate
 * and second the up projection (phi3). */
inf_tensor *block_ffn_gated(graph_builder *b, const model_layer *w, inf_tensor *x,
                            ffn_activation act);

/* What a family changes in the shared decoder layer. */
typedef struct decoder_options {
    const rope_config *rope; /* the layer's rotary embedding */
    float q_scale;           /* != 0: queries multiplied by it after the rope (phi3 and gemma scale
                                the query rather than the scores; attn.kq_scale is then 1) */
    attn_options attn;
    ffn_activation ffn;
} decoder_options;

/* Layer il of a pre-norm decoder: RMS-norm, Q/K/V, per-head Q/K RMS-norms when the layer has
 * attn_q_norm, rope, optional query scale, attention, output projection (with bias when bound),
 * post-norm when the layer has attn_post_norm, residual; RMS-norm, gated feed-forward, post-norm
 * when the layer has ffn_post_norm, residual. NULL as block_attention() says. */
inf_tensor *block_decoder_layer(graph_builder *b, int il, inf_tensor *x,
                                const decoder_options *opt);

#endif
