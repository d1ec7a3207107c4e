/* Interrupting gguf-quantize mid-way never leaves a partial OUT: after kill -9 only the writer's
 * temporary file ".OUT.XXXXXX.tmp" may remain (nothing can run on SIGKILL; this is documented),
 * and after SIGINT, SIGTERM, SIGHUP, or SIGBUS from an input truncated while it is mapped, the
 * handler removes that temporary file too.
 * The run converts the real model to F32 (~540 MB) with one thread. To hit it mid-way without a
 * race, the test waits until the temporary file has grown, stops the process (SIGSTOP), queues the
 * signal (or truncates the input) and lets it continue. */
#include "gguf/writer_test_support.h"
#include "test.h"
#include "tool_process.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

/* Bytes the temporary file must hold before the signal: past the header, well before the end. */
enum { GROWN_BYTES = 32 << 20 };
#define DEADLINE_S 300.0

/* Start a run of `model` into DIR/out.gguf and stop it (SIGSTOP) once its temporary file has
 * grown; the pid, or -1 (status in *status) when it ended first. The temporary path goes to
 * `temp`. */
static pid_t start_and_stop(const char *model, const char *dir, char *temp, size_t temp_len,
                            int *status)
{
    char out[512];
    snprintf(out, sizeof out, "%s/out.gguf", dir);
    const char *args[] = {"--allow-requantize", "-t", "1", model, out, "f32", NULL};
    pid_t pid = tool_start("gguf-quantize", args, &(tool_start_options){0});
    if (!tool_wait_for_temp(pid, dir, GROWN_BYTES, DEADLINE_S, status)) {
        if (*status == -1)
            tool_wait(pid, 0);
        return -1;
    }
    kill(pid, SIGSTOP);
    tool_temp_file(dir, temp, temp_len);
    return pid;
}

/* Start a run in a new directory, stop it once its temporary file has grown, send `sig`, and
 * return how it ended (waitpid status), or -1 if it finished before it could be stopped. */
static int interrupt_run(const char *dir, int sig, char *temp, size_t temp_len)
{
    int status;
    pid_t pid = start_and_stop(test_model_path(), dir, temp, temp_len, &status);
    if (pid < 0)
        return -1;
    kill(pid, sig);
    kill(pid, SIGCONT);
    return tool_wait(pid, DEADLINE_S);
}
TEST(test_quantize_kill_9_leaves_no_output_only_the_temp_file)
{
    if (!test_model_path())
        SKIP("models/SmolLM2-135M-Instruct.Q4_1.gguf missing (make models)");
    const char *dir = support_make_dir("kill9");
    char temp[1024];
    int status = interrupt_run(dir, SIGKILL, temp, sizeof temp);
    CHECK_MSG(status != -1, "gguf-quantize finished before it could be interrupted");
    CHECK(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
    char out[600];
    snprintf(out, sizeof out, "%s/out.gguf", dir);
    CHECK(access(out, F_OK) != 0);
    /* Nothing runs on SIGKILL: the temporary file stays, and is all there is. */
    CHECK(access(temp, F_OK) == 0 && support_dir_entries(dir) == 1);
    unlink(temp);
}

TEST(test_quantize_sigint_sigterm_and_sighup_remove_the_temp_file)
{
    if (!test_model_path())
        SKIP("models/SmolLM2-135M-Instruct.Q4_1.gguf missing (make models)");
    static const int signals[] = {SIGINT, SIGTERM, SIGHUP};
    for (size_t i = 0; i < sizeof signals / sizeof signals[0]; i++) {
        char name[32];
        snprintf(name, sizeof name, "sig%d", signals[i]);
        const char *dir = support_make_dir(name);
        char temp[1024];
        int status = interrupt_run(dir, signals[i], temp, sizeof temp);
        CHECK_MSG(status != -1, "gguf-quantize finished before it could be interrupted");
        CHECK_MSG(WIFSIGNALED(status) && WTERMSIG(status) == signals[i], "status %#x", status);
        CHECK_MSG(support_dir_entries(dir) == 0, "%s holds %d entries", dir,
                  support_dir_entries(dir));
    }
}

TEST(test_quantize_input_truncated_while_mapped_leaves_no_temp_file)
{
    if (!test_model_path())
        SKIP("models/SmolLM2-135M-Instruct.Q4_1.gguf missing (make models)");
    char model[600], temp[1024];
    snprintf(model, sizeof model, "%s/model.gguf", support_make_dir("sigbus_in"));
    CHECK(test_run(NULL, "cp '%s' '%s'", test_model_path(), model) == 0);
    const char *dir = support_make_dir("sigbus_out");
    int status;
    pid_t pid = start_and_stop(model, dir, temp, sizeof temp, &status);
    CHECK_MSG(pid > 0, "gguf-quantize finished before it could be stopped (status %#x)", status);
    /* The pages not read yet vanish from the mapping: the next read faults (SIGBUS). */
    CHECK(truncate(model, 4096) == 0);
    kill(pid, SIGCONT);
    status = tool_wait(pid, DEADLINE_S);
    CHECK_MSG(tool_died_of(status, SIGBUS) || (WIFEXITED(status) && WEXITSTATUS(status) == 1),
              "status %#x", status);
    CHECK_MSG(support_dir_entries(dir) == 0, "%s holds %d entries", dir, support_dir_entries(dir));
}
