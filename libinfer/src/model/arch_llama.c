/* arch_llama.c - "llama" (Llama 1/2/3.x, SmolLM, Mistral 7B, ...), as llama.cpp's llama builds it:
 * RMS-norm, Q/K/V (fused or separate, optional biases), rotary embedding on adjacent pairs with
 * Llama 3.1's rope_freqs.weight or LongRoPE factors when present, causal grouped-query attention,
 * output projection (optional bias) and residual; RMS-norm, SwiGLU feed-forward (optional biases)
 * and residual. */
#include "model_arch.h"

static bool uses_rope_freqs(const inf_model *model, const model_layer *layer)
{
    (void)layer;
    return model->hparams.rope_scaling != INF_ROPE_SCALING_LONGROPE;
}

static bool uses_longrope(const inf_model *model, const model_layer *layer)
{
    return !uses_rope_freqs(model, layer);
}

static const tensor_spec MODEL_TENSORS[] = {
    COMMON_MODEL_TENSORS,
    {"rope_freqs.weight", MODEL_SLOT(rope_freqs), DIM_ROT_HALF, DIM_ONE, true, uses_rope_freqs},
    {"rope_factors_long.weight", MODEL_SLOT(rope_long), DIM_ROT_HALF, DIM_ONE, true,
     uses_longrope},
    {"rope_factors_short.weight", MODEL_SLOT(rope_short), DIM_ROT_HALF, DIM_ONE, true,
     uses_longrope},
};

static const tensor_spec LAYER_TENSORS[] = {
    ATTN_NORM_TENSOR,
    COMMON_QKV_TENSORS,
    ATTN_OUTPUT_TENSOR,
    {"attn_output.bias", LAYER_SLOT(bo), DIM_EMBD, DIM_ONE, true, NULL},
    GATED_FFN_TENSORS,
    {"ffn_gate.bias", LAYER_SLOT(ffn_gate_b), DIM_FF, DIM_ONE, true, NULL},
    {"ffn_up.bias", LAYER_SLOT(ffn_up_b), DIM_FF, DIM_ONE, true, NULL},
    {"ffn_down.bias", LAYER_SLOT(ffn_down_b), DIM_EMBD, DIM_ONE, true, NULL},
};

/* llama.cpp refuses a llama file whose rope.dimension_count is not the head size (and asserts it
 * for qwen2 and qwen3). */
bool llama_like_read_hparams(const hparams_reader *r, inf_model *model)
{
    const inf_model_hparams *hp = &model->hparams;
    if (hp->n_rot != hp->n_embd_head)
        return hp_refuse(r, GGTK_ERR_INVALID, "rope.dimension_count",
                         "rope.dimension_count %u must equal the head size %u for %s",
                         hp->n_rot, hp->n_embd_head, r->arch);
    return true;
}

inf_tensor *llama_like_build_layer(graph_builder *b, int il, inf_tensor *x)
{
    const decoder_options opt = {&b->model->rope, 0.0f, attn_options_default(b), FFN_SILU};
    return block_decoder_layer(b, il, x, &opt);
}

const model_arch MODEL_ARCH_LLAMA = {LLAMA_LIKE_ARCH("llama", INF_ROPE_NORMAL)};
