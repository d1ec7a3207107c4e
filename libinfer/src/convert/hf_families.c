/* hf_families.c - the one table of Hugging Face architectures the converters know: GGUF
 * architecture, what is done to the tensors, and which config.json values become which keys, in
 * the order llama.cpp's convert_hf_to_gguf.py writes them (TextModel.set_gguf_parameters and
 * each family's override, later keys replacing earlier ones in place). */
#include "convert_internal.h"

#include <string.h>

/* TextModel.set_gguf_parameters: the keys every family below starts from (Gemma 2 and Phi-3
 * write their own lists instead). */
#define TEXT_MODEL_KEYS                                                                            \
    {"block_count", CK_U32, CK_REQUIRED, 0, {"n_layers", "num_hidden_layers", "n_layer", "num_layers"}}, \
    {"context_length", CK_U32, 0, 0, {"max_position_embeddings", "n_ctx", "n_positions",           \
                                      "max_length", "max_sequence_length", "model_max_length"}},  \
    {"embedding_length", CK_U32, 0, 0, {"hidden_size", "n_embd", "dim"}},                         \
    {"feed_forward_length", CK_U32, 0, 0, {"prefix_dense_intermediate_size",                      \
                                           "dense_intermediate_size", "intermediate_size",        \
                                           "n_inner", "hidden_dim"}},                             \
    {"attention.head_count", CK_U32, 0, 0, {"num_attention_heads", "n_head", "n_heads"}},         \
    {"attention.head_count_kv", CK_U32, 0, 0, {"num_key_value_heads", "n_kv_heads"}},             \
    {"rope.scaling.type", CK_ROPE_SCALING, 0, 0, {NULL}},                                         \
    {"rope.freq_base", CK_ROPE_THETA, 0, 0, {"global_rope_theta", "rope_global_theta",            \
                                             "rope_theta_global", "rope_theta", "rotary_emb_base"}}, \
    {"rope.freq_base_swa", CK_ROPE_THETA_SWA, 0, 0, {"local_rope_theta", "rope_local_theta",      \
                                                     "rope_theta_local", "swa_rope_theta",        \
                                                     "rope_local_base_freq"}},                    \
    {"attention.layer_norm_rms_epsilon", CK_F32, 0, 0, {"rms_norm_eps", "norm_eps"}},             \
    {"attention.layer_norm_epsilon", CK_F32, 0, 0, {"layer_norm_eps", "layer_norm_epsilon",       \
                                                    "norm_epsilon"}},                             \
    {"expert_count", CK_U32, 0, 0, {"num_local_experts", "num_experts", "n_routed_experts"}},     \
    {"expert_used_count", CK_U32, 0, 0, {"num_experts_per_tok", "num_experts_per_token",          \
                                         "top_k_experts"}},                                       \
    {"attention.key_length", CK_U32, 0, 0, {"head_dim"}},                                         \
    {"attention.value_length", CK_U32, 0, 0, {"head_dim"}},                                       \
    {"general.file_type", CK_FILE_TYPE, 0, 0, {NULL}}

/* LlamaModel (Llama, Mistral): the text keys, then the vocabulary size and rotary dimensions. */
static const config_key llama_keys[] = {
    TEXT_MODEL_KEYS,
    {"vocab_size", CK_U32, CK_REQUIRED, 0, {"vocab_size"}},
    {"rope.dimension_count", CK_ROPE_DIM, 0, 0, {NULL}},
};

/* Qwen2Model, Qwen3Model: the text keys alone. */
static const config_key qwen_keys[] = {TEXT_MODEL_KEYS};

static const config_key gemma2_keys[] = {
    {"context_length", CK_U32, CK_REQUIRED, 0, {"max_position_embeddings"}},
    {"embedding_length", CK_U32, CK_REQUIRED, 0, {"hidden_size"}},
    {"block_count", CK_U32, CK_REQUIRED, 0, {"n_layers", "num_hidden_layers", "n_layer", "num_layers"}},
    {"feed_forward_length", CK_U32, CK_REQUIRED, 0, {"intermediate_size"}},
    {"attention.head_count", CK_U32, CK_REQUIRED, 0, {"num_attention_heads"}},
    {"attention.head_count_kv", CK_U32, CK_REQUIRED, 0, {"num_key_value_heads", "num_attention_heads"}},
    {"attention.layer_norm_rms_epsilon", CK_F32, CK_REQUIRED, 0, {"rms_norm_eps"}},
    {"attention.key_length", CK_U32, CK_REQUIRED, 0, {"head_dim"}},
    {"attention.value_length", CK_U32, CK_REQUIRED, 0, {"head_dim"}},
    {"general.file_type", CK_FILE_TYPE, 0, 0, {NULL}},
    {"attn_logit_softcapping", CK_F32, CK_REQUIRED, 0, {"attn_logit_softcapping"}},
    {"final_logit_softcapping", CK_F32, CK_REQUIRED, 0, {"final_logit_softcapping"}},
    {"attention.sliding_window", CK_U32, CK_REQUIRED, 0, {"sliding_window"}},
};

/* Gemma3Model: the text keys, then its own defaults replacing them in place. */
static const config_key gemma3_keys[] = {
    TEXT_MODEL_KEYS,
    {"context_length", CK_U32, CK_DEFAULT, 131072, {"max_position_embeddings"}},
    {"attention.head_count", CK_U32, CK_DEFAULT, 8, {"num_attention_heads"}},
    {"attention.layer_norm_rms_epsilon", CK_F32, CK_DEFAULT, 1e-6, {"rms_norm_eps"}},
    {"attention.key_length", CK_U32, CK_DEFAULT, 256, {"head_dim"}},
    {"attention.value_length", CK_U32, CK_DEFAULT, 256, {"head_dim"}},
    {"rope.freq_base", CK_ROPE_THETA, CK_DEFAULT, 1000000.0, {NULL}},
    {"final_logit_softcapping", CK_F32_TRUTHY, 0, 0, {"final_logit_softcapping"}},
    {"attention.sliding_window", CK_SLIDING_WINDOW_UNLESS_PATTERN_1, CK_REQUIRED, 0, {"sliding_window"}},
    {"attention.head_count_kv", CK_U32, CK_DEFAULT, 4, {"num_key_value_heads"}},
};

static const config_key phi3_keys[] = {
    {"context_length", CK_U32, CK_REQUIRED, 0, {"n_positions", "max_position_embeddings"}},
    {"rope.scaling.original_context_length", CK_U32, CK_REQUIRED, 0, {"original_max_position_embeddings"}},
    {"embedding_length", CK_U32, CK_REQUIRED, 0, {"hidden_size", "n_embd"}},
    {"feed_forward_length", CK_U32, CK_REQUIRED, 0, {"intermediate_size"}},
    {"block_count", CK_U32, CK_REQUIRED, 0, {"n_layers", "num_hidden_layers", "n_layer", "num_layers"}},
    {"attention.head_count", CK_U32, CK_REQUIRED, 0, {"num_attention_heads", "n_head"}},
    {"attention.head_count_kv", CK_U32, CK_REQUIRED, 0, {"num_key_value_heads", "n_head_kv"}},
    {"attention.layer_norm_rms_epsilon", CK_F32, CK_REQUIRED, 0, {"rms_norm_eps"}},
    {"rope.dimension_count", CK_ROPE_DIM_PARTIAL, 0, 0, {NULL}},
    {"rope.freq_base", CK_ROPE_THETA, CK_REQUIRED, 0, {"rope_theta"}},
    {"general.file_type", CK_FILE_TYPE, 0, 0, {NULL}},
    {"attention.sliding_window", CK_U32, CK_NULL_ZERO, 0, {"sliding_window"}},
};

#define KEYS(list) list, sizeof list / sizeof list[0]

static const hf_family families[] = {
    {"LlamaForCausalLM", "llama", "llama", FAMILY_PERMUTE_QK, KEYS(llama_keys)},
    {"MistralForCausalLM", "llama", "mistral", FAMILY_PERMUTE_QK, KEYS(llama_keys)},
    {"Qwen2ForCausalLM", "qwen2", "qwen2", 0, KEYS(qwen_keys)},
    {"Qwen3ForCausalLM", "qwen3", "qwen3", FAMILY_QK_NORM, KEYS(qwen_keys)},
    {"Gemma2ForCausalLM", "gemma2", "gemma2",
     FAMILY_NORM_PLUS_ONE | FAMILY_SKIP_LM_HEAD | FAMILY_GEMMA_NORMS, KEYS(gemma2_keys)},
    {"Gemma3ForCausalLM", "gemma3", "gemma3_text",
     FAMILY_NORM_PLUS_ONE | FAMILY_TRIM_EMBEDDING | FAMILY_GEMMA_NORMS | FAMILY_QK_NORM,
     KEYS(gemma3_keys)},
    {"Phi3ForCausalLM", "phi3", "phi3", FAMILY_FUSED_PHI3, KEYS(phi3_keys)},
};

const hf_family *hf_family_by_hf_arch(const char *hf_arch)
{
    for (size_t i = 0; i < sizeof families / sizeof families[0]; i++)
        if (strcmp(families[i].hf_arch, hf_arch) == 0)
            return &families[i];
    return NULL;
}

/* The first row of a GGUF architecture is the one exported (llama -> LlamaForCausalLM). */
const hf_family *hf_family_by_gguf_arch(const char *gguf_arch)
{
    for (size_t i = 0; i < sizeof families / sizeof families[0]; i++)
        if (strcmp(families[i].gguf_arch, gguf_arch) == 0)
            return &families[i];
    return NULL;
}

const char *hf_family_names(void)
{
    return "LlamaForCausalLM, MistralForCausalLM, Qwen2ForCausalLM, Qwen3ForCausalLM, "
           "Gemma2ForCausalLM, Gemma3ForCausalLM, Phi3ForCausalLM";
}
