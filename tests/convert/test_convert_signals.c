/* gguf-convert interrupted (SIGINT, SIGTERM) while writing, in both directions: it dies of the
 * signal and leaves no file, temporary or final, in the output folder. */
#include "safetensors_fixture.h"
#include "test.h"
#include "tools/tool_process.h"

#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

enum { DEADLINE_S = 300 };

/* Start `args`, signal it as soon as a temporary file is in `watch`, expect its
 * death by `sig` and an empty `watch`. */
static bool interrupted_cleanly(const char *const *args, const char *watch, int sig)
{
    pid_t pid = tool_start("gguf-convert", args, &(tool_start_options){0});
    int status = 0;
    bool seen = tool_wait_for_temp(pid, watch, 0, DEADLINE_S, &status);
    kill(pid, sig);
    status = seen ? tool_wait(pid, DEADLINE_S) : status;
    int left = st_fixture_count_entries(watch);
    if (!seen || !tool_died_of(status, sig) || left > 0)
        fprintf(stderr, "    seen %d, status %#x, %d entries left in %s\n", seen, status, left, watch);
    return seen && tool_died_of(status, sig) && left <= 0;
}

TEST(test_convert_interrupted_leaves_no_file)
{
    const char *model = test_model_path();
    if (!model)
        SKIP("models/SmolLM2-135M-Instruct.Q4_1.gguf missing (make models)");
    char f32[512], hf[512], out_dir[512], gguf_dir[512], gguf[600];
    snprintf(f32, sizeof f32, "%s", test_tmpfile("signals-f32.gguf"));
    snprintf(hf, sizeof hf, "%s", test_tmpfile("signals-hf"));
    CHECK(test_run(NULL, "%s -q --allow-requantize %s %s f32", test_tool("gguf-quantize"), model,
                   f32) == 0);
    CHECK(test_run(NULL, "%s --to-hf %s %s", test_tool("gguf-convert"), f32, hf) == 0);
    static const int signals[] = {SIGINT, SIGTERM};
    for (size_t i = 0; i < sizeof signals / sizeof signals[0]; i++) {
        snprintf(out_dir, sizeof out_dir, "%s-%d", test_tmpfile("signals-out"), signals[i]);
        const char *to_hf[] = {"--to-hf", "--outtype", "bf16", "--threads", "1", "--shard-size", "50M",
                               f32, out_dir, NULL};
        CHECK_MSG(interrupted_cleanly(to_hf, out_dir, signals[i]), "--to-hf, signal %d", signals[i]);
        snprintf(gguf_dir, sizeof gguf_dir, "%s-%d", test_tmpfile("signals-gguf"), signals[i]);
        mkdir(gguf_dir, 0777);
        snprintf(gguf, sizeof gguf, "%s/out.gguf", gguf_dir);
        const char *to_gguf[] = {"--outtype", "q8_0", "--threads", "1", hf, gguf, NULL};
        CHECK_MSG(interrupted_cleanly(to_gguf, gguf_dir, signals[i]), "to GGUF, signal %d", signals[i]);
    }
}
