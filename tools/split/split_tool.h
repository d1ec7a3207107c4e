/* split_tool.h - the pieces of gguf-split: command line, the plan of the parts, writing a set of
 * files atomically, and the two operations (split and merge). */
#ifndef SPLIT_TOOL_H
#define SPLIT_TOOL_H

#include <ggtk/gguf.h>

#include <stdbool.h>
#include <stdint.h>

/* Exit statuses. */
enum { EXIT_FAILED = 1, EXIT_USAGE = 2 };

/* llama-gguf-split's default part size in tensors. */
enum { SPLIT_DEFAULT_MAX_TENSORS = 128 };
/* Most files one run writes: each stays an open temporary file until all are written, so this is
 * kept under the usual limit of 1024 open files (and the signal module's slots). */
enum { SPLIT_MAX_FILES = 1000 };

/* The parsed command line. */
typedef struct split_args {
    bool merge;                 /* --merge (else --split) */
    int max_tensors;            /* --split-max-tensors (used when max_bytes is 0) */
    uint64_t max_bytes;         /* --split-max-size, 0 when splitting by tensors */
    bool no_tensor_first_split; /* part 1 holds the metadata only */
    bool strip_split_keys;      /* merge: leave out split.* (llama-gguf-split keeps them) */
    bool dry_run;
    const char *input;          /* IN, or a part of the model to merge */
    const char *output;         /* OUT_PREFIX, or the merged file */
} split_args;

/* Parse argv. Returns 0 on success, EXIT_USAGE after printing one line on stderr (or the help
 * on stdout, with *exit_now set and 0 returned for --help). */
int split_args_parse(split_args *args, int argc, char **argv, bool *exit_now);

/* The files to write: one writer per output file (metadata and tensor table, data to come from
 * the input set) and its path. */
typedef struct split_plan {
    ggtk_writer **writers; /* released with ggtk_writer_split_free() */
    char **paths;
    int n_files;
    bool split;            /* parts, named PREFIX-%05d-of-%05d.gguf even when there is one */
} split_plan;

/* The parts `args` asks for from the opened input (split), or the one merged file (merge).
 * GGTK_OK, or a failure in *err (a part that would hold no tensor, out of memory). */
ggtk_status split_plan_parts(split_plan *plan, const ggtk_split *input, const split_args *args,
                             ggtk_error *err);
ggtk_status split_plan_merge(split_plan *plan, const ggtk_split *input, const split_args *args,
                             ggtk_error *err);
void split_plan_free(split_plan *plan);

/* Write every file of `plan` with its tensors' data copied from `input`, each through a temporary
 * file; the files are renamed into place only once all were written, so a failure (or a signal)
 * leaves none of them. Prints "wrote PATH" per file unless quiet. */
ggtk_status split_write_set(const split_plan *plan, const ggtk_split *input, ggtk_error *err);

/* What --dry-run and a run print: the number of files, then per file its tensors and size. */
void split_report_plan(const split_plan *plan);

#endif
