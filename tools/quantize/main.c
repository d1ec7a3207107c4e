/* main.c - gguf-quantize: convert a GGUF model to another tensor type (see --help). The work is
 * libinfer's inf_quantize_file.h; this file only sequences it: arguments, plan, run, report. */
#include "output_path.h"
#include "quantize_tool.h"
#include "signals.h"
#include "tool_stdout.h"

#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

/* The temporary output's tool_signals_track() slot. */
static int temp_slot = -1;

static int fail(const ggtk_error *err)
{
    fprintf(stderr, "gguf-quantize: error: %s\n", err->message);
    return err->status == GGTK_ERR_USAGE ? EXIT_USAGE : EXIT_FAILED;
}

/* inf_quantize_run's on_temp_file: the file exists; track it and let held signals through. */
static void track_temp_file(const char *temp_path, void *user)
{
    (void)user;
    temp_slot = tool_signals_track(temp_path);
    tool_signals_release();
}

/* Before any work: OUT against IN (output_path.h), and IN a regular file, because a run maps it
 * (a FIFO would be read for the plan, then wait for a writer forever when opened again). */
static int check_paths(const tool_args *args)
{
    struct stat st;
    ggtk_error err;
    const tool_path inputs[2] = {{"IN", args->input}, {"--imatrix", args->imatrix_path}};
    if (stat(args->input, &st) == 0 && !S_ISREG(st.st_mode))
        ggtk_error_set(&err, GGTK_ERR_PATH, GGTK_NO_OFFSET,
                       "IN %s: not a regular file (the input is mapped into memory)", args->input);
    else if (output_paths_check(inputs, args->imatrix_path ? 2 : 1,
                                &(tool_path){"OUT", args->output}, 1, &err) == GGTK_OK)
        return 0;
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
    inf_quantize_callbacks callbacks = {track_temp_file, tool_progress_update, &progress};
    ggtk_error err;
    /* Held until track_temp_file: the run creates the temporary output. */
    tool_signals_hold();
    ggtk_status status = inf_quantize_run(plan, args->output, &callbacks, stats, &err);
    tool_signals_release();
    tool_signals_untrack(temp_slot); /* renamed into place, or removed */
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

/* libgomp reads OMP_WAIT_POLICY once, when it loads, before main(). Its default lets idle threads
 * spin for milliseconds; between our parallel regions (one per batch) the main thread writes the
 * output, and on a busy machine the spinning threads take its CPU: 2 threads ran 2-3x slower than
 * 1. Passive waiting costs a few microseconds per batch. So, unless the user chose a policy, run
 * again with it set; if that fails, carry on as we are. */
static void use_passive_openmp_waits(char **argv)
{
    if (getenv("OMP_WAIT_POLICY"))
        return;
    if (setenv("OMP_WAIT_POLICY", "passive", 1) == 0)
        execv("/proc/self/exe", argv);
}

int main(int argc, char **argv)
{
    use_passive_openmp_waits(argv);
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
    inf_imatrix *imatrix = NULL;
    rc = args.dry_run ? 0 : check_paths(&args);
    if (rc == 0 && args.imatrix_path && tool_load_imatrix(&args, &imatrix, &err) != GGTK_OK)
        rc = fail(&err);
    args.options.imatrix = imatrix;
    if (rc == 0 && !(plan = inf_quantize_plan_new(args.input, &args.options, &err)))
        rc = fail(&err);
    else if (rc == 0) {
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
