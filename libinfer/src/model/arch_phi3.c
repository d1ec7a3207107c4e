/* arch_phi3.c - "phi3" (Phi-3, Phi-3.5, Phi-4 mini), as llama.cpp's phi3 builds it: fused Q|K|V
 * (attn_qkv) split by views, rotary embedding on split halves (NeoX) over the first
 * rope.dimension_count elements of a head (partial rotary), LongRoPE frequency factors
 * (rope_factors_long/short.weight, chosen by the context) with the file's rope attn_factor, the
 * query scaled by 1/sqrt(head) before attention, and a SwiGLU feed-forward whose ffn_up holds
 * gate|up.
 *
 * attention.sliding_window is read but not applied: llama.cpp disables Phi-3's sliding window
 * (the converters do not write its layer pattern correctly), so every layer attends to the whole
 * context there, and here. */
#include <math.h>

#include "model_arch.h"

static const tensor_spec MODEL_TENSORS[] = {
    COMMON_MODEL_TENSORS,
    {"rope_factors_long.weight", MODEL_SLOT(rope_long), DIM_ROT_HALF, DIM_ONE, true, NULL},
    {"rope_factors_short.weight", MODEL_SLOT(rope_short), DIM_ROT_HALF, DIM_ONE, true, NULL},
};

static const tensor_spec LAYER_TENSORS[] = {
    ATTN_NORM_TENSOR,
    COMMON_QKV_TENSORS,
    ATTN_OUTPUT_TENSOR,
    FFN_NORM_TENSOR,
    {"ffn_up.weight", LAYER_SLOT(ffn_up), DIM_EMBD, DIM_FF2, false, NULL},
    {"ffn_down.weight", LAYER_SLOT(ffn_down), DIM_FF, DIM_EMBD, false, NULL},
};

/* llama.cpp scales the query by 1/sqrt(head), not the scores (the same up to rounding) */
static inf_tensor *build_layer(graph_builder *b, int il, inf_tensor *x)
{
    decoder_options opt = {&b->model->rope, 1.0f / sqrtf((float)b->hp->n_embd_head),
                           attn_options_default(b), FFN_SILU};
    opt.attn.kq_scale = 1.0f;
    return block_decoder_layer(b, il, x, &opt);
}

const model_arch MODEL_ARCH_PHI3 = {
    .name = "phi3",
    .rope_mode = INF_ROPE_NEOX,
    ARCH_TENSOR_LISTS(MODEL_TENSORS, LAYER_TENSORS),
    .build_layer = build_layer,
};
