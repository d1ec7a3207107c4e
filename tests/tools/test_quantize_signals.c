/* Interrupting gguf-quantize mid-way never leaves a partial OUT: after kill -9 only the writer's
 * temporary file ".OUT.XXXXXX.tmp" may remain (nothing can run on SIGKILL; this is documented),
 * and after SIGINT or SIGTERM the handler removes that temporary file too.
 * The run converts the real model to F32 (~540 MB) with one thread. To hit it mid-way without a
 * race, the test waits until the temporary file has grown, stops the process (SIGSTOP), queues the
 * signal and lets it continue. */
#include "gguf/writer_test_support.h"
#include "test.h"

#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* Bytes the temporary file must hold before the signal: past the header, well before the end. */
enum { GROWN_BYTES = 32 << 20 };

static pid_t start_quantize(const char *model, const char *out)
{
    pid_t pid = fork();
    if (pid == 0) {
        int null = open("/dev/null", O_WRONLY);
        dup2(null, STDOUT_FILENO);
        dup2(null, STDERR_FILENO);
        execl(test_tool("gguf-quantize"), "gguf-quantize", "--allow-requantize", "-t", "1", model,
              out, "f32", (char *)NULL);
        _exit(127);
    }
    return pid;
}

/* Size of the temporary file of "out.gguf" in `dir` (copying its path to `temp`), or -1. */
static long long temp_size(const char *dir, char *temp, size_t size)
{
    DIR *d = opendir(dir);
    long long found = -1;
    struct dirent *e;
    while (d && (e = readdir(d)) != NULL) {
        size_t n = strlen(e->d_name);
        if (strncmp(e->d_name, ".out.gguf.", 10) == 0 && n > 4 &&
            strcmp(e->d_name + n - 4, ".tmp") == 0) {
            struct stat st;
            snprintf(temp, size, "%s/%s", dir, e->d_name);
            if (stat(temp, &st) == 0)
                found = (long long)st.st_size;
        }
    }
    if (d)
        closedir(d);
    return found;
}

/* Start a run in a new directory, stop it once its temporary file has grown, send `sig`, and
 * return how it ended (waitpid status), or -1 if it finished before it could be stopped. */
static int interrupt_run(const char *dir, int sig, char *temp, size_t temp_len)
{
    char out[512];
    snprintf(out, sizeof out, "%s/out.gguf", dir);
    pid_t pid = start_quantize(test_model_path(), out);
    int status = 0;
    for (;;) {
        if (temp_size(dir, temp, temp_len) >= GROWN_BYTES) {
            kill(pid, SIGSTOP);
            break;
        }
        if (waitpid(pid, &status, WNOHANG) == pid)
            return -1;
        nanosleep(&(struct timespec){0, 1000000}, NULL);
    }
    kill(pid, sig);
    kill(pid, SIGCONT);
    waitpid(pid, &status, 0);
    return status;
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

TEST(test_quantize_sigint_and_sigterm_remove_the_temp_file)
{
    if (!test_model_path())
        SKIP("models/SmolLM2-135M-Instruct.Q4_1.gguf missing (make models)");
    static const int signals[] = {SIGINT, SIGTERM};
    for (size_t i = 0; i < 2; i++) {
        const char *dir = support_make_dir(signals[i] == SIGINT ? "sigint" : "sigterm");
        char temp[1024];
        int status = interrupt_run(dir, signals[i], temp, sizeof temp);
        CHECK_MSG(status != -1, "gguf-quantize finished before it could be interrupted");
        CHECK_MSG(WIFSIGNALED(status) && WTERMSIG(status) == signals[i], "status %#x", status);
        CHECK_MSG(support_dir_entries(dir) == 0, "%s holds %d entries", dir,
                  support_dir_entries(dir));
    }
}
