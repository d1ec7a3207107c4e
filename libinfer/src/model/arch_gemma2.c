/* arch_gemma2.c - "gemma2" (Gemma 2), as llama.cpp builds it: the Gemma block (arch_gemma.c)
 * with soft-capped attention scores, every other layer a sliding-window one (window 4096 unless
 * the file says otherwise; their rope base rope.freq_base_swa, else the global one), and
 * soft-capped logits. The output projection is always the token embedding: a gemma2 file with
 * output.weight is refused, as llama.cpp refuses a tensor it does not load. */
#include <stdio.h>

#include "arch_gemma.h"

static const tensor_spec MODEL_TENSORS[] = {
    {"token_embd.weight", MODEL_SLOT(tok_embd), DIM_EMBD, DIM_VOCAB, false, NULL},
    {"output_norm.weight", MODEL_SLOT(output_norm), DIM_EMBD, DIM_ONE, false, NULL},
};

static const tensor_spec LAYER_TENSORS[] = {GEMMA_LAYER_TENSORS};

/* llama.cpp's gemma2 defaults: window 4096 in every other layer, scores capped at 50, logits at
 * 30. A window of 0 would hide every position (llama.cpp's softmax then gives NaN): refused. */
static bool read_hparams(const hparams_reader *r, inf_model *model)
{
    inf_model_hparams *hp = &model->hparams;
    char key[128];
    snprintf(key, sizeof key, "%s.attention.sliding_window", r->arch);
    if (!ggtk_get(r->file, key))
        hp->n_swa = 4096;
    else if (hp->n_swa == 0)
        return hp_refuse(r, GGTK_ERR_INVALID, "attention.sliding_window",
                         "%s is 0, expected a window of at least 1 position", key);
    model->gemma.attn_softcap = 50.0f;
    model->gemma.final_softcap = 30.0f;
    model->gemma.q_scale = gemma_q_scale(hp, 46);
    return gemma_read_swa(r, model, 2, hp->rope_freq_base, hp->rope_freq_scale) &&
           hp_float(r, "attn_logit_softcapping", false, &model->gemma.attn_softcap) &&
           hp_float(r, "final_logit_softcapping", false, &model->gemma.final_softcap);
}

const model_arch MODEL_ARCH_GEMMA2 = {GEMMA_ARCH("gemma2", read_hparams)};
