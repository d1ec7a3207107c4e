/* arch_gemma.c - the parts Gemma 2 and Gemma 3 share, as llama.cpp's gemma2 and gemma3 graphs
 * build them (the rows are in arch_gemma2.c and arch_gemma3.c). The norms use the weights as the
 * GGUF stores them: the converter has already added Gemma's 1 to them. */
#include <math.h>
#include <stdio.h>

#include "arch_gemma.h"

bool gemma_read_swa(const hparams_reader *r, inf_model *model, uint32_t period, float base_swa,
                    float scale_swa)
{
    char key[128];
    snprintf(key, sizeof key, "%s.attention.sliding_window_pattern", r->arch);
    const ggtk_value *v = ggtk_get(r->file, key);
    if ((!v || v->type != GGTK_VALUE_ARRAY) &&
        !hp_count0(r, "attention.sliding_window_pattern", UINT32_MAX, &period))
        return false;
    model->swa.on = true;
    model->swa.period = period;
    model->swa.rope = model->rope;
    model->swa.rope.params.freq_base = base_swa;
    model->swa.rope.params.freq_scale = scale_swa;
    return hp_float(r, "rope.freq_base_swa", false, &model->swa.rope.params.freq_base);
}

float gemma_q_scale(const inf_model_hparams *hp, uint32_t layers_27b)
{
    return hp->n_layer == layers_27b ? 1.0f / sqrtf((float)(hp->n_embd / hp->n_head))
                                     : 1.0f / sqrtf((float)hp->n_embd_head);
}

inf_tensor *gemma_build_layer(graph_builder *b, int il, inf_tensor *x)
{
    const inf_model *m = b->model;
    const bool swa = model_layer_is_swa(m, (uint32_t)il);
    const decoder_options opt = {
        .rope = swa ? &m->swa.rope : &m->rope,
        .q_scale = m->gemma.q_scale,
        .attn = {1.0f, m->gemma.attn_softcap, swa ? (int32_t)m->hparams.n_swa : 0},
        .ffn = FFN_GELU,
    };
    return block_decoder_layer(b, il, x, &opt);
}

inf_tensor *gemma_scale_embedding(graph_builder *b, inf_tensor *x)
{
    return inf_scale(b->ctx, x, sqrtf((float)b->hp->n_embd));
}

inf_tensor *gemma_cap_logits(graph_builder *b, inf_tensor *logits)
{
    const float cap = b->model->gemma.final_softcap;
    return cap > 0 ? inf_softcap(b->ctx, logits, cap) : logits;
}
