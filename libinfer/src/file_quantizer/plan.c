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

inf_quantize_options inf_quantize_options_default(ggtk_tensor_type type)
{
    inf_quantize_options options = {.type = type, .output_type = -1, .embd_type = -1};
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
    }
    return "unknown";
}

static bool is_quantized(ggtk_tensor_type type)
{
    const ggtk_tensor_type_info *info = ggtk_tensor_type_info_get(type);
    return info && info->quantized;
}

static ggtk_status add_warning(inf_quantize_plan *plan, ggtk_error *err,
                                       const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static ggtk_status add_warning(inf_quantize_plan *plan, ggtk_error *err,
                                       const char *fmt, ...)
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
    if (!inf_type_can_quantize(entry->new_type))
        return ggtk_error_set(err, GGTK_ERR_UNSUPPORTED, GGTK_NO_OFFSET,
                              "%s: tensor '%s': no kernel writes type %s", path, info->name,
                              quantize_type_name(entry->new_type));
    if (!ggtk_tensor_type_bytes(entry->new_type, ggtk_tensor_elements(info), &entry->new_size))
        return ggtk_error_set(err, GGTK_ERR_UNSUPPORTED, GGTK_NO_OFFSET,
                              "%s: tensor '%s': size as %s does not fit 64 bits", path, info->name,
                              quantize_type_name(entry->new_type));
    return GGTK_OK;
}

static ggtk_status plan_tensor(inf_quantize_plan *plan, const quantize_rules *rules,
                                       inf_quantize_plan_tensor *entry, ggtk_error *err)
{
    const ggtk_tensor_info *info = entry->info;
    entry->wanted_type = quantize_rules_choose(rules, info, &entry->reason);
    entry->new_type = entry->wanted_type;
    if (entry->wanted_type != info->type)
        entry->new_type = quantize_fallback_type(entry->wanted_type, info->ne[0]);
    ggtk_status status = check_conversion(plan, entry, err);
    if (status != GGTK_OK)
        return status;
    if (entry->new_type != entry->wanted_type) {
        entry->fallback = true;
        plan->n_fallback++;
        status = add_warning(plan, err,
                             "tensor %s: rows of %llu elements do not split into %s blocks of %u; "
                             "falling back to %s",
                             info->name, (unsigned long long)info->ne[0],
                             quantize_type_name(entry->wanted_type),
                             ggtk_tensor_type_info_get(entry->wanted_type)->block_size,
                             quantize_type_name(entry->new_type));
    }
    if (entry->new_type != info->type) {
        plan->n_converted++;
        plan->n_requantized += entry->requantize;
    }
    plan->n_elements += ggtk_tensor_elements(info);
    plan->data_size_before += info->size;
    plan->data_size_after += entry->new_size;
    return status;
}

/* The output header: the input's metadata and tensor infos with the new types and file type. */
static ggtk_status build_writer(inf_quantize_plan *plan, ggtk_error *err)
{
    plan->writer = ggtk_writer_new_from_file(plan->input);
    if (!plan->writer)
        return ggtk_error_set(err, GGTK_ERR_NOMEM, GGTK_NO_OFFSET, "out of memory");
    ggtk_status status = GGTK_OK;
    for (int64_t i = 0; status == GGTK_OK && i < plan->n_tensors; i++) {
        const inf_quantize_plan_tensor *entry = &plan->tensors[i];
        if (entry->new_type != entry->info->type)
            status = ggtk_writer_set_tensor_type(plan->writer, entry->info->name, entry->new_type);
    }
    if (status == GGTK_OK)
        status = ggtk_writer_set_u32(plan->writer, "general.file_type",
                                     (uint32_t)inf_quantize_llama_ftype(plan->options.type));
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

static ggtk_status check_not_split(const ggtk_file *input, ggtk_error *err)
{
    uint64_t n_splits = 0;
    if (ggtk_get_uint(input, "split.count", &n_splits) == GGTK_OK && n_splits > 1)
        return ggtk_error_set(err, GGTK_ERR_USAGE, GGTK_NO_OFFSET,
                              "%s: is one of %llu split files; merge them first (split files are "
                              "not supported)",
                              ggtk_path(input), (unsigned long long)n_splits);
    return GGTK_OK;
}

static ggtk_status plan_all(inf_quantize_plan *plan, const quantize_rules *rules,
                                    ggtk_error *err)
{
    plan->n_tensors = ggtk_tensor_count(plan->input);
    plan->tensors = calloc(plan->n_tensors ? plan->n_tensors : 1, sizeof *plan->tensors);
    if (!plan->tensors)
        return ggtk_error_set(err, GGTK_ERR_NOMEM, GGTK_NO_OFFSET, "out of memory");
    for (int64_t i = 0; i < plan->n_tensors; i++) {
        plan->tensors[i].info = ggtk_tensor(plan->input, i);
        ggtk_status status = plan_tensor(plan, rules, &plan->tensors[i], err);
        if (status != GGTK_OK)
            return status;
    }
    if (plan->options.n_tensor_rules > 0 && !is_quantized(plan->options.type)) {
        ggtk_status status =
            add_warning(plan, err, "tensor type rules apply to quantized file types only; "
                                   "ignored for %s (as llama-quantize does)",
                        quantize_type_name(plan->options.type));
        if (status != GGTK_OK)
            return status;
    }
    if (plan->n_requantized > 0) {
        ggtk_status status =
            add_warning(plan, err,
                        "requantizing %lld tensors that are already quantized: quality is lower "
                        "than quantizing from f32/f16",
                        (long long)plan->n_requantized);
        if (status != GGTK_OK)
            return status;
    }
    ggtk_status status = build_writer(plan, err);
    return status == GGTK_OK ? quantize_imatrix_plan(plan, err) : status;
}

/* Plan for an opened input; takes ownership of `input` (closed on failure too). */
static ggtk_status plan_input(ggtk_file *input, const inf_quantize_options *options,
                                      inf_quantize_plan **out, ggtk_error *err)
{
    inf_quantize_plan *plan = calloc(1, sizeof *plan);
    if (!plan) {
        ggtk_close(input);
        return ggtk_error_set(err, GGTK_ERR_NOMEM, GGTK_NO_OFFSET, "out of memory");
    }
    plan->input = input;
    plan->options = *options;
    plan->file_size_before = ggtk_file_size(input);
    quantize_rules rules;
    ggtk_status status = check_not_split(input, err);
    if (status == GGTK_OK)
        status = quantize_rules_init(&rules, input, options, err);
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
    ggtk_file *input = ggtk_open(input_path, GGTK_OPEN_METADATA, err);
    inf_quantize_plan *plan = NULL;
    if (input)
        plan_input(input, options, &plan, err);
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
    ggtk_close(plan->input);
    free(plan);
}
