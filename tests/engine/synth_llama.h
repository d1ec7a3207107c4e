/* synth_llama.h - a synthetic Llama-shaped forward pass (random weights, no tokenizer) for the
 * allocator tests: the same operations, shapes and cache traffic as a real model. */
#ifndef SYNTH_LLAMA_H
#define SYNTH_LLAMA_H

#include <ggtk/inf_backend.h>
#include <ggtk/inf_ops.h>

typedef struct llama_shape {
    int n_embd, n_layer, n_head, n_head_kv, n_ff, n_vocab, n_ctx;
    ggtk_tensor_type weight_type;
} llama_shape;

typedef struct llama_layer {
    inf_tensor *attn_norm, *wq, *wk, *wv, *wo, *ffn_norm, *w_gate, *w_up, *w_down;
    inf_tensor *k_cache, *v_cache; /* F16 [n_embd_kv, n_ctx] */
} llama_layer;

typedef struct llama_model {
    llama_shape shape;
    inf_context *ctx;   /* weights and caches */
    inf_buffer *buffer; /* their memory */
    inf_tensor *tok_embd, *out_norm, *output;
    llama_layer *layers;
} llama_model;

/* Weights (filled with small random values when `fill` is true; else left untouched, for
 * planning only) and zeroed caches. NULL on failure. */
llama_model *synth_model_new(inf_backend *backend, const llama_shape *shape, bool fill,
                             uint64_t seed);
void synth_model_free(llama_model *model);

/* The forward pass of n_tokens tokens at positions n_past.. in `ctx`: inputs `tokens` and
 * `positions` (I32 [n_tokens], flagged input) are returned through the pointers; the result is
 * the logits F32 [n_vocab, n_tokens], flagged output. */
inf_tensor *synth_forward(inf_context *ctx, const llama_model *model, int n_tokens, int n_past,
                          inf_tensor **tokens, inf_tensor **positions);

#endif
