/* arch_gemma.h - what the "gemma2" and "gemma3" rows share (arch_gemma.c): the block, the
 * embedding and logits hooks, and the sliding-window reading both families do. */
#ifndef ARCH_GEMMA_H
#define ARCH_GEMMA_H

#include "model_arch.h"

/* Tensors of a Gemma block; gemma3 adds the per-head q/k norms. */
#define GEMMA_LAYER_TENSORS                                                                       \
    ATTN_NORM_TENSOR,                                                                             \
    {"attn_q.weight", LAYER_SLOT(wq), DIM_EMBD, DIM_Q, false, NULL},                          \
    {"attn_k.weight", LAYER_SLOT(wk), DIM_EMBD, DIM_KV, false, NULL},                         \
    {"attn_v.weight", LAYER_SLOT(wv), DIM_EMBD, DIM_KV, false, NULL},                         \
    ATTN_OUTPUT_TENSOR,                                                                           \
    {"post_attention_norm.weight", LAYER_SLOT(attn_post_norm), DIM_EMBD, DIM_ONE, false, NULL}, \
    GATED_FFN_TENSORS,                                                                            \
    {"post_ffw_norm.weight", LAYER_SLOT(ffn_post_norm), DIM_EMBD, DIM_ONE, false, NULL}

/* Turn on sliding-window layers: every layer il with il % period < period - 1, period from
 * attention.sliding_window_pattern (default `period`; an array there is ignored, as llama.cpp
 * ignores it), their rope the model's with base `base_swa` (then rope.freq_base_swa when
 * present) and scale `scale_swa`. False with r->err set on a bad key. */
bool gemma_read_swa(const hparams_reader *r, inf_model *model, uint32_t period, float base_swa,
                    float scale_swa);

/* llama.cpp's attention scale: 1/sqrt(head size), or 1/sqrt(n_embd / n_head) for the 27B models
 * (recognised, as llama.cpp does, by their layer count `layers_27b`). */
float gemma_q_scale(const inf_model_hparams *hp, uint32_t layers_27b);

/* One block: pre-norm, Q/K/V (q/k per-head norms when the layer has them), rope (the
 * sliding-window layers' own on those layers), queries scaled by q_scale, attention (soft-capped
 * scores, windowed on sliding-window layers), output projection, post-norm, residual; pre-norm,
 * GEGLU feed-forward, post-norm, residual. */
inf_tensor *gemma_build_layer(graph_builder *b, int il, inf_tensor *x);

/* Token embeddings times sqrt(n_embd). */
inf_tensor *gemma_scale_embedding(graph_builder *b, inf_tensor *x);

/* Logits soft-capped by gemma.final_softcap when it is > 0. */
inf_tensor *gemma_cap_logits(graph_builder *b, inf_tensor *logits);

/* The fields of a Gemma row named `arch_name` whose own keys `reader` reads, from the file's
 * MODEL_TENSORS and LAYER_TENSORS arrays. */
#define GEMMA_ARCH(arch_name, reader)                                                             \
    .name = arch_name, .rope_mode = INF_ROPE_NEOX, .read_hparams = reader,                        \
    ARCH_TENSOR_LISTS(MODEL_TENSORS, LAYER_TENSORS), .build_layer = gemma_build_layer,            \
    .finish_embedding = gemma_scale_embedding, .finish_logits = gemma_cap_logits

#endif
