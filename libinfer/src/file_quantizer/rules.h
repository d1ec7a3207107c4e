/* rules.h - the per-tensor type rules of the file quantizer: rules.c (options, overrides,
 * fallbacks) and rules_mix.c (the mixture rules of each file type); not public. */
#ifndef INF_QUANTIZE_RULES_H
#define INF_QUANTIZE_RULES_H

#include <ggtk/inf_quantize_file.h>

#include <regex.h>

/* What the mixture rules need to know about the model, read once from its metadata. */
typedef struct quantize_model {
    bool falcon;          /* general.architecture is "falcon" */
    bool is_70b;          /* llama.cpp classifies the model as 70B (rules_mix.c) */
    uint64_t n_layer;     /* {arch}.block_count */
    uint64_t n_expert;    /* {arch}.expert_count, 0 without */
    uint64_t n_gqa;       /* n_head / n_head_kv of the first layer, 0 when n_head_kv is 0 */
    int n_attention_wv;   /* attn_v-like tensors (attn_v, attn_qkv, attn_kv_b) in the file */
} quantize_model;

/* The options with their --tensor-type patterns compiled, the model, and the counters that the
 * mixture rules advance as tensors are chosen (in llama-quantize's order: quantize_tensor_order). */
typedef struct quantize_rules {
    const inf_quantize_options *options;
    ggtk_tensor_type base_type; /* the file type's tensor type */
    regex_t *patterns;          /* one per options->tensor_rules entry */
    size_t n_patterns;
    bool tied_embeddings;       /* no output.weight: token_embd.weight doubles as the output */
    /* An importance matrix is given (options->imatrix); the Q4_0/Q5_0 ffn_down rule depends on
     * it. */
    bool has_imatrix;
    quantize_model model;
    int i_attention_wv;         /* attn_v-like tensors chosen so far by the mixture rules */
    int i_ffn_down;             /* ffn_down tensors chosen so far by the mixture rules */
} quantize_rules;

/* A decision: the type before any fallback, why, and for rule-based reasons which rule. */
typedef struct quantize_choice {
    ggtk_tensor_type type;
    inf_quantize_reason reason;
    const char *rule;
} quantize_choice;

/* Validate `options` (file type, override types), take the model facts (quantize_model_read() for
 * a file; the HF converter fills them from config.json) and compile the patterns.
 * `tied_embeddings`: the model has no output.weight. Errors: USAGE with a message naming the bad
 * option, NOMEM. Free with quantize_rules_free(). */
ggtk_status quantize_rules_init(quantize_rules *rules, const quantize_model *model,
                                bool tied_embeddings, const inf_quantize_options *options,
                                ggtk_error *err);
void quantize_rules_free(quantize_rules *rules);

/* True when llama-quantize would convert this tensor at all (a weight matrix, not a norm, ...). */
bool quantize_tensor_is_convertible(const ggtk_tensor_info *info);

/* output.weight; token_embd.weight or per_layer_token_embd.weight. */
bool quantize_name_is_output(const char *name);
bool quantize_name_is_token_embd(const char *name);

/* The layer number of a "blk.N." name, or -1. */
int quantize_tensor_layer(const char *name);

/* The order in which llama-quantize visits tensors (by layer number, names without one first,
 * then by name), which is the order its counters advance in: n indices into the file's tensors.
 * NULL when out of memory; free() it. */
int64_t *quantize_tensor_order(const ggtk_split *input);
/* The same order for `n` tensor names. */
int64_t *quantize_name_order(const char *const *names, int64_t n);

/* The type the rules give `info` before any fallback. Call it for every tensor in
 * quantize_tensor_order(): the mixture rules count attn_v and ffn_down tensors.
 * Errors: USAGE when a MoE model's ffn tensor has no usable blk.N. layer number. */
ggtk_status quantize_rules_choose(quantize_rules *rules, const ggtk_tensor_info *info,
                                  quantize_choice *choice, ggtk_error *err);

/* The mixture rules of rules_mix.c for a convertible tensor that no option or --tensor-type rule
 * decided, in a quantized file type that is not pure. Updates `choice` when a rule applies. */
ggtk_status quantize_mix_choose(quantize_rules *rules, const ggtk_tensor_info *info,
                                quantize_choice *choice, ggtk_error *err);

/* Read the model facts the mixture rules need from a file's metadata and tensor names. */
void quantize_model_read(quantize_model *model, const ggtk_split *input);

/* The same facts from their values, for a model that is not a GGUF file yet (the HF converter):
 * init from the architecture's hyper-parameters, then count each tensor name once. */
void quantize_model_init(quantize_model *model, const char *arch, uint64_t n_layer,
                         uint64_t n_expert, uint64_t n_head, uint64_t n_head_kv);
void quantize_model_count_tensor(quantize_model *model, const char *name);

/* `wanted` when rows of `ncols` elements split into its blocks, else the type llama.cpp falls
 * back to (its table for K/IQ types, F16 otherwise). */
ggtk_tensor_type quantize_fallback_type(ggtk_tensor_type wanted, uint64_t ncols);

/* True when rows of `ncols` elements split into blocks of `type`. */
bool quantize_row_fits(ggtk_tensor_type type, uint64_t ncols);

/* The tensor type llama-quantize gives weights in files of `file_type` (gguf_util.h's table);
 * only for file types that pass inf_quantize_file_type_supported(). */
ggtk_tensor_type quantize_file_type_tensor_type(uint32_t file_type);

#endif
