/* output.h - the output side of a run (output.c); not public: one file, or the parts of a split
 * model written one after the other and renamed together at the end. */
#ifndef INF_QUANTIZE_OUTPUT_H
#define INF_QUANTIZE_OUTPUT_H

#include <ggtk/inf_quantize_file.h>

/* The files of a run. Only the file being written holds a writer's buffer; finished files wait as
 * temporary files for the final renames. */
typedef struct quantize_output {
    ggtk_writer **writers;       /* the plan's: its writer, or its parts */
    int n_files;
    char **paths;                /* where each goes */
    ggtk_atomic_file **finished; /* written, not yet renamed */
    int current;                 /* the file being written; -1 before the first */
    const inf_quantize_callbacks *callbacks;
} quantize_output;

/* Prepare the files of `plan` at `output_path` (a split plan: the prefix of its parts); nothing
 * is created yet. GGTK_ERR_NOMEM. */
ggtk_status quantize_output_open(quantize_output *out, inf_quantize_plan *plan,
                                 const char *output_path, const inf_quantize_callbacks *callbacks,
                                 ggtk_error *err);
/* Data of a tensor of file `file`; files before it are finished first (files come in order). */
ggtk_status quantize_output_write(quantize_output *out, int file, const void *data, size_t size,
                                  ggtk_error *err);
/* Finish every file and rename them all into place; when a rename fails the files already
 * renamed are removed too, so that no partial set is left. */
ggtk_status quantize_output_finish(quantize_output *out, ggtk_error *err);
/* Release everything; files not renamed are removed. */
void quantize_output_close(quantize_output *out);

#endif
