/* report.c - what gguf-quantize prints on stdout: the plan of a dry run, or after a run a table of
 * every tensor (old -> new type and the relative RMSE the conversion added) and the totals. */
#include "quantize_tool.h"

#include <stdio.h>

static double mib(uint64_t bytes) { return (double)bytes / (1024.0 * 1024.0); }

static double bits_per_weight(uint64_t bytes, uint64_t weights)
{
    return weights ? (double)bytes * 8.0 / (double)weights : 0.0;
}

static const char *type_name(ggtk_tensor_type type)
{
    const ggtk_tensor_type_info *info = ggtk_tensor_type_info_get(type);
    return info ? info->name : "?";
}

static void format_shape(const ggtk_tensor_info *info, char *out, size_t size)
{
    int n = snprintf(out, size, "%llu", (unsigned long long)info->ne[0]);
    for (uint32_t d = 1; d < info->n_dims && n > 0 && (size_t)n < size; d++)
        n += snprintf(out + n, size - (size_t)n, "x%llu", (unsigned long long)info->ne[d]);
}

static void print_totals(const inf_quantize_plan *plan)
{
    printf("file type: %s (general.file_type %u)\n",
           inf_quantize_file_type_name(plan->options.file_type), (unsigned)plan->options.file_type);
    printf("tensors: %lld, converted %lld, requantized %lld, fallbacks %lld\n",
           (long long)plan->n_tensors, (long long)plan->n_converted,
           (long long)plan->n_requantized, (long long)plan->n_fallback);
    printf("data:    %.2f MiB (%.2f bits per weight) -> %.2f MiB (%.2f bits per weight)\n",
           mib(plan->data_size_before), bits_per_weight(plan->data_size_before, plan->n_elements),
           mib(plan->data_size_after), bits_per_weight(plan->data_size_after, plan->n_elements));
    printf("file:    %.2f MiB -> %.2f MiB (%llu bytes)\n", mib(plan->file_size_before),
           mib(plan->file_size_after), (unsigned long long)plan->file_size_after);
    if (ggtk_split_part_count(plan->input_parts) > 1 || plan->n_output_parts > 0)
        printf("parts:   %d -> %d\n", ggtk_split_part_count(plan->input_parts),
               plan->n_output_parts > 0 ? plan->n_output_parts : 1);
}

/* The why column: the reason, the rule, and a fallback with the type that did not fit. */
static void format_why(const inf_quantize_plan_tensor *t, char *out, size_t size)
{
    int n = snprintf(out, size, "%s", t->rule ? t->rule : inf_quantize_reason_name(t->reason));
    if (t->fallback && n > 0 && (size_t)n < size)
        snprintf(out + n, size - (size_t)n, "; fallback: %llu-element rows are not whole %s blocks",
                 (unsigned long long)t->info->ne[0], type_name(t->wanted_type));
}

void tool_report_plan(const inf_quantize_plan *plan)
{
    printf("%-40s %-16s %-16s %21s %6s  %s\n", "tensor", "shape", "type", "MiB", "bpw", "why");
    for (int64_t i = 0; i < plan->n_tensors; i++) {
        const inf_quantize_plan_tensor *t = &plan->tensors[i];
        char shape[96], types[40], why[160];
        format_shape(t->info, shape, sizeof shape);
        snprintf(types, sizeof types, "%s -> %s", type_name(t->info->type), type_name(t->new_type));
        format_why(t, why, sizeof why);
        printf("%-40s %-16s %-16s %9.3f -> %9.3f %6.2f  %s\n", t->info->name, shape, types,
               mib(t->info->size), mib(t->new_size),
               bits_per_weight(t->new_size, ggtk_tensor_elements(t->info)), why);
    }
    print_totals(plan);
}

void tool_report_run(const inf_quantize_plan *plan, const inf_quantize_tensor_stats *stats,
                     double seconds)
{
    printf("%-40s %-16s %12s\n", "tensor", "type", "rel. RMSE");
    for (int64_t i = 0; i < plan->n_tensors; i++) {
        const inf_quantize_plan_tensor *t = &plan->tensors[i];
        char types[40];
        snprintf(types, sizeof types, "%s -> %s", type_name(t->info->type), type_name(t->new_type));
        if (stats[i].converted)
            printf("%-40s %-16s %12.6f\n", t->info->name, types, stats[i].rel_rmse);
        else
            printf("%-40s %-16s %12s\n", t->info->name, types, "copied");
    }
    print_totals(plan);
    printf("time:    %.2f s, %.1f MB/s of input data\n", seconds,
           seconds > 0 ? (double)plan->data_size_before / 1e6 / seconds : 0.0);
}

void tool_report_warnings(const inf_quantize_plan *plan)
{
    for (int64_t i = 0; i < plan->n_warnings; i++)
        fprintf(stderr, "gguf-quantize: warning: %s\n", plan->warnings[i]);
}
