/* imatrix.c - gguf-quantize's --imatrix: loading the file with llama-quantize's entry selection
 * (--include-weights / --exclude-weights), and the warnings about its use after a run. */
#include "quantize_tool.h"

#include <stdio.h>

ggtk_status tool_load_imatrix(const tool_args *args, inf_imatrix **out, ggtk_error *err)
{
    inf_imatrix *m = *out = inf_imatrix_read(args->imatrix_path, err);
    if (!m)
        return err->status;
    const int64_t loaded = inf_imatrix_n_entries(m);
    inf_imatrix_filter(m, args->include_weights, args->n_include_weights, args->exclude_weights,
                       args->n_exclude_weights);
    if (inf_imatrix_n_entries(m) == 0) {
        fprintf(stderr, "gguf-quantize: warning: no entry of %s is left to use; quantizing "
                "without an importance matrix\n", args->imatrix_path);
        inf_imatrix_free(m);
        *out = NULL;
        return GGTK_OK;
    }
    if (!args->quiet)
        fprintf(stderr, "imatrix: %lld of %lld entries from %s (%s format, %d chunks%s%s)\n",
                (long long)inf_imatrix_n_entries(m), (long long)loaded, args->imatrix_path,
                inf_imatrix_get_format(m) == INF_IMATRIX_LEGACY ? "legacy" : "GGUF",
                inf_imatrix_chunk_count(m), inf_imatrix_n_datasets(m) > 0 ? " of " : "",
                inf_imatrix_n_datasets(m) > 0 ? inf_imatrix_dataset(m, 0) : "");
    return GGTK_OK;
}

void tool_report_imatrix_fallbacks(const inf_quantize_plan *plan,
                                   const inf_quantize_tensor_stats *stats)
{
    for (int64_t i = 0; i < plan->n_tensors; i++)
        if (stats[i].imatrix_fallbacks > 0)
            fprintf(stderr, "gguf-quantize: warning: tensor %s: %lld blocks had non-finite "
                    "weighted scales and were quantized without the importance weights\n",
                    plan->tensors[i].info->name, (long long)stats[i].imatrix_fallbacks);
}
