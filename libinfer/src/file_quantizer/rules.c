/* rules.c - which type each tensor of a model gets: the options, --tensor-type rules and
 * fallbacks of llama.cpp's llama-quantize (facts read from its src/llama-quant.cpp), so that a file
 * we write has the same tensor types as one it writes. The mixture rules of each file type are in
 * rules_mix.c. */
#include "quantize_internal.h"
#include "rules.h"

#include <ggtk/gguf_util.h>

#include <stdlib.h>
#include <string.h>

bool inf_quantize_tensor_type_supported(ggtk_tensor_type type)
{
    const ggtk_tensor_type_info *info = ggtk_tensor_type_info_get(type);
    if (!info)
        return false;
    /* ggml's quantize_chunk has no Q8_1/Q8_K path: they exist only for matmul activations. */
    switch (type) {
    case GGTK_TENSOR_Q8_1: case GGTK_TENSOR_Q8_K: case GGTK_TENSOR_I8: case GGTK_TENSOR_I16:
    case GGTK_TENSOR_I32: case GGTK_TENSOR_I64: case GGTK_TENSOR_F64:
        return false;
    default:
        return true;
    }
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

bool quantize_name_is_token_embd(const char *name)
{
    return strcmp(name, "token_embd.weight") == 0 || strcmp(name, "per_layer_token_embd.weight") == 0;
}

bool quantize_name_is_output(const char *name) { return strcmp(name, "output.weight") == 0; }

int quantize_tensor_layer(const char *name)
{
    if (strncmp(name, "blk.", 4) != 0)
        return -1;
    char *end = NULL;
    long layer = strtol(name + 4, &end, 10);
    if (end == name + 4 || layer < 0 || layer > INT32_MAX)
        return -1;
    return (int)layer;
}

/* A tensor's place in llama-quantize's order: by layer number (-1 for names without one), then
 * by name. */
typedef struct order_key {
    int layer;
    const char *name;
    int64_t index;
} order_key;

static int compare_order(const void *pa, const void *pb)
{
    const order_key *a = pa, *b = pb;
    if (a->layer != b->layer)
        return a->layer < b->layer ? -1 : 1;
    return strcmp(a->name, b->name);
}

int64_t *quantize_name_order(const char *const *names, int64_t n_names)
{
    size_t n = (size_t)n_names;
    order_key *keys = malloc((n ? n : 1) * sizeof *keys);
    int64_t *order = malloc((n ? n : 1) * sizeof *order);
    if (!keys || !order) {
        free(keys);
        free(order);
        return NULL;
    }
    for (size_t i = 0; i < n; i++)
        keys[i] = (order_key){quantize_tensor_layer(names[i]), names[i], (int64_t)i};
    qsort(keys, n, sizeof *keys, compare_order);
    for (size_t i = 0; i < n; i++)
        order[i] = keys[i].index;
    free(keys);
    return order;
}

int64_t *quantize_tensor_order(const ggtk_split *input)
{
    int64_t n = ggtk_split_tensor_count(input);
    const char **names = malloc((n ? (size_t)n : 1) * sizeof *names);
    if (!names)
        return NULL;
    for (int64_t i = 0; i < n; i++)
        names[i] = ggtk_split_tensor(input, i, NULL)->name;
    int64_t *order = quantize_name_order(names, n);
    free(names);
    return order;
}

bool quantize_row_fits(ggtk_tensor_type type, uint64_t ncols)
{
    const ggtk_tensor_type_info *info = ggtk_tensor_type_info_get(type);
    return info && ncols % info->block_size == 0;
}

ggtk_tensor_type quantize_fallback_type(ggtk_tensor_type wanted, uint64_t ncols)
{
    if (quantize_row_fits(wanted, ncols))
        return wanted;
    ggtk_tensor_type type = GGTK_TENSOR_F16;
    for (size_t i = 0; i < sizeof fallbacks / sizeof fallbacks[0]; i++)
        if (fallbacks[i].from == wanted)
            type = fallbacks[i].to;
    return quantize_row_fits(type, ncols) ? type : GGTK_TENSOR_F16;
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

ggtk_status quantize_rules_init(quantize_rules *rules, const quantize_model *model,
                                bool tied_embeddings, const inf_quantize_options *options,
                                ggtk_error *err)
{
    memset(rules, 0, sizeof *rules);
    rules->options = options;
    rules->has_imatrix = options->imatrix != NULL;
    rules->tied_embeddings = tied_embeddings;
    if (!inf_quantize_file_type_supported(options->file_type)) {
        const char *name = inf_quantize_file_type_name(options->file_type);
        if (name)
            return ggtk_error_set(err, GGTK_ERR_USAGE, GGTK_NO_OFFSET,
                                  "file type %s: its per-tensor rules are not implemented", name);
        return ggtk_error_set(err, GGTK_ERR_USAGE, GGTK_NO_OFFSET,
                              "file type %u is not one llama-quantize writes",
                              (unsigned)options->file_type);
    }
    rules->base_type = quantize_file_type_tensor_type(options->file_type);
    rules->model = *model;
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

static void choose(quantize_choice *choice, ggtk_tensor_type type, inf_quantize_reason reason)
{
    *choice = (quantize_choice){type, reason, NULL};
}

ggtk_status quantize_rules_choose(quantize_rules *rules, const ggtk_tensor_info *info,
                                  quantize_choice *choice, ggtk_error *err)
{
    const inf_quantize_options *opt = rules->options;
    choose(choice, info->type, INF_QUANTIZE_REASON_KEPT);
    if (!quantize_tensor_is_convertible(info))
        return GGTK_OK;
    if (opt->embd_type >= 0 && quantize_name_is_token_embd(info->name)) {
        choose(choice, (ggtk_tensor_type)opt->embd_type, INF_QUANTIZE_REASON_EMBD_OPTION);
        return GGTK_OK;
    }
    if (opt->output_type >= 0 && quantize_name_is_output(info->name)) {
        choose(choice, (ggtk_tensor_type)opt->output_type, INF_QUANTIZE_REASON_OUTPUT_OPTION);
        return GGTK_OK;
    }
    choose(choice, rules->base_type, INF_QUANTIZE_REASON_FILE_TYPE);
    if (!ggtk_tensor_type_info_get(rules->base_type)->quantized)
        return GGTK_OK; /* F32/F16/BF16 files: no rules apply */
    int rule = matching_rule(rules, info->name);
    if (rule >= 0) {
        choose(choice, opt->tensor_rules[rule].type, INF_QUANTIZE_REASON_TENSOR_RULE);
        return GGTK_OK;
    }
    if (opt->pure)
        return GGTK_OK;
    if (opt->output_type >= 0 && rules->tied_embeddings &&
        quantize_name_is_token_embd(info->name)) { /* tied embeddings follow --output-type */
        choose(choice, (ggtk_tensor_type)opt->output_type, INF_QUANTIZE_REASON_OUTPUT_OPTION);
        return GGTK_OK;
    }
    return quantize_mix_choose(rules, info, choice, err);
}
