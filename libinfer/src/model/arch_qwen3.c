/* arch_qwen3.c - "qwen3" (Qwen3 dense), as llama.cpp's qwen3 builds it: the llama block with an
 * RMS-norm of every Q and K head (attn_q_norm / attn_k_norm, before the rotary embedding),
 * rotary embedding on split halves (NeoX), no attention-output or feed-forward biases. */
#include "model_arch.h"

static const tensor_spec MODEL_TENSORS[] = {
    COMMON_MODEL_TENSORS,
};

static const tensor_spec LAYER_TENSORS[] = {
    {"attn_norm.weight", LAYER_SLOT(attn_norm), DIM_EMBD, DIM_ONE, false, NULL},
    COMMON_QKV_TENSORS,
    {"attn_q_norm.weight", LAYER_SLOT(attn_q_norm), DIM_HEAD, DIM_ONE, false, NULL},
    {"attn_k_norm.weight", LAYER_SLOT(attn_k_norm), DIM_HEAD, DIM_ONE, false, NULL},
    {"attn_output.weight", LAYER_SLOT(wo), DIM_Q, DIM_EMBD, false, NULL},
    {"ffn_norm.weight", LAYER_SLOT(ffn_norm), DIM_EMBD, DIM_ONE, false, NULL},
    {"ffn_gate.weight", LAYER_SLOT(ffn_gate), DIM_EMBD, DIM_FF, false, NULL},
    {"ffn_up.weight", LAYER_SLOT(ffn_up), DIM_EMBD, DIM_FF, false, NULL},
    {"ffn_down.weight", LAYER_SLOT(ffn_down), DIM_FF, DIM_EMBD, false, NULL},
};

const model_arch MODEL_ARCH_QWEN3 = {
    .name = "qwen3",
    .rope_mode = INF_ROPE_NEOX,
    .read_hparams = llama_like_read_hparams,
    .model_tensors = MODEL_TENSORS,
    .n_model_tensors = sizeof MODEL_TENSORS / sizeof MODEL_TENSORS[0],
    .layer_tensors = LAYER_TENSORS,
    .n_layer_tensors = sizeof LAYER_TENSORS / sizeof LAYER_TENSORS[0],
    .build_layer = llama_like_build_layer,
};
