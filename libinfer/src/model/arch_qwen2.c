/* arch_qwen2.c - "qwen2" (Qwen2, Qwen2.5), as llama.cpp's qwen2 builds it: the llama block with
 * rotary embedding on split halves (NeoX), Q/K/V biases as the files have them, no bias on the
 * attention output or the feed-forward, and an optional output.bias on the logits. */
#include "model_arch.h"

static const tensor_spec MODEL_TENSORS[] = {
    COMMON_MODEL_TENSORS,
    {"output.bias", MODEL_SLOT(output_b), DIM_VOCAB, DIM_ONE, true, NULL},
};

static const tensor_spec LAYER_TENSORS[] = {
    ATTN_NORM_TENSOR,
    COMMON_QKV_TENSORS,
    ATTN_OUTPUT_TENSOR,
    GATED_FFN_TENSORS,
};

const model_arch MODEL_ARCH_QWEN2 = {LLAMA_LIKE_ARCH("qwen2", INF_ROPE_NEOX)};
