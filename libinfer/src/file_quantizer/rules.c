/* rules.c - which type each tensor of a model gets. These are the rules of llama.cpp's
 * llama-quantize for the simple file types (facts read from its src/llama-quant.cpp), so that a
 * file we write has the same tensor types as one it writes. */
#include "quantize_internal.h"
#include "rules.h"

#include <ggtk/gguf_util.h>
#include <ggtk/inf_quant.h>

#include <stdlib.h>
#include <string.h>

/* The llama.cpp LLAMA_FTYPE value of a file whose weights are all `type`: the row of libgguf's
 * file-type table (gguf_util.h) that names `type` as its main tensor type, or -1 when none does. */
int inf_quantize_llama_ftype(ggtk_tensor_type type)
{
    uint32_t code = ggtk_file_type_guess(type);
    const ggtk_file_type_info *info = ggtk_file_type_info_get(code);
    return info && info->guessed_from == (int)type ? (int)code : -1;
}

bool inf_quantize_file_type_supported(ggtk_tensor_type type)
{
    return inf_quantize_llama_ftype(type) >= 0 && inf_type_can_quantize(type);
}

bool inf_quantize_tensor_type_supported(ggtk_tensor_type type)
{
    /* ggml's quantize_chunk has no Q8_1/Q8_K path: they exist only for matmul activations. */
    return type != GGTK_TENSOR_Q8_1 && type != GGTK_TENSOR_Q8_K && inf_type_can_quantize(type);
}

/* Weights llama-quantize never converts although they are matrices: norms, expert routers and
 * small or position-like tensors of various architectures (matched anywhere in the name). */
static const char *const kept_substrings[] = {
    "_norm.weight", "ffn_gate_inp.weight", "ffn_gate_tid2eid.weight", "altup", "laurel",
    "per_layer_model_proj", "ssm_conv1d", "shortconv.conv.weight", "indexer.k_proj.weight",
    "indexer.q_proj.weight", "time_mix_first.weight", "time_mix_w0.weight", "time_mix_w1.weight",
    "time_mix_w2.weight", "time_mix_v0.weight", "time_mix_v1.weight", "time_mix_v2.weight",
    "time_mix_a0.weight", "time_mix_a1.weight", "time_mix_a2.weight", "time_mix_g1.weight",
    "time_mix_g2.weight", "time_mix_decay_w1.weight", "time_mix_decay_w2.weight",
    "time_mix_lerp_fused.weight", "attn_rel_b.weight", ".position_embd", "sam.pos_embd",
    "sam.neck.", "sam.net_", ".rel_pos", ".patch_embd", ".patch_merger", "a.rvq.codebook",
    "mm.a.code_embd",
};
/* ... and these exact names (BERT position embeddings and token types). */
static const char *const kept_names[] = {"position_embd.weight", "token_types.weight"};

/* Where a K or IQ type does not fit a row, llama.cpp uses a 32-element type instead. */
static const struct {
    ggtk_tensor_type from, to;
} fallbacks[] = {
    {GGTK_TENSOR_IQ1_S, GGTK_TENSOR_IQ4_NL},   {GGTK_TENSOR_IQ1_M, GGTK_TENSOR_IQ4_NL},
    {GGTK_TENSOR_IQ2_XXS, GGTK_TENSOR_IQ4_NL}, {GGTK_TENSOR_IQ2_XS, GGTK_TENSOR_IQ4_NL},
    {GGTK_TENSOR_IQ2_S, GGTK_TENSOR_IQ4_NL},   {GGTK_TENSOR_IQ3_XXS, GGTK_TENSOR_IQ4_NL},
    {GGTK_TENSOR_IQ3_S, GGTK_TENSOR_IQ4_NL},   {GGTK_TENSOR_IQ4_XS, GGTK_TENSOR_IQ4_NL},
    {GGTK_TENSOR_Q2_0, GGTK_TENSOR_Q4_0},      {GGTK_TENSOR_Q2_K, GGTK_TENSOR_Q4_0},
    {GGTK_TENSOR_Q3_K, GGTK_TENSOR_Q4_0},      {GGTK_TENSOR_TQ1_0, GGTK_TENSOR_Q4_0},
    {GGTK_TENSOR_TQ2_0, GGTK_TENSOR_Q4_0},     {GGTK_TENSOR_Q4_K, GGTK_TENSOR_Q5_0},
    {GGTK_TENSOR_Q5_K, GGTK_TENSOR_Q5_1},      {GGTK_TENSOR_Q6_K, GGTK_TENSOR_Q8_0},
};

static bool ends_with(const char *text, const char *suffix)
{
    size_t n = strlen(text), m = strlen(suffix);
    return n >= m && memcmp(text + n - m, suffix, m) == 0;
}

/* Dimensions as ggml counts them: trailing dimensions of size 1 do not count. */
static uint32_t effective_dims(const ggtk_tensor_info *info)
{
    uint32_t dims = 1;
    for (uint32_t d = 1; d < info->n_dims; d++)
        if (info->ne[d] > 1)
            dims = d + 1;
    return dims;
}

bool quantize_tensor_is_convertible(const ggtk_tensor_info *info)
{
    if (effective_dims(info) < 2 || !ends_with(info->name, "weight"))
        return false;
    for (size_t i = 0; i < sizeof kept_substrings / sizeof kept_substrings[0]; i++)
        if (strstr(info->name, kept_substrings[i]))
            return false;
    for (size_t i = 0; i < sizeof kept_names / sizeof kept_names[0]; i++)
        if (strcmp(info->name, kept_names[i]) == 0)
            return false;
    return true;
}

static bool is_token_embd(const char *name)
{
    return strcmp(name, "token_embd.weight") == 0 || strcmp(name, "per_layer_token_embd.weight") == 0;
}

static bool is_output(const char *name) { return strcmp(name, "output.weight") == 0; }

static bool row_fits(ggtk_tensor_type type, uint64_t ncols)
{
    const ggtk_tensor_type_info *info = ggtk_tensor_type_info_get(type);
    return info && ncols % info->block_size == 0;
}

ggtk_tensor_type quantize_fallback_type(ggtk_tensor_type wanted, uint64_t ncols)
{
    if (row_fits(wanted, ncols))
        return wanted;
    ggtk_tensor_type type = GGTK_TENSOR_F16;
    for (size_t i = 0; i < sizeof fallbacks / sizeof fallbacks[0]; i++)
        if (fallbacks[i].from == wanted)
            type = fallbacks[i].to;
    return row_fits(type, ncols) ? type : GGTK_TENSOR_F16;
}

/* The type llama.cpp gives output.weight (and tied token embeddings) when not pure: Q6_K, or
 * Q8_0 when the file is Q8_0 or rows do not split into 256-element blocks. We cannot produce Q6_K
 * unless the kernels do, and use Q8_0 then. */
static ggtk_tensor_type output_rule_type(ggtk_tensor_type file_type, uint64_t ncols)
{
    if (file_type == GGTK_TENSOR_Q8_0 || !row_fits(file_type, ncols) ||
        !inf_type_can_quantize(GGTK_TENSOR_Q6_K))
        return GGTK_TENSOR_Q8_0;
    return GGTK_TENSOR_Q6_K;
}

static ggtk_status check_override_type(int type, const char *what,
                                               ggtk_error *err)
{
    if (type < 0 || inf_quantize_tensor_type_supported((ggtk_tensor_type)type))
        return GGTK_OK;
    return ggtk_error_set(err, GGTK_ERR_USAGE, GGTK_NO_OFFSET,
                          "%s: tensors cannot be written as %s", what,
                          quantize_type_name((ggtk_tensor_type)type));
}

ggtk_status quantize_rules_init(quantize_rules *rules, const ggtk_file *input,
                                        const inf_quantize_options *options,
                                        ggtk_error *err)
{
    memset(rules, 0, sizeof *rules);
    rules->options = options;
    rules->tied_embeddings = ggtk_find_tensor(input, "output.weight") < 0;
    if (!inf_quantize_file_type_supported(options->type))
        return ggtk_error_set(err, GGTK_ERR_USAGE, GGTK_NO_OFFSET, "file type %s is not supported",
                              quantize_type_name(options->type));
    ggtk_status status = check_override_type(options->output_type, "output type", err);
    if (status == GGTK_OK)
        status = check_override_type(options->embd_type, "token embedding type", err);
    for (size_t i = 0; status == GGTK_OK && i < options->n_tensor_rules; i++)
        status = check_override_type((int)options->tensor_rules[i].type,
                                     options->tensor_rules[i].pattern, err);
    if (status != GGTK_OK)
        return status;
    if (options->n_tensor_rules == 0)
        return GGTK_OK;
    rules->patterns = calloc(options->n_tensor_rules, sizeof *rules->patterns);
    if (!rules->patterns)
        return ggtk_error_set(err, GGTK_ERR_NOMEM, GGTK_NO_OFFSET, "out of memory");
    for (; rules->n_patterns < options->n_tensor_rules; rules->n_patterns++) {
        const char *pattern = options->tensor_rules[rules->n_patterns].pattern;
        /* llama.cpp lowercases the pattern; ignoring case matches the same names. */
        if (regcomp(&rules->patterns[rules->n_patterns], pattern,
                    REG_EXTENDED | REG_ICASE | REG_NOSUB) != 0) {
            quantize_rules_free(rules);
            return ggtk_error_set(err, GGTK_ERR_USAGE, GGTK_NO_OFFSET,
                                  "tensor type rule '%s': not a valid regular expression", pattern);
        }
    }
    return GGTK_OK;
}

void quantize_rules_free(quantize_rules *rules)
{
    for (size_t i = 0; i < rules->n_patterns; i++)
        regfree(&rules->patterns[i]);
    free(rules->patterns);
    rules->patterns = NULL;
    rules->n_patterns = 0;
}

/* The first --tensor-type rule matching `name`, or -1. */
static int matching_rule(const quantize_rules *rules, const char *name)
{
    for (size_t i = 0; i < rules->n_patterns; i++)
        if (regexec(&rules->patterns[i], name, 0, NULL, 0) == 0)
            return (int)i;
    return -1;
}

ggtk_tensor_type quantize_rules_choose(const quantize_rules *rules, const ggtk_tensor_info *info,
                                       inf_quantize_reason *reason)
{
    const inf_quantize_options *opt = rules->options;
    *reason = INF_QUANTIZE_REASON_KEPT;
    if (!quantize_tensor_is_convertible(info))
        return info->type;
    if (opt->embd_type >= 0 && is_token_embd(info->name)) {
        *reason = INF_QUANTIZE_REASON_EMBD_OPTION;
        return (ggtk_tensor_type)opt->embd_type;
    }
    if (opt->output_type >= 0 && is_output(info->name)) {
        *reason = INF_QUANTIZE_REASON_OUTPUT_OPTION;
        return (ggtk_tensor_type)opt->output_type;
    }
    *reason = INF_QUANTIZE_REASON_FILE_TYPE;
    const ggtk_tensor_type_info *file_type = ggtk_tensor_type_info_get(opt->type);
    if (!file_type->quantized) /* F32/F16/BF16 files: no mixture rules apply */
        return opt->type;
    int rule = matching_rule(rules, info->name);
    if (rule >= 0) {
        *reason = INF_QUANTIZE_REASON_TENSOR_RULE;
        return opt->tensor_rules[rule].type;
    }
    if (opt->pure)
        return opt->type;
    if (is_output(info->name) || (rules->tied_embeddings && is_token_embd(info->name))) {
        if (opt->output_type >= 0) { /* tied embeddings follow --output-type */
            *reason = INF_QUANTIZE_REASON_OUTPUT_OPTION;
            return (ggtk_tensor_type)opt->output_type;
        }
        *reason = INF_QUANTIZE_REASON_OUTPUT_RULE;
        return output_rule_type(opt->type, info->ne[0]);
    }
    return opt->type;
}
