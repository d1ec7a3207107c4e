/* model_internal.h - what a loaded model holds, shared by the loader, the architecture table, the
 * graph blocks and the session of libinfer/src/model.
 *
 * A model is one row of the architecture table (model_arch.h) plus the weights that row's tensor
 * lists bound. Weights live in slots of inf_model (whole-model tensors) and model_layer (per
 * block); a slot a family does not use stays NULL. */
#ifndef MODEL_INTERNAL_H
#define MODEL_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>

#include <ggtk/inf_backend.h>
#include <ggtk/inf_graph.h>
#include <ggtk/inf_model.h>
#include <ggtk/inf_ops.h>
#include <ggtk/inf_tensor.h>

typedef struct model_arch model_arch;

/* The weights of one transformer block: the union of every family's slots. Biases and optional
 * tensors are NULL when the file has none. A family needing a new tensor adds a slot here and a
 * row to its tensor list (e.g. gemma's attn_post_norm / ffn_post_norm). */
typedef struct model_layer {
    inf_tensor *attn_norm;
    inf_tensor *wq, *wk, *wv, *wo;  /* separate projections ... */
    inf_tensor *wqkv;               /* ... or one fused Q|K|V projection (then wq/wk/wv NULL) */
    inf_tensor *bq, *bk, *bv, *bqkv, *bo;
    inf_tensor *attn_q_norm, *attn_k_norm; /* per-head RMS-norm weights [n_embd_head] */
    inf_tensor *attn_post_norm;     /* RMS-norm weight of the attention output (gemma) */
    inf_tensor *ffn_norm;
    inf_tensor *ffn_gate, *ffn_up, *ffn_down; /* ffn_up is [n_embd, 2 n_ff] when ffn_gate is
                                                 NULL and the family fuses gate|up (phi3) */
    inf_tensor *ffn_gate_b, *ffn_up_b, *ffn_down_b;
    inf_tensor *ffn_post_norm;      /* RMS-norm weight of the feed-forward output (gemma) */
} model_layer;

/* Rotary embedding as one call of inf_rope_ext() computes it: the file's scaling turned into
 * llama.cpp's context parameters (yarn ext/attn factors and correction range). */
typedef struct rope_config {
    int n_dims;             /* rotated elements per head */
    inf_rope_mode mode;     /* pairing: the family's (llama NORMAL, qwen/phi NEOX) */
    inf_rope_params params; /* base, scale, yarn factors */
} rope_config;

/* Sliding-window attention as llama.cpp's standard SWA type, set by the family's read_hparams
 * (other families leave it off even when their file has attention.sliding_window): which layers
 * see only the last hparams.n_swa positions, and their rotary embedding (gemma's local layers have
 * their own base). The session gives those layers a cache of their own size (kv_window.h). */
typedef struct model_swa {
    bool on;          /* the family uses sliding-window layers (then hparams.n_swa > 0) */
    uint32_t period;  /* layer il slides when il % period < period - 1; 0: every layer */
    rope_config rope; /* rotary embedding of the sliding-window layers */
} model_swa;

/* Gemma 2 / Gemma 3's own hyper-parameters (arch_gemma2.c, arch_gemma3.c). */
typedef struct gemma_params {
    float q_scale;       /* queries are multiplied by it before Q.K, as llama.cpp does */
    float attn_softcap;  /* > 0: attention scores become cap * tanh(score / cap) (gemma2) */
    float final_softcap; /* > 0: so do the logits */
} gemma_params;

/* A family's own hyper-parameters go in a struct of the family's beside these, added as a field of
 * inf_model; its row's read_hparams fills it and its build_layer reads it (graph_builder.model). */
struct inf_model {
    ggtk_split *split;          /* the model's file, or the parts of a split model */
    const ggtk_file *file;      /* its first part: the metadata */
    const model_arch *arch;     /* its row of the architecture table */
    inf_model_hparams hparams;
    rope_config rope;           /* rotary embedding of every layer (a family may vary it) */
    model_swa swa;              /* the sliding-window layers, if any */
    gemma_params gemma;         /* gemma2 / gemma3 only */
    inf_vocab *vocab;
    inf_context *weights;       /* no-data context holding the weight tensors */
    inf_buffer **weight_buffers; /* one per part, wrapping its data section; tensors are bound
                                  * into their part's */
    inf_tensor *tok_embd;
    inf_tensor *output_norm;
    inf_tensor *output;         /* output.weight, or tok_embd when the file ties them */
    inf_tensor *output_b;       /* output.bias (qwen2), or NULL */
    inf_tensor *rope_freqs;     /* rope_freqs.weight [n_rot/2] (Llama 3.1+), or NULL */
    inf_tensor *rope_long, *rope_short; /* rope_factors_long/short.weight [n_rot/2] (LongRoPE) */
    model_layer *layers;        /* hparams.n_layer */
    uint64_t weight_bytes;
    uint64_t n_params;
    bool locked;                /* the data sections are mlock'ed */
};

/* Whether block il is a sliding-window layer (llama.cpp's standard SWA pattern). */
static inline bool model_layer_is_swa(const inf_model *model, uint32_t il)
{
    const uint32_t period = model->swa.period;
    return model->swa.on && (period == 0 || il % period < period - 1);
}

/* Where metadata pair `key` starts in the file (GGTK_NO_OFFSET when absent), for an error's
 * offset. */
uint64_t model_key_offset(const ggtk_file *file, const char *key);

/* Create and bind every weight tensor `model->arch` lists (model->split, hparams and vocab are
 * set). False with `err` naming the tensor on a missing, mis-shaped, mistyped or unexpected
 * one. */
bool model_bind_weights(inf_model *model, ggtk_error *err);

/* What one forward graph computes. */
typedef struct model_batch_shape {
    int32_t n_tokens;   /* tokens in this graph */
    int32_t n_past;     /* cache positions before them */
    int32_t out_begin;  /* first token (0-based in this graph) whose logits are wanted */
    int32_t n_out;      /* tokens with logits: n_tokens - out_begin, or 0 for none */
    int32_t swa_first;  /* first position the sliding-window layers' caches hold (they drop
                           older ones: their cell i holds position swa_first + i) */
} model_batch_shape;

/* The forward graph of one batch, built in `ctx` (a no-data context of
 * model_graph_context_size() bytes). */
typedef struct model_graph {
    inf_graph *graph;
    inf_tensor *tokens;    /* I32 [n_tokens], input */
    inf_tensor *positions; /* I32 [n_tokens], input */
    inf_tensor *logits;    /* F32 [n_vocab, n_out], output; NULL when n_out is 0 */
} model_graph;

/* Bytes of the no-data context one forward graph needs. */
size_t model_graph_context_size(const inf_model *model);

/* The tensors with memory of their own that a forward graph reads and writes. */
typedef struct model_cache {
    int32_t n_ctx;            /* positions per layer (the session's n_ctx) */
    inf_tensor **k;           /* per layer [n_embd_kv, cells] */
    inf_tensor **v;           /* per layer [cells, n_embd_kv]: transposed, so that attention
                                 reads rows of positions; cells is n_ctx, or fewer for
                                 sliding-window layers (kv_window.h) */
    inf_tensor *attn_scratch; /* F32 [n_embd_head * n_head, n_batch]: attention output */
    bool flash_attn;          /* attention as one fused FLASH_ATTN node per layer rather than
                                 blocks of MUL_MAT, SOFT_MAX, MUL_MAT (graph_blocks.c); the
                                 scratch is then unused. The session decides (false: unfused) */
} model_cache;

/* Build the forward pass of `shape` (n_tokens <= the scratch's n_batch) over `cache`. False with
 * `err` set (the context's error) when a constructor fails. */
bool model_build_graph(const inf_model *model, inf_context *ctx, const model_cache *cache,
                       model_batch_shape shape, model_graph *out, ggtk_error *err);

#endif
