/* quantize_tool.h - the pieces of gguf-quantize: command line, progress bar, report. */
#ifndef QUANTIZE_TOOL_H
#define QUANTIZE_TOOL_H

#include <ggtk/inf_quantize_file.h>

#include <stdbool.h>

/* Exit statuses. */
enum { EXIT_FAILED = 1, EXIT_USAGE = 2 };
/* Most parts of a split output one run writes (each stays a temporary file until all are
 * written; kept under the signal module's slots and the usual 1024 open files). */
enum { SPLIT_OUTPUT_MAX_FILES = 1000 };

/* The parsed command line. */
typedef struct tool_args {
    const char *input;
    const char *output;          /* NULL only in a dry run */
    inf_quantize_options options;
    inf_quantize_tensor_rule *rules; /* --tensor-type, owned */
    char **rule_patterns;        /* the pattern strings the rules point into, owned */
    bool dry_run;
    bool quiet;
    const char *imatrix_path;    /* --imatrix */
    const char **include_weights, **exclude_weights; /* into argv; the arrays are owned */
    size_t n_include_weights, n_exclude_weights;
} tool_args;

/* Parse argv. Returns 0 on success, EXIT_USAGE after printing one line on stderr (or the help
 * on stdout, with *exit_now set and 0 returned for --help). */
int tool_args_parse(tool_args *args, int argc, char **argv, bool *exit_now);
void tool_args_free(tool_args *args);

/* Progress bar on stderr, drawn only when stderr is a terminal and not quiet. */
typedef struct tool_progress {
    bool enabled;
    double start;        /* seconds, monotonic */
    double last_draw;
} tool_progress;

void tool_progress_init(tool_progress *progress, bool quiet);
/* The on_progress callback; `user` is a tool_progress. */
void tool_progress_update(const inf_quantize_progress *p, void *user);
/* Erase the bar. */
void tool_progress_end(tool_progress *progress);
/* Monotonic seconds. */
double tool_now(void);

/* What --dry-run prints: every tensor's decision and the totals. */
void tool_report_plan(const inf_quantize_plan *plan);
/* The table after a run: each tensor's old -> new type and relative RMSE, then the totals. */
void tool_report_run(const inf_quantize_plan *plan, const inf_quantize_tensor_stats *stats,
                     double seconds);
/* --imatrix: read the file into *out, keep the entries --include/--exclude-weights select and
 * say what was loaded on stderr (unless quiet); the reader's error when the file cannot be used.
 * An imatrix left without entries is no imatrix (*out NULL, warned about), as for
 * llama-quantize. */
ggtk_status tool_load_imatrix(const tool_args *args, inf_imatrix **out, ggtk_error *err);
/* After a run: a warning line for each tensor whose weighted search fell back. */
void tool_report_imatrix_fallbacks(const inf_quantize_plan *plan,
                                   const inf_quantize_tensor_stats *stats);

/* The plan's warnings on stderr. */
void tool_report_warnings(const inf_quantize_plan *plan);

#endif
