/* main.c - gguf-quantize: convert a GGUF model to another tensor type (see --help). The work is
 * libinfer's inf_quantize_file.h; this file only sequences it: arguments, plan, run, report. */
#include "quantize_tool.h"

#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

static int fail(const ggtk_error *err)
{
    fprintf(stderr, "gguf-quantize: error: %s\n", err->message);
    return err->status == GGTK_ERR_USAGE ? EXIT_USAGE : EXIT_FAILED;
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
    inf_quantize_callbacks callbacks = {tool_signals_on_temp_file, tool_progress_update,
                                        &progress};
    ggtk_error err;
    ggtk_status status = inf_quantize_run(plan, args->output, &callbacks, stats, &err);
    tool_signals_done();
    tool_progress_end(&progress);
    double seconds = tool_now() - progress.start;
    int rc = 0;
    if (status != GGTK_OK)
        rc = fail(&err);
    else if (!args->quiet)
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
    tool_args args;
    bool exit_now = false;
    int rc = tool_args_parse(&args, argc, argv, &exit_now);
    if (rc != 0 || exit_now) {
        tool_args_free(&args);
        return rc;
    }
    /* Blocked until the temporary output exists, so that an interrupt always finds it. */
    tool_signals_install();
    ggtk_error err;
    inf_quantize_plan *plan = NULL;
    if (args.output && !args.dry_run &&
        inf_quantize_check_paths(args.input, args.output, &err) != GGTK_OK)
        rc = fail(&err);
    else if (!(plan = inf_quantize_plan_new(args.input, &args.options, &err)))
        rc = fail(&err);
    else {
        tool_report_warnings(plan);
        if (args.dry_run)
            tool_report_plan(plan);
        else
            rc = run_plan(plan, &args);
    }
    tool_signals_done();
    inf_quantize_plan_free(plan);
    tool_args_free(&args);
    return rc;
}
