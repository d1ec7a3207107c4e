/* arch_gemma3.c - "gemma3" (Gemma 3 text decoder), as llama.cpp builds it: the Gemma block
 * (arch_gemma.c) with per-head q/k RMS norms; when the file gives attention.sliding_window > 0,
 * five of every six layers (attention.sliding_window_pattern) are sliding-window ones with their
 * own rope (base rope.freq_base_swa, default 10000, unscaled); logits soft-capped only when the
 * file gives final_logit_softcapping > 0. output.weight is optional (tied embeddings). */
#include <math.h>
#include <stdio.h>

#include "arch_gemma.h"

static const tensor_spec MODEL_TENSORS[] = {COMMON_MODEL_TENSORS};

static const tensor_spec LAYER_TENSORS[] = {
    GEMMA_LAYER_TENSORS,
    {"attn_q_norm.weight", LAYER_SLOT(attn_q_norm), DIM_HEAD, DIM_ONE, false, NULL},
    {"attn_k_norm.weight", LAYER_SLOT(attn_k_norm), DIM_HEAD, DIM_ONE, false, NULL},
};

/* final_logit_softcapping: 0 (or absent) means none, as in llama.cpp. */
static bool read_final_softcap(const hparams_reader *r, float *cap)
{
    char key[128];
    snprintf(key, sizeof key, "%s.final_logit_softcapping", r->arch);
    double value = 0;
    ggtk_status st = ggtk_get_float(r->file, key, &value);
    if (st != GGTK_OK && st != GGTK_ERR_NOT_FOUND)
        return hp_refuse(r, GGTK_ERR_TYPE, "final_logit_softcapping",
                         "non-numeric metadata key %s (expected a float)", key);
    if (!(value >= 0) || !isfinite(value))
        return hp_refuse(r, GGTK_ERR_INVALID, "final_logit_softcapping",
                         "metadata key %s is %g, expected 0 (none) or a positive number", key,
                         value);
    *cap = (float)value;
    return true;
}

static bool read_hparams(const hparams_reader *r, inf_model *model)
{
    const inf_model_hparams *hp = &model->hparams;
    model->gemma.q_scale = gemma_q_scale(hp, 62);
    if (hp->n_swa > 0 && !gemma_read_swa(r, model, 6, 10000.0f, 1.0f))
        return false;
    return read_final_softcap(r, &model->gemma.final_softcap);
}

const model_arch MODEL_ARCH_GEMMA3 = {GEMMA_ARCH("gemma3", read_hparams)};
