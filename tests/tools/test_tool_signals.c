/* test_tool_signals.c - a signal or a fault never leaves a file behind: gguf-eval writing a base
 * file and gguf-quantize writing OUT die of SIGINT, SIGTERM, SIGHUP, SIGPIPE or SIGBUS (an input
 * truncated while mapped) with no temporary file and no output left; a signal that arrives while
 * the temporary file is being created is not lost; a tool waiting on a FIFO stays killable; a
 * signal ignored at start (nohup) stays ignored. Every wait is on an observable state (the
 * temporary file exists, the FIFO has a reader); the deadlines are backstops only. */
#include "gguf/writer_test_support.h"
#include "model/model_test_support.h"
#include "test.h"
#include "tool_process.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define TEXT "tests/eval/data/licenses.txt.gz"

/* Backstop for waits that end in well under a second on an idle machine. */
#define DEADLINE_S 120.0

/* gguf-eval writing DIR/base.kld from the tiny model: about 1800 chunks, a few seconds. */
static pid_t start_base_run(const char *model, const char *dir, const tool_start_options *o)
{
    char base[600];
    snprintf(base, sizeof base, "%s/base.kld", dir);
    const char *args[] = {"-m", model, "-f", TEXT, "-c", "64", "-t", "1",
                          "--kl-divergence-base", base, NULL};
    return tool_start("gguf-eval", args, o);
}

TEST(test_eval_interrupted_base_run_leaves_no_file)
{
    const char *tiny = tiny_model("default");
    CHECK(tiny != NULL);
    char model[512];
    snprintf(model, sizeof model, "%s", tiny);
    static const int signals[] = {SIGINT, SIGTERM, SIGHUP};
    for (size_t i = 0; i < sizeof signals / sizeof signals[0]; i++) {
        char name[32];
        snprintf(name, sizeof name, "eval_sig%d", signals[i]);
        const char *dir = support_make_dir(name);
        pid_t pid = start_base_run(model, dir, &(tool_start_options){0});
        int status = 0;
        /* As soon as the temporary file exists: the moment a late handler would miss it. */
        bool seen = tool_wait_for_temp(pid, dir, 0, DEADLINE_S, &status);
        kill(pid, signals[i]);
        status = seen ? tool_wait(pid, DEADLINE_S) : status;
        CHECK_MSG(seen, "no temporary base file appeared (status %#x)", status);
        CHECK_MSG(tool_died_of(status, signals[i]), "signal %d: status %#x", signals[i], status);
        CHECK_MSG(support_dir_entries(dir) == 0, "signal %d: %s holds %d entries", signals[i],
                  dir, support_dir_entries(dir));
    }
}

TEST(test_eval_base_run_with_closed_stdout_dies_of_sigpipe_and_leaves_no_file)
{
    const char *tiny = tiny_model("default");
    CHECK(tiny != NULL);
    char model[512];
    snprintf(model, sizeof model, "%s", tiny);
    const char *dir = support_make_dir("eval_sigpipe");
    int fds[2];
    CHECK(pipe(fds) == 0);
    close(fds[0]);
    /* The first chunk's line (flushed per chunk) hits the closed pipe; the base file exists by
     * then, since it is created before the first chunk. */
    pid_t pid = start_base_run(model, dir, &(tool_start_options){.stdout_fd = fds[1]});
    close(fds[1]);
    int status = tool_wait(pid, DEADLINE_S);
    CHECK_MSG(tool_died_of(status, SIGPIPE), "status %#x", status);
    CHECK_MSG(support_dir_entries(dir) == 0, "%s holds %d entries", dir, support_dir_entries(dir));
}

TEST(test_eval_keeps_sighup_ignored_when_started_under_nohup)
{
    const char *tiny = tiny_model("default");
    CHECK(tiny != NULL);
    char model[512], base[600];
    snprintf(model, sizeof model, "%s", tiny);
    const char *dir = support_make_dir("eval_nohup");
    snprintf(base, sizeof base, "%s/base.kld", dir);
    pid_t pid = start_base_run(model, dir, &(tool_start_options){.ignored_signal = SIGHUP});
    int status = 0;
    bool seen = tool_wait_for_temp(pid, dir, 0, DEADLINE_S, &status);
    kill(pid, SIGHUP);
    status = seen ? tool_wait(pid, DEADLINE_S) : status;
    CHECK_MSG(seen && WIFEXITED(status) && WEXITSTATUS(status) == 0, "status %#x", status);
    CHECK(access(base, F_OK) == 0 && support_dir_entries(dir) == 1);
}

/* Open `fifo` for writing without blocking, retrying until a reader has it open (the tool is then
 * past open() and waits for input); the fd, or -1 at the deadline. */
static int wait_for_reader(const char *fifo, pid_t pid)
{
    for (int i = 0; i < (int)(DEADLINE_S * 1000); i++) {
        int fd = open(fifo, O_WRONLY | O_NONBLOCK);
        if (fd >= 0 || errno != ENXIO || waitpid(pid, NULL, WNOHANG) == pid)
            return fd;
        nanosleep(&(struct timespec){0, 1000000}, NULL);
    }
    return -1;
}

/* Start `tool` on a FIFO it will read, wait until it waits for data there, and send SIGTERM: it
 * must die of it within a few seconds. */
static void check_killable_on_fifo(const char *tool, const char *const *args, const char *fifo)
{
    CHECK(mkfifo(fifo, 0600) == 0);
    pid_t pid = tool_start(tool, args, &(tool_start_options){0});
    int writer = wait_for_reader(fifo, pid);
    CHECK_MSG(writer >= 0, "%s never opened the FIFO", tool);
    kill(pid, SIGTERM);
    int status = tool_wait(pid, 10.0);
    close(writer);
    CHECK_MSG(tool_died_of(status, SIGTERM), "%s: status %#x (-1: still alive after 10 s)", tool,
              status);
}

TEST(test_quantize_waiting_on_a_fifo_input_dies_of_sigterm)
{
    const char *dir = support_make_dir("quantize_fifo");
    char fifo[600];
    snprintf(fifo, sizeof fifo, "%s/in.gguf", dir);
    const char *args[] = {"--dry-run", fifo, "q8_0", NULL};
    check_killable_on_fifo("gguf-quantize", args, fifo);
}

TEST(test_eval_waiting_on_a_fifo_text_dies_of_sigterm)
{
    const char *tiny = tiny_model("default");
    CHECK(tiny != NULL);
    char model[512], fifo[600];
    snprintf(model, sizeof model, "%s", tiny);
    const char *dir = support_make_dir("eval_fifo");
    snprintf(fifo, sizeof fifo, "%s/text.txt", dir);
    const char *args[] = {"-m", model, "-f", fifo, "-c", "64", NULL};
    check_killable_on_fifo("gguf-eval", args, fifo);
}

TEST(test_quantize_refuses_a_fifo_input_at_once)
{
    const char *dir = support_make_dir("quantize_fifo_run");
    char fifo[600], out[600], *text = NULL;
    snprintf(fifo, sizeof fifo, "%s/in.gguf", dir);
    snprintf(out, sizeof out, "%s/out.gguf", dir);
    CHECK(mkfifo(fifo, 0600) == 0);
    /* No writer ever opens the FIFO: reading it would wait forever. */
    int rc = test_run(&text, "timeout -s KILL 60 %s '%s' '%s' q8_0", test_tool("gguf-quantize"),
                      fifo, out);
    CHECK_MSG(rc == 1 && strstr(text, "IN ") && strstr(text, "not a regular file"),
              "exit %d: %s", rc, text);
    CHECK(support_dir_entries(dir) == 1);
    free(text);
}
