/* rules.h - the per-tensor type rules of the file quantizer (rules.c); not public. */
#ifndef INF_QUANTIZE_RULES_H
#define INF_QUANTIZE_RULES_H

#include <ggtk/inf_quantize_file.h>

#include <regex.h>

/* The options with their --tensor-type patterns compiled, and what the rules need to know
 * about the model as a whole. */
typedef struct quantize_rules {
    const inf_quantize_options *options;
    regex_t *patterns;     /* one per options->tensor_rules entry */
    size_t n_patterns;
    bool tied_embeddings;  /* no output.weight: token_embd.weight doubles as the output */
} quantize_rules;

/* Validate `options` (file type, override types) and compile the patterns.
 * Errors: USAGE with a message naming the bad option, NOMEM. Free with quantize_rules_free(). */
ggtk_status quantize_rules_init(quantize_rules *rules, const ggtk_file *input,
                                        const inf_quantize_options *options,
                                        ggtk_error *err);
void quantize_rules_free(quantize_rules *rules);

/* True when llama-quantize would convert this tensor at all (a weight matrix, not a norm, ...). */
bool quantize_tensor_is_convertible(const ggtk_tensor_info *info);

/* The type the rules give `info` before any fallback, and why. */
ggtk_tensor_type quantize_rules_choose(const quantize_rules *rules, const ggtk_tensor_info *info,
                                       inf_quantize_reason *reason);

/* `wanted` when rows of `ncols` elements split into its blocks, else the type llama.cpp falls
 * back to (its table for K/IQ types, F16 otherwise). */
ggtk_tensor_type quantize_fallback_type(ggtk_tensor_type wanted, uint64_t ncols);

#endif
