/* The tools that read a whole model stream through it: on a sparse ~1 GB F32 model (written by
 * tests/bench/make_big_model.py, the generator of `make bench`'s 30 GB run), the peak resident
 * memory of gguf-inspect --hash and --check and gguf-quantize stays a fraction of the model's
 * size, and so does that of gguf-inspect --check, gguf-edit and gguf-split on the Q8_0 result.
 * Without handing mapped pages back, every page read stays resident while the machine has memory
 * to spare, and the peak reaches the size of the file read. */
#include "test.h"
#include "tool_process.h"

#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>

/* 16 layers of 1024 x 4096: 975 MB of F32 data, 1 layer of it written, the rest holes. */
#define MODEL_SHAPE "--embd 1024 --ff 4096 --layers 16 --heads 16 --kv-heads 4 --filled 1"
/* Peak resident memory allowed, as a fraction of the F32 model's size: below the size of its
 * Q8_0 result too. */
#define RSS_FRACTION 8

static const char *sparse_model(void)
{
    static char path[512];
    snprintf(path, sizeof path, "%s", test_tmpfile("big-sparse.gguf"));
    char *out = NULL;
    int rc = test_run(&out, "python3 tests/bench/make_big_model.py '%s' " MODEL_SHAPE, path);
    if (rc != 0)
        fprintf(stderr, "    make_big_model.py failed: %s\n", out ? out : "");
    free(out);
    return rc == 0 ? path : NULL;
}

/* Peak RSS in KiB of `tool` run with `args` to a successful end, or -1 after a failure. */
static long peak_rss_kib(const char *tool, const char *const *args)
{
    pid_t pid = tool_start(tool, args, &(tool_start_options){0});
    long rss = -1;
    return tool_wait_usage(pid, 120, &rss) == 0 ? rss : -1;
}

TEST(test_tools_reading_a_whole_model_keep_it_mostly_out_of_memory)
{
    const char *model = sparse_model();
    if (!model)
        SKIP("the sparse model could not be made (Python with gguf-py)");
    struct stat st;
    CHECK(stat(model, &st) == 0 && st.st_size > 900000000);
    /* Each thread holds one window of the model: the bound must not grow with the cores. */
    setenv("OMP_NUM_THREADS", "2", 1);
    long bound_kib = (long)(st.st_size / 1024 / RSS_FRACTION);
    char output[512], edited[512], parts[512];
    snprintf(output, sizeof output, "%s", test_tmpfile("big-q8_0.gguf"));
    snprintf(edited, sizeof edited, "%s", test_tmpfile("big-edited.gguf"));
    snprintf(parts, sizeof parts, "%s", test_tmpfile("big-part"));
    struct {
        const char *tool;
        const char *args[6];
    } runs[] = {
        {"gguf-inspect", {"--hash", model, NULL}},
        {"gguf-inspect", {"--check", model, NULL}},
        {"gguf-quantize", {"-q", "--pure", model, output, "q8_0", NULL}},
        {"gguf-inspect", {"--check", output, NULL}},
        {"gguf-edit", {output, edited, "--name", "edited", NULL}},
        {"gguf-split", {"--split-max-size", "100M", output, parts, NULL}},
    };
    for (size_t i = 0; i < sizeof runs / sizeof runs[0]; i++) {
        long rss = peak_rss_kib(runs[i].tool, runs[i].args);
        CHECK_MSG(rss >= 0, "%s %s failed", runs[i].tool, runs[i].args[0]);
        CHECK_MSG(rss < bound_kib, "%s %s: peak RSS %ld KiB, bound %ld KiB", runs[i].tool,
                  runs[i].args[0], rss, bound_kib);
    }
    /* Over 1 GB of disk: not left for the end of the run. */
    test_run(NULL, "rm -f '%s' '%s' '%s' '%s'-*", model, output, edited, parts);
}
