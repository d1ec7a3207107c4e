/* tensor_names.c - Hugging Face tensor names to GGUF names and back, for the families of
 * hf_families.c (the names of gguf-py's tensor_mapping.py for these architectures). */
#include "convert_internal.h"

#include <stdio.h>
#include <string.h>

/* A tensor name pair; `families` limits it to families with one of those flags (0: all). */
typedef struct name_rule {
    const char *hf;
    const char *gguf;
    unsigned only;    /* the family must have one of these flags (0: every family) */
    unsigned except;  /* the family must have none of these flags */
} name_rule;

/* Whole-model tensors. */
static const name_rule model_names[] = {
    {"model.embed_tokens.weight", "token_embd.weight", 0, 0},
    {"model.norm.weight", "output_norm.weight", 0, 0},
    {"lm_head.weight", "output.weight", 0, FAMILY_SKIP_LM_HEAD},
};

/* Tensors of layer N: "model.layers.N." + hf <-> "blk.N." + gguf. */
static const name_rule layer_names[] = {
    {"input_layernorm.weight", "attn_norm.weight", 0, 0},
    {"self_attn.q_proj.weight", "attn_q.weight", 0, FAMILY_FUSED_PHI3},
    {"self_attn.q_proj.bias", "attn_q.bias", 0, FAMILY_FUSED_PHI3},
    {"self_attn.k_proj.weight", "attn_k.weight", 0, FAMILY_FUSED_PHI3},
    {"self_attn.k_proj.bias", "attn_k.bias", 0, FAMILY_FUSED_PHI3},
    {"self_attn.v_proj.weight", "attn_v.weight", 0, FAMILY_FUSED_PHI3},
    {"self_attn.v_proj.bias", "attn_v.bias", 0, FAMILY_FUSED_PHI3},
    {"self_attn.qkv_proj.weight", "attn_qkv.weight", FAMILY_FUSED_PHI3, 0},
    {"self_attn.o_proj.weight", "attn_output.weight", 0, 0},
    {"self_attn.o_proj.bias", "attn_output.bias", 0, 0},
    {"self_attn.q_norm.weight", "attn_q_norm.weight", FAMILY_QK_NORM, 0},
    {"self_attn.k_norm.weight", "attn_k_norm.weight", FAMILY_QK_NORM, 0},
    {"post_attention_layernorm.weight", "ffn_norm.weight", 0, FAMILY_GEMMA_NORMS},
    {"post_attention_layernorm.weight", "post_attention_norm.weight", FAMILY_GEMMA_NORMS, 0},
    {"pre_feedforward_layernorm.weight", "ffn_norm.weight", FAMILY_GEMMA_NORMS, 0},
    {"post_feedforward_layernorm.weight", "post_ffw_norm.weight", FAMILY_GEMMA_NORMS, 0},
    {"mlp.gate_proj.weight", "ffn_gate.weight", 0, FAMILY_FUSED_PHI3},
    {"mlp.up_proj.weight", "ffn_up.weight", 0, FAMILY_FUSED_PHI3},
    {"mlp.gate_up_proj.weight", "ffn_up.weight", FAMILY_FUSED_PHI3, 0},
    {"mlp.down_proj.weight", "ffn_down.weight", 0, 0},
};

static bool applies(const name_rule *r, const hf_family *family)
{
    return (!r->only || (family->flags & r->only)) && !(family->flags & r->except);
}

/* "PREFIXN.rest": the layer number N and where rest starts, or -1. */
static long layer_of(const char *name, const char *prefix, const char **rest)
{
    size_t n = strlen(prefix);
    if (strncmp(name, prefix, n) != 0)
        return -1;
    const char *p = name + n;
    long layer = 0;
    if (*p < '0' || *p > '9' || (*p == '0' && p[1] != '.'))
        return -1;
    for (; *p >= '0' && *p <= '9'; p++) {
        layer = layer * 10 + (*p - '0');
        if (layer > 1000000)
            return -1;
    }
    if (*p != '.')
        return -1;
    *rest = p + 1;
    return layer;
}

static bool ends_with(const char *s, const char *suffix)
{
    size_t n = strlen(s), m = strlen(suffix);
    return n >= m && strcmp(s + n - m, suffix) == 0;
}

int tensor_name_to_gguf(const hf_family *family, const char *hf_name, char out[64])
{
    if (ends_with(hf_name, ".rotary_emb.inv_freq") || ends_with(hf_name, ".attention.masked_bias") ||
        ends_with(hf_name, ".attention.bias"))
        return 0;
    if ((family->flags & FAMILY_SKIP_LM_HEAD) && strcmp(hf_name, "lm_head.weight") == 0)
        return 0;
    for (size_t i = 0; i < sizeof model_names / sizeof model_names[0]; i++)
        if (applies(&model_names[i], family) && strcmp(model_names[i].hf, hf_name) == 0) {
            snprintf(out, 64, "%s", model_names[i].gguf);
            return 1;
        }
    const char *rest = NULL;
    long layer = layer_of(hf_name, "model.layers.", &rest);
    if (layer < 0)
        return -1;
    for (size_t i = 0; i < sizeof layer_names / sizeof layer_names[0]; i++)
        if (applies(&layer_names[i], family) && strcmp(layer_names[i].hf, rest) == 0) {
            snprintf(out, 64, "blk.%ld.%s", layer, layer_names[i].gguf);
            return 1;
        }
    return -1;
}

bool tensor_name_to_hf(const hf_family *family, const char *gguf_name, char out[128])
{
    for (size_t i = 0; i < sizeof model_names / sizeof model_names[0]; i++)
        if (strcmp(model_names[i].gguf, gguf_name) == 0) {
            snprintf(out, 128, "%s", model_names[i].hf); /* output.weight even for Gemma 2 */
            return true;
        }
    const char *rest = NULL;
    long layer = layer_of(gguf_name, "blk.", &rest);
    if (layer < 0)
        return false;
    for (size_t i = 0; i < sizeof layer_names / sizeof layer_names[0]; i++)
        if (applies(&layer_names[i], family) && strcmp(layer_names[i].gguf, rest) == 0) {
            snprintf(out, 128, "model.layers.%ld.%s", layer, layer_names[i].hf);
            return true;
        }
    return false;
}
