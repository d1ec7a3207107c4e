/* test_main.c - runs every registered test in a child process and prints one line per test and
 * the closing "N passed, N failed, N skipped" line. Arguments are substrings selecting tests. */
#define _GNU_SOURCE
#include "test.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#ifndef TEST_BIN_DIR
#define TEST_BIN_DIR "build/bin"
#endif

enum { MAX_TESTS = 4096, EXIT_SKIP = 77 };

static struct {
    const char *name;
    const char *file;
    test_fn fn;
} tests[MAX_TESTS];
static int n_tests;
static int current_failed;
static char tmpdir[256];

void test_register(const char *name, const char *file, test_fn fn)
{
    if (n_tests == MAX_TESTS) {
        fprintf(stderr, "test harness: more than %d tests\n", MAX_TESTS);
        abort();
    }
    tests[n_tests].name = name;
    tests[n_tests].file = file;
    tests[n_tests].fn = fn;
    n_tests++;
}

void test_fail(const char *file, int line, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "    %s:%d: ", file, line);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
    current_failed = 1;
}

void test_skip(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "    skipped: ");
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
    fflush(NULL);
    _exit(EXIT_SKIP);
}

const char *test_model_path(void)
{
    static const char *path = "models/SmolLM2-135M-Instruct.Q4_1.gguf";
    return access(path, R_OK) == 0 ? path : NULL;
}

const char *test_tmpdir(void) { return tmpdir; }

const char *test_tmpfile(const char *name)
{
    static char path[512];
    snprintf(path, sizeof path, "%s/%s", tmpdir, name);
    return path;
}

const char *test_tool(const char *tool)
{
    static char path[512];
    snprintf(path, sizeof path, "%s/%s", TEST_BIN_DIR, tool);
    return path;
}

const char *test_shared_data(void)
{
    static const char *path = "../shared/testdata";
    return access(path, R_OK) == 0 ? path : NULL;
}

int test_run(char **output, const char *fmt, ...)
{
    char *cmd = NULL;
    va_list ap;
    va_start(ap, fmt);
    if (vasprintf(&cmd, fmt, ap) < 0)
        abort();
    va_end(ap);
    char *full = NULL;
    if (asprintf(&full, "(%s) 2>&1", cmd) < 0)
        abort();
    free(cmd);
    FILE *pipe = popen(full, "r");
    free(full);
    if (!pipe)
        return -1;
    size_t cap = 4096, len = 0;
    char *buf = malloc(cap);
    size_t got;
    while (buf && (got = fread(buf + len, 1, cap - len - 1, pipe)) > 0) {
        len += got;
        if (cap - len < 2)
            buf = realloc(buf, cap *= 2);
    }
    if (!buf)
        abort();
    buf[len] = '\0';
    int status = pclose(pipe);
    if (output)
        *output = buf;
    else
        free(buf);
    if (WIFSIGNALED(status))
        return 128 + WTERMSIG(status);
    return WEXITSTATUS(status);
}

static bool selected(const char *name, int argc, char **argv)
{
    if (argc < 2)
        return true;
    for (int i = 1; i < argc; i++)
        if (strstr(name, argv[i]))
            return true;
    return false;
}

/* Run one test in a child; returns 0 pass, 1 fail, 2 skip. */
static int run_one(int index)
{
    fflush(NULL);
    pid_t pid = fork();
    if (pid < 0) {
        perror("fork");
        return 1;
    }
    if (pid == 0) {
        current_failed = 0;
        tests[index].fn();
        fflush(NULL);
        _exit(current_failed ? 1 : 0);
    }
    int status;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
        ;
    if (WIFSIGNALED(status)) {
        fprintf(stderr, "    killed by signal %d\n", WTERMSIG(status));
        return 1;
    }
    int code = WEXITSTATUS(status);
    return code == 0 ? 0 : code == EXIT_SKIP ? 2 : 1;
}

static void remove_tmpdir(void)
{
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmpdir);
    if (system(cmd) != 0)
        fprintf(stderr, "could not remove %s\n", tmpdir);
}

int main(int argc, char **argv)
{
    snprintf(tmpdir, sizeof tmpdir, "/tmp/ggtk-test-XXXXXX");
    if (!mkdtemp(tmpdir)) {
        perror("mkdtemp");
        return 1;
    }
    atexit(remove_tmpdir);
    int passed = 0, failed = 0, skipped = 0;
    for (int i = 0; i < n_tests; i++) {
        if (!selected(tests[i].name, argc, argv))
            continue;
        int result = run_one(i);
        const char *word[] = {"PASS", "FAIL", "SKIP"};
        printf("%s %s\n", word[result], tests[i].name);
        fflush(stdout);
        passed += result == 0;
        failed += result == 1;
        skipped += result == 2;
    }
    printf("%d passed, %d failed, %d skipped\n", passed, failed, skipped);
    return failed ? 1 : 0;
}
