/* main.c - gguf-split: split a GGUF model into parts, or merge the parts back, as llama.cpp's
 * llama-gguf-split does (see --help). libgguf opens and checks the input set (ggtk_split_open);
 * this tool plans the output files, checks their paths and writes them as one set. */
#include "output_path.h"
#include "signals.h"
#include "split_tool.h"
#include "tool_stdout.h"

#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>

static int fail(const ggtk_error *err)
{
    fprintf(stderr, "gguf-split: error: %s\n", err->message);
    return err->status == GGTK_ERR_USAGE ? EXIT_USAGE : EXIT_FAILED;
}

/* Every input part is a regular file, mapped (the copy hands its pages back to the kernel, which
 * is only right for a map); no output names an input or another output (output_path.h). */
static ggtk_status check_paths(const ggtk_split *input, const split_plan *plan, ggtk_error *err)
{
    int n_inputs = ggtk_split_part_count(input);
    tool_path *inputs = calloc((size_t)n_inputs, sizeof *inputs);
    tool_path *outputs = calloc((size_t)plan->n_files, sizeof *outputs);
    ggtk_status status = GGTK_OK;
    if (!inputs || !outputs)
        status = ggtk_error_set(err, GGTK_ERR_NOMEM, GGTK_NO_OFFSET, "out of memory");
    for (int i = 0; i < n_inputs && status == GGTK_OK; i++) {
        const char *path = ggtk_path(ggtk_split_part(input, i));
        struct stat st;
        if (stat(path, &st) != 0 || !S_ISREG(st.st_mode))
            status = ggtk_error_set(err, GGTK_ERR_PATH, GGTK_NO_OFFSET,
                                    "%s: not a regular file (inputs are mapped)", path);
        inputs[i] = (tool_path){"IN", path};
    }
    for (int p = 0; p < plan->n_files && status == GGTK_OK; p++)
        outputs[p] = (tool_path){"OUT", plan->paths[p]};
    if (status == GGTK_OK)
        status = output_paths_check(inputs, (size_t)n_inputs, outputs, (size_t)plan->n_files, err);
    free(inputs);
    free(outputs);
    return status;
}

static int run(const split_args *args)
{
    ggtk_error err;
    ggtk_split *input = ggtk_split_open(args->input, GGTK_OPEN_MMAP, &err);
    if (!input)
        return fail(&err);
    split_plan plan;
    ggtk_status status = args->merge ? split_plan_merge(&plan, input, args, &err)
                                     : split_plan_parts(&plan, input, args, &err);
    if (status == GGTK_OK)
        split_report_plan(&plan);
    if (status == GGTK_OK && !args->dry_run)
        status = check_paths(input, &plan, &err);
    if (status == GGTK_OK && !args->dry_run)
        status = split_write_set(&plan, input, &err);
    int rc = status == GGTK_OK ? 0 : fail(&err);
    if (rc == 0 && !args->dry_run)
        printf("%s %lld tensors into %d file%s\n", args->merge ? "merged" : "split",
               (long long)ggtk_split_tensor_count(input), plan.n_files,
               plan.n_files == 1 ? "" : "s");
    split_plan_free(&plan);
    ggtk_split_close(input);
    return rc;
}

int main(int argc, char **argv)
{
    tool_signals_install();
    split_args args;
    bool exit_now = false;
    int rc = split_args_parse(&args, argc, argv, &exit_now);
    if (rc == 0 && !exit_now)
        rc = run(&args);
    return tool_stdout_close("gguf-split: error: ") ? rc : EXIT_FAILED;
}
