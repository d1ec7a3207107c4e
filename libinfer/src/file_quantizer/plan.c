/* plan.c - builds the plan of a file conversion: the new type and size of every tensor, the
 * warnings, and the output header (metadata edits and tensor infos) ready for the writer. */
#include "imatrix_use.h"
#include "quantize_internal.h"
#include "rules.h"

#include <ggtk/inf_quant.h>

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* llama.cpp's GGML_QNT_VERSION, written to general.quantization_version. */
enum { QUANTIZATION_VERSION = 2 };

inf_quantize_options inf_quantize_options_default(ggtk_file_type file_type)
{
    inf_quantize_options options = {.file_type = file_type, .output_type = -1, .embd_type = -1};
    return options;
}

const char *quantize_type_name(ggtk_tensor_type type)
{
    const ggtk_tensor_type_info *info = ggtk_tensor_type_info_get(type);
    return info ? info->name : "unknown";
}

const char *inf_quantize_reason_name(inf_quantize_reason reason)
{
    switch (reason) {
    case INF_QUANTIZE_REASON_KEPT: return "kept";
    case INF_QUANTIZE_REASON_FILE_TYPE: return "file type";
    case INF_QUANTIZE_REASON_OUTPUT_RULE: return "output rule";
    case INF_QUANTIZE_REASON_OUTPUT_OPTION: return "output type";
    case INF_QUANTIZE_REASON_EMBD_OPTION: return "embedding type";
    case INF_QUANTIZE_REASON_TENSOR_RULE: return "tensor rule";
    case INF_QUANTIZE_REASON_MIX_RULE: return "mix rule";
    }
    return "unknown";
}

static bool is_quantized(ggtk_tensor_type type)
{
    const ggtk_tensor_type_info *info = ggtk_tensor_type_info_get(type);
    return info && info->quantized;
}

ggtk_status quantize_plan_warn(inf_quantize_plan *plan, ggtk_error *err, const char *fmt, ...)
{
    char *line = NULL;
    va_list ap;
    va_start(ap, fmt);
    int n = vasprintf(&line, fmt, ap);
    va_end(ap);
    char **grown = n < 0 ? NULL : realloc(plan->warnings, (plan->n_warnings + 1) * sizeof *grown);
    if (!grown) {
        free(n < 0 ? NULL : line);
        return ggtk_error_set(err, GGTK_ERR_NOMEM, GGTK_NO_OFFSET, "out of memory");
    }
    plan->warnings = grown;
    plan->warnings[plan->n_warnings++] = line;
    return GGTK_OK;
}

/* Check that a tensor can go from its type to `entry->new_type` and fill its size. */
static ggtk_status check_conversion(const inf_quantize_plan *plan,
                                            inf_quantize_plan_tensor *entry,
                                            ggtk_error *err)
{
    const ggtk_tensor_info *info = entry->info;
    const char *path = ggtk_path(plan->input);
    if (entry->new_type == info->type) {
        entry->new_size = info->size;
        return GGTK_OK;
    }
    entry->requantize = is_quantized(info->type);
    if (entry->requantize && !plan->options.allow_requantize)
        return ggtk_error_set(err, GGTK_ERR_REQUANTIZE, GGTK_NO_OFFSET,
                              "%s: tensor '%s' is already quantized (%s): requantizing from %s is "
                              "disabled (allow it with --allow-requantize; quality is lower than "
                              "quantizing from f32/f16)",
                              path, info->name, quantize_type_name(info->type),
                              quantize_type_name(info->type));
    if (!inf_type_can_dequantize(info->type))
        return ggtk_error_set(err, GGTK_ERR_UNSUPPORTED, GGTK_NO_OFFSET,
                              "%s: tensor '%s': no kernel reads type %s", path, info->name,
                              quantize_type_name(info->type));
    if (!ggtk_tensor_type_bytes(entry->new_type, ggtk_tensor_elements(info), &entry->new_size))
        return ggtk_error_set(err, GGTK_ERR_UNSUPPORTED, GGTK_NO_OFFSET,
                              "%s: tensor '%s': size as %s does not fit 64 bits", path, info->name,
                              quantize_type_name(entry->new_type));
    return GGTK_OK;
}

/* Fail under no_fallback, else record the fallback of `entry` (fallback_warnings reports it). */
static ggtk_status note_fallback(inf_quantize_plan *plan, inf_quantize_plan_tensor *entry,
                                 ggtk_error *err)
{
    const ggtk_tensor_info *info = entry->info;
    if (plan->options.no_fallback)
        return ggtk_error_set(err, GGTK_ERR_USAGE, GGTK_NO_OFFSET,
                              "%s: tensor '%s': rows of %llu elements do not split into %s blocks "
                              "of %u, and fallbacks are disabled (--no-fallback)",
                              ggtk_path(plan->input), info->name, (unsigned long long)info->ne[0],
                              quantize_type_name(entry->wanted_type),
                              ggtk_tensor_type_info_get(entry->wanted_type)->block_size);
    entry->fallback = true;
    plan->n_fallback++;
    return GGTK_OK;
}

static bool same_fallback(const inf_quantize_plan_tensor *a, const inf_quantize_plan_tensor *b)
{
    return a->fallback && b->fallback && a->wanted_type == b->wanted_type &&
           a->new_type == b->new_type && a->info->ne[0] == b->info->ne[0];
}

/* One warning per kind of fallback (wanted type, new type, row length), with its tensor count
 * and first tensor: a model has many tensors of each shape. */
static ggtk_status fallback_warnings(inf_quantize_plan *plan, ggtk_error *err)
{
    ggtk_status status = GGTK_OK;
    for (int64_t i = 0; status == GGTK_OK && i < plan->n_tensors; i++) {
        const inf_quantize_plan_tensor *first = &plan->tensors[i];
        bool seen = !first->fallback;
        for (int64_t j = 0; !seen && j < i; j++)
            seen = same_fallback(&plan->tensors[j], first);
        if (seen)
            continue;
        int64_t count = 0;
        for (int64_t j = i; j < plan->n_tensors; j++)
            count += same_fallback(&plan->tensors[j], first);
        status = quantize_plan_warn(plan, err,
                             "rows of %llu elements do not split into %s blocks of %u: %lld "
                             "tensor%s back to %s (%s%s)",
                             (unsigned long long)first->info->ne[0],
                             quantize_type_name(first->wanted_type),
                             ggtk_tensor_type_info_get(first->wanted_type)->block_size,
                             (long long)count, count == 1 ? " falls" : "s fall",
                             quantize_type_name(first->new_type), first->info->name,
                             count == 1 ? "" : ", ...");
    }
    return status;
}

/* The fallback, checks and sizes of a tensor whose wanted type the rules have chosen. */
static ggtk_status plan_tensor(inf_quantize_plan *plan, inf_quantize_plan_tensor *entry,
                               ggtk_error *err)
{
    const ggtk_tensor_info *info = entry->info;
    entry->new_type = entry->wanted_type;
    if (entry->wanted_type != info->type)
        entry->new_type = quantize_fallback_type(entry->wanted_type, info->ne[0]);
    ggtk_status status = GGTK_OK;
    if (entry->new_type != entry->wanted_type)
        status = note_fallback(plan, entry, err);
    if (status == GGTK_OK)
        status = check_conversion(plan, entry, err);
    if (status != GGTK_OK)
        return status;
    if (entry->new_type != info->type) {
        plan->n_converted++;
        plan->n_requantized += entry->requantize;
    }
    plan->n_elements += ggtk_tensor_elements(info);
    plan->data_size_before += info->size;
    plan->data_size_after += entry->new_size;
    return GGTK_OK;
}

/* The rules' choice for every tensor, made in llama-quantize's order, which its counters follow. */
static ggtk_status choose_all(inf_quantize_plan *plan, quantize_rules *rules, ggtk_error *err)
{
    int64_t *order = quantize_tensor_order(plan->input_parts);
    if (!order)
        return ggtk_error_set(err, GGTK_ERR_NOMEM, GGTK_NO_OFFSET, "out of memory");
    ggtk_status status = GGTK_OK;
    for (int64_t k = 0; status == GGTK_OK && k < plan->n_tensors; k++) {
        inf_quantize_plan_tensor *entry = &plan->tensors[order[k]];
        quantize_choice choice;
        status = quantize_rules_choose(rules, entry->info, &choice, err);
        entry->wanted_type = choice.type;
        entry->reason = choice.reason;
        entry->rule = choice.rule;
    }
    free(order);
    return status;
}

/* One warning naming the tensor types of the plan that no kernel of this build writes. */
static ggtk_status warn_unwritable(inf_quantize_plan *plan, ggtk_error *err)
{
    char names[256] = "";
    size_t used = 0;
    for (int t = 0; t < GGTK_TENSOR_TYPE_COUNT; t++) {
        bool planned = false;
        for (int64_t i = 0; !planned && i < plan->n_tensors; i++)
            planned = plan->tensors[i].new_type == (ggtk_tensor_type)t &&
                      plan->tensors[i].new_type != plan->tensors[i].info->type;
        if (planned && !inf_type_can_quantize((ggtk_tensor_type)t) && used < sizeof names)
            used += (size_t)snprintf(names + used, sizeof names - used, "%s%s", used ? ", " : "",
                                     quantize_type_name((ggtk_tensor_type)t));
    }
    if (used == 0)
        return GGTK_OK;
    return quantize_plan_warn(plan, err,
                       "no kernel of this build writes %s: the plan can be shown, not run", names);
}

/* A split input's output is one file: the first part's writer without the split keys (as
 * llama-quantize removes them), with the tensors of the other parts appended in order. */
static ggtk_status add_other_parts(inf_quantize_plan *plan)
{
    static const char *const split_keys[] = {GGTK_SPLIT_KEY_NO, GGTK_SPLIT_KEY_COUNT,
                                             GGTK_SPLIT_KEY_TENSORS_COUNT};
    for (size_t k = 0; k < sizeof split_keys / sizeof split_keys[0]; k++)
        ggtk_writer_remove(plan->writer, split_keys[k]); /* absent is fine */
    ggtk_status status = GGTK_OK;
    for (int64_t i = ggtk_tensor_count(plan->input); i < plan->n_tensors && status == GGTK_OK; i++) {
        const ggtk_tensor_info *info = plan->tensors[i].info;
        status = ggtk_writer_add_tensor(plan->writer, info->name, info->type, info->n_dims,
                                        info->ne);
    }
    return status;
}

/* With options.split, the output's parts as llama-gguf-split would cut the whole output. */
static ggtk_status split_output(inf_quantize_plan *plan, ggtk_error *err)
{
    const ggtk_split_options *split = &plan->options.split;
    if (split->max_tensors <= 0 && split->max_bytes == 0)
        return GGTK_OK;
    ggtk_status status = ggtk_writer_split(plan->writer, split, &plan->output_parts,
                                           &plan->n_output_parts, err);
    if (status != GGTK_OK)
        return status;
    plan->file_size_after = 0;
    for (int p = 0; p < plan->n_output_parts; p++)
        plan->file_size_after += ggtk_writer_file_size(plan->output_parts[p]);
    return GGTK_OK;
}

/* The output header: the input's metadata and tensor infos with the new types and file type. */
static ggtk_status build_writer(inf_quantize_plan *plan, ggtk_error *err)
{
    plan->writer = ggtk_writer_new_from_file(plan->input);
    if (!plan->writer)
        return ggtk_error_set(err, GGTK_ERR_NOMEM, GGTK_NO_OFFSET, "out of memory");
    ggtk_status status = add_other_parts(plan);
    for (int64_t i = 0; status == GGTK_OK && i < plan->n_tensors; i++) {
        const inf_quantize_plan_tensor *entry = &plan->tensors[i];
        if (entry->new_type != entry->info->type)
            status = ggtk_writer_set_tensor_type(plan->writer, entry->info->name, entry->new_type);
    }
    if (status == GGTK_OK)
        status = ggtk_writer_set_u32(plan->writer, "general.file_type",
                                     (uint32_t)plan->options.file_type);
    if (status == GGTK_OK)
        status = ggtk_writer_set_u32(plan->writer, "general.quantization_version",
                                     QUANTIZATION_VERSION);
    if (status != GGTK_OK)
        return ggtk_error_set(err, status, GGTK_NO_OFFSET,
                              "%s: cannot build the output header: %s", ggtk_path(plan->input),
                              ggtk_strerror(status));
    plan->file_size_after = ggtk_writer_file_size(plan->writer);
    return GGTK_OK;
}

static ggtk_status plan_all(inf_quantize_plan *plan, quantize_rules *rules, ggtk_error *err)
{
    plan->n_tensors = ggtk_split_tensor_count(plan->input_parts);
    plan->tensors = calloc(plan->n_tensors ? plan->n_tensors : 1, sizeof *plan->tensors);
    if (!plan->tensors)
        return ggtk_error_set(err, GGTK_ERR_NOMEM, GGTK_NO_OFFSET, "out of memory");
    for (int64_t i = 0; i < plan->n_tensors; i++)
        plan->tensors[i].info = ggtk_split_tensor(plan->input_parts, i, NULL);
    ggtk_status status = choose_all(plan, rules, err);
    for (int64_t i = 0; status == GGTK_OK && i < plan->n_tensors; i++)
        status = plan_tensor(plan, &plan->tensors[i], err);
    if (status == GGTK_OK)
        status = fallback_warnings(plan, err);
    if (status == GGTK_OK && plan->options.n_tensor_rules > 0 && !is_quantized(rules->base_type))
        status = quantize_plan_warn(plan, err,
                             "tensor type rules apply to quantized file types only; ignored for "
                             "%s (as llama-quantize does)",
                             inf_quantize_file_type_name(plan->options.file_type));
    if (status == GGTK_OK && plan->n_requantized > 0)
        status = quantize_plan_warn(plan, err,
                             "requantizing %lld tensors that are already quantized: quality is "
                             "lower than quantizing from f32/f16",
                             (long long)plan->n_requantized);
    if (status == GGTK_OK)
        status = warn_unwritable(plan, err);
    if (status == GGTK_OK)
        status = build_writer(plan, err);
    if (status == GGTK_OK)
        status = quantize_imatrix_plan(plan, err);
    /* Cut last, so that every part has the final header (the imatrix keys included). */
    return status == GGTK_OK ? split_output(plan, err) : status;
}

/* Plan for an opened input; takes ownership of `parts` (closed on failure too). */
static ggtk_status plan_input(ggtk_split *parts, const inf_quantize_options *options,
                                      inf_quantize_plan **out, ggtk_error *err)
{
    inf_quantize_plan *plan = calloc(1, sizeof *plan);
    if (!plan) {
        ggtk_split_close(parts);
        return ggtk_error_set(err, GGTK_ERR_NOMEM, GGTK_NO_OFFSET, "out of memory");
    }
    plan->input_parts = parts;
    plan->input = ggtk_split_part(parts, 0);
    plan->options = *options;
    for (int p = 0; p < ggtk_split_part_count(parts); p++)
        plan->file_size_before += ggtk_file_size(ggtk_split_part(parts, p));
    quantize_model model;
    quantize_model_read(&model, parts);
    quantize_rules rules;
    ggtk_status status = quantize_rules_init(&rules, &model,
                                             ggtk_split_find_tensor(parts, "output.weight") < 0,
                                             options, err);
    if (status == GGTK_OK) {
        status = plan_all(plan, &rules, err);
        quantize_rules_free(&rules);
    }
    if (status != GGTK_OK) {
        inf_quantize_plan_free(plan);
        return status;
    }
    *out = plan;
    return GGTK_OK;
}

inf_quantize_plan *inf_quantize_plan_new(const char *input_path,
                                         const inf_quantize_options *options, ggtk_error *err)
{
    ggtk_split *parts = ggtk_split_open(input_path, GGTK_OPEN_METADATA, err);
    inf_quantize_plan *plan = NULL;
    if (parts)
        plan_input(parts, options, &plan, err);
    return plan;
}

void inf_quantize_plan_free(inf_quantize_plan *plan)
{
    if (!plan)
        return;
    for (int64_t i = 0; i < plan->n_warnings; i++)
        free(plan->warnings[i]);
    free(plan->warnings);
    free(plan->tensors);
    ggtk_writer_free(plan->writer);
    ggtk_writer_split_free(plan->output_parts, plan->n_output_parts);
    ggtk_split_close(plan->input_parts);
    free(plan);
}
