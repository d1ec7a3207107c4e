/* model_internal.h - what a loaded Llama model holds, shared by the loader, the session and the
 * graph builder of libinfer/src/model. */
#ifndef MODEL_INTERNAL_H
#define MODEL_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>

#include <ggtk/inf_backend.h>
#include <ggtk/inf_graph.h>
#include <ggtk/inf_model.h>
#include <ggtk/inf_tensor.h>

/* The weights of one transformer block. Biases are NULL when the file has none. */
typedef struct llama_layer {
    inf_tensor *attn_norm;
    inf_tensor *wq, *wk, *wv, *wo;
    inf_tensor *bq, *bk, *bv, *bo;
    inf_tensor *ffn_norm;
    inf_tensor *ffn_gate, *ffn_up, *ffn_down;
    inf_tensor *ffn_gate_b, *ffn_up_b, *ffn_down_b;
} llama_layer;

struct inf_model {
    ggtk_split *split;          /* the model's file, or the parts of a split model */
    const ggtk_file *file;      /* its first part: the metadata */
    inf_model_hparams hparams;
    inf_vocab *vocab;
    inf_context *weights;       /* no-data context holding the weight tensors */
    inf_buffer **weight_buffers; /* one per part, wrapping its data section; tensors are bound
                                  * into their part's */
    inf_tensor *tok_embd;
    inf_tensor *output_norm;
    inf_tensor *output;         /* output.weight, or tok_embd when the file ties them */
    llama_layer *layers;        /* hparams.n_layer */
    uint64_t weight_bytes;
    uint64_t n_params;
    bool locked;                /* the data sections are mlock'ed */
};

/* Where metadata pair `key` starts in the file (GGTK_NO_OFFSET when absent), for an error's
 * offset. */
uint64_t llama_key_offset(const ggtk_file *file, const char *key);

/* Read the hyper-parameters of a "llama" file into *hp (n_vocab is left 0 for the loader).
 * False with `err` set on a missing, mistyped or inconsistent key. */
bool llama_read_hparams(const ggtk_file *file, inf_model_hparams *hp, ggtk_error *err);

/* Create and bind every weight tensor of a "llama" model (model->split, hparams and vocab are
 * set).
 * False with `err` naming the tensor on a missing, mis-shaped, mistyped or unexpected one. */
bool llama_bind_weights(inf_model *model, ggtk_error *err);

/* What one forward graph computes. */
typedef struct llama_batch_shape {
    int32_t n_tokens;   /* tokens in this graph */
    int32_t n_past;     /* cache positions before them */
    int32_t out_begin;  /* first token (0-based in this graph) whose logits are wanted */
    int32_t n_out;      /* tokens with logits: n_tokens - out_begin, or 0 for none */
} llama_batch_shape;

/* The forward graph of one batch, built in `ctx` (a no-data context of
 * llama_graph_context_size() bytes). */
typedef struct llama_graph {
    inf_graph *graph;
    inf_tensor *tokens;    /* I32 [n_tokens], input */
    inf_tensor *positions; /* I32 [n_tokens], input */
    inf_tensor *logits;    /* F32 [n_vocab, n_out], output; NULL when n_out is 0 */
} llama_graph;

/* Bytes of the no-data context one forward graph needs. */
size_t llama_graph_context_size(const inf_model *model);

/* The tensors with memory of their own that a forward graph reads and writes. */
typedef struct llama_cache {
    inf_tensor **k;           /* per layer [n_embd_kv, n_ctx] */
    inf_tensor **v;           /* per layer [n_ctx, n_embd_kv]: transposed, so that attention
                                 reads rows of positions */
    inf_tensor *attn_scratch; /* F32 [n_embd_head * n_head, n_batch]: attention output */
} llama_cache;

/* Build the forward pass of `shape` (n_tokens <= the scratch's n_batch) over `cache`. False with
 * `err` set (the context's error) when a constructor fails. */
bool llama_build_graph(const inf_model *model, inf_context *ctx, const llama_cache *cache,
                       llama_batch_shape shape, llama_graph *out, ggtk_error *err);

#endif
