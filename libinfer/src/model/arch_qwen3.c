/* arch_qwen3.c - "qwen3" (Qwen3 dense), as llama.cpp's qwen3 builds it: the llama block with an
 * RMS-norm of every Q and K head (attn_q_norm / attn_k_norm, before the rotary embedding),
 * rotary embedding on split halves (NeoX), no attention-output or feed-forward biases. */
#include "model_arch.h"

static const tensor_spec MODEL_TENSORS[] = {
    COMMON_MODEL_TENSORS,
};

static const tensor_spec LAYER_TENSORS[] = {
    ATTN_NORM_TENSOR,
    COMMON_QKV_TENSORS,
    {"attn_q_norm.weight", LAYER_SLOT(attn_q_norm), DIM_HEAD, DIM_ONE, false, NULL},
    {"attn_k_norm.weight", LAYER_SLOT(attn_k_norm), DIM_HEAD, DIM_ONE, false, NULL},
    ATTN_OUTPUT_TENSOR,
    GATED_FFN_TENSORS,
};

const model_arch MODEL_ARCH_QWEN3 = {LLAMA_LIKE_ARCH("qwen3", INF_ROPE_NEOX)};
