/* report.c - what gguf-split prints on stdout: the files of the plan, as llama-gguf-split lists
 * its parts (tensors and size per file), with exact byte counts. */
#include "split_tool.h"

#include <stdio.h>

void split_report_plan(const split_plan *plan)
{
    printf("files: %d\n", plan->n_files);
    for (int p = 0; p < plan->n_files; p++)
        printf("%s: %lld tensors, %llu bytes\n", plan->paths[p],
               (long long)ggtk_writer_tensor_count(plan->writers[p]),
               (unsigned long long)ggtk_writer_file_size(plan->writers[p]));
}
