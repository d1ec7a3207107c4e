/* main.c - gguf-quantize: convert a GGUF model to another tensor type (see --help). The work is
 * libinfer's inf_quantize_file.h; this file only sequences it: arguments, plan, run, report. */
#include "openmp_waits.h"
#include "output_path.h"
#include "quantize_tool.h"
#include "signals.h"
#include "tool_stdout.h"

#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>

/* The tool_signals_track() slots of the temporary outputs (one, or one per part). */
static int temp_slots[SPLIT_OUTPUT_MAX_FILES];
static int n_temp_slots;

static int fail(const ggtk_error *err)
{
    fprintf(stderr, "gguf-quantize: error: %s\n", err->message);
    return err->status == GGTK_ERR_USAGE ? EXIT_USAGE : EXIT_FAILED;
}

/* inf_quantize_run's before_temp_file: no signal may find the file created but untracked. */
static void hold_signals(void *user)
{
    (void)user;
    tool_signals_hold();
}

/* inf_quantize_run's on_temp_file: the file exists; track it and let held signals through. */
static void track_temp_file(const char *temp_path, void *user)
{
    (void)user;
    if (n_temp_slots < SPLIT_OUTPUT_MAX_FILES)
        temp_slots[n_temp_slots++] = tool_signals_track(temp_path);
    tool_signals_release();
}

/* A split output's parts checked as OUT is for one file: against IN and each other. */
static int check_part_paths(const inf_quantize_plan *plan, const tool_args *args)
{
    ggtk_error err;
    if (plan->n_output_parts > SPLIT_OUTPUT_MAX_FILES) {
        ggtk_error_set(&err, GGTK_ERR_USAGE, GGTK_NO_OFFSET,
                       "%d parts, more than the %d one run writes; allow more tensors or bytes "
                       "per part", plan->n_output_parts, SPLIT_OUTPUT_MAX_FILES);
        return fail(&err);
    }
    tool_path outputs[SPLIT_OUTPUT_MAX_FILES];
    char(*paths)[4096] = calloc((size_t)plan->n_output_parts, sizeof *paths);
    if (!paths) {
        fprintf(stderr, "gguf-quantize: error: out of memory\n");
        return EXIT_FAILED;
    }
    for (int p = 0; p < plan->n_output_parts; p++) {
        ggtk_split_part_path(paths[p], sizeof paths[p], args->output, p, plan->n_output_parts);
        outputs[p] = (tool_path){"OUT", paths[p]};
    }
    int rc = 0;
    const tool_path inputs[2] = {{"IN", args->input}, {"--imatrix", args->imatrix_path}};
    if (output_paths_check(inputs, args->imatrix_path ? 2 : 1, outputs,
                           (size_t)plan->n_output_parts, &err) != GGTK_OK)
        rc = fail(&err);
    free(paths);
    return rc;
}

/* Before any work: OUT against IN (output_path.h), and IN a regular file, because a run maps it
 * (a FIFO would be read for the plan, then wait for a writer forever when opened again). */
static int check_paths(const tool_args *args, bool split)
{
    struct stat st;
    ggtk_error err;
    const tool_path inputs[2] = {{"IN", args->input}, {"--imatrix", args->imatrix_path}};
    if (stat(args->input, &st) == 0 && !S_ISREG(st.st_mode))
        ggtk_error_set(&err, GGTK_ERR_PATH, GGTK_NO_OFFSET,
                       "IN %s: not a regular file (the input is mapped into memory)", args->input);
    else if (split || output_paths_check(inputs, args->imatrix_path ? 2 : 1,
                                         &(tool_path){"OUT", args->output}, 1, &err) == GGTK_OK)
        return 0; /* a split output's part names are known once planned: check_part_paths() */
    return fail(&err);
}

static int run_plan(inf_quantize_plan *plan, const tool_args *args)
{
    inf_quantize_tensor_stats *stats = calloc((size_t)plan->n_tensors + 1, sizeof *stats);
    if (!stats) {
        fprintf(stderr, "gguf-quantize: error: out of memory\n");
        return EXIT_FAILED;
    }
    tool_progress progress;
    tool_progress_init(&progress, args->quiet);
    inf_quantize_callbacks callbacks = {track_temp_file, tool_progress_update, &progress,
                                        hold_signals};
    ggtk_error err;
    ggtk_status status = inf_quantize_run(plan, args->output, &callbacks, stats, &err);
    tool_signals_release(); /* held by hold_signals for a file that was never created */
    for (int i = 0; i < n_temp_slots; i++)
        tool_signals_untrack(temp_slots[i]); /* renamed into place, or removed */
    tool_progress_end(&progress);
    double seconds = tool_now() - progress.start;
    int rc = 0;
    if (status != GGTK_OK)
        rc = fail(&err);
    else
        tool_report_imatrix_fallbacks(plan, stats);
    if (status == GGTK_OK && !args->quiet)
        tool_report_run(plan, stats, seconds);
    free(stats);
    return rc;
}

int main(int argc, char **argv)
{
    openmp_waits_make_passive(argv);
    tool_signals_install();
    tool_args args;
    bool exit_now = false;
    int rc = tool_args_parse(&args, argc, argv, &exit_now);
    if (rc != 0 || exit_now) {
        tool_args_free(&args);
        return tool_stdout_close("gguf-quantize: error: ") ? rc : EXIT_FAILED;
    }
    ggtk_error err;
    inf_quantize_plan *plan = NULL;
    bool split = args.options.split.max_tensors > 0 || args.options.split.max_bytes > 0;
    inf_imatrix *imatrix = NULL;
    rc = args.dry_run ? 0 : check_paths(&args, split);
    if (rc == 0 && args.imatrix_path && tool_load_imatrix(&args, &imatrix, &err) != GGTK_OK)
        rc = fail(&err);
    args.options.imatrix = imatrix;
    if (rc == 0 && !(plan = inf_quantize_plan_new(args.input, &args.options, &err)))
        rc = fail(&err);
    if (rc == 0 && split && !args.dry_run)
        rc = check_part_paths(plan, &args);
    if (rc == 0) {
        tool_report_warnings(plan);
        if (args.dry_run)
            tool_report_plan(plan);
        else
            rc = run_plan(plan, &args);
    }
    inf_quantize_plan_free(plan);
    inf_imatrix_free(imatrix);
    tool_args_free(&args);
    return tool_stdout_close("gguf-quantize: error: ") ? rc : EXIT_FAILED;
}
