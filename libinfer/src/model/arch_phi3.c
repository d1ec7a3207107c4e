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
    {"attn_norm.weight", LAYER_SLOT(attn_norm), DIM_EMBD, DIM_ONE, false, NULL},
    COMMON_QKV_TENSORS,
    {"attn_output.weight", LAYER_SLOT(wo), DIM_Q, DIM_EMBD, false, NULL},
    {"ffn_norm.weight", LAYER_SLOT(ffn_norm), DIM_EMBD, DIM_ONE, false, NULL},
    {"ffn_up.weight", LAYER_SLOT(ffn_up), DIM_EMBD, DIM_FF2, false, NULL},
    {"ffn_down.weight", LAYER_SLOT(ffn_down), DIM_FF, DIM_EMBD, false, NULL},
};

static inf_tensor *build_layer(graph_builder *b, int il, inf_tensor *x)
{
    const model_layer *w = &b->model->layers[il];
    qkv_heads qkv = block_qkv(b, w, block_rms_norm(b, x, w->attn_norm));
    qkv.q = block_rope(b, qkv.q, &b->model->rope);
    qkv.k = block_rope(b, qkv.k, &b->model->rope);
    /* llama.cpp scales the query, not the scores (the same up to rounding) */
    qkv.q = inf_scale(b->ctx, qkv.q, 1.0f / sqrtf((float)b->hp->n_embd_head));
    attn_options opt = attn_options_default(b);
    opt.kq_scale = 1.0f;
    inf_tensor *attn = block_attention(b, &qkv, &opt);
    if (!attn)
        return NULL;
    x = block_residual(b, x, block_linear(b, w->wo, w->bo, attn));
    inf_tensor *ffn = block_ffn_gated(b, w, block_rms_norm(b, x, w->ffn_norm), FFN_SILU);
    return block_residual(b, x, ffn);
}

const model_arch MODEL_ARCH_PHI3 = {
    .name = "phi3",
    .rope_mode = INF_ROPE_NEOX,
    .model_tensors = MODEL_TENSORS,
    .n_model_tensors = sizeof MODEL_TENSORS / sizeof MODEL_TENSORS[0],
    .layer_tensors = LAYER_TENSORS,
    .n_layer_tensors = sizeof LAYER_TENSORS / sizeof LAYER_TENSORS[0],
    .build_layer = build_layer,
};
