/* test_tool_outputs.c - what the tools write: no output ever names an input (by path, through a
 * symbolic or a hard link) or another output; an output that exists and is not a regular file
 * (a FIFO, a directory) is refused and left as it was; an output that cannot be created is
 * refused at start-up, in one line, before anything is loaded; new files get the permissions the
 * umask gives; and a full stdout is an error, not exit 0. */
#include "gguf/writer_test_support.h"
#include "model/model_test_support.h"
#include "quantize_fixture.h"
#include "test.h"
#include "tool_process.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#define TEXT "tests/eval/data/licenses.txt.gz"

/* Run `tool` with `args` (a printf format); it must exit 1 with exactly one stderr line starting
 * with `prefix` and containing `needle`, and print nothing on stdout: a refusal at start-up, since
 * a run that started would have printed its set-up lines. */
static bool refused_at_start(const char *tool, const char *prefix, const char *needle,
                             const char *fmt, ...) __attribute__((format(printf, 4, 5)));
static bool refused_at_start(const char *tool, const char *prefix, const char *needle,
                             const char *fmt, ...)
{
    char args[2048], err_path[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(args, sizeof args, fmt, ap);
    va_end(ap);
    snprintf(err_path, sizeof err_path, "%s", test_tmpfile("refused.stderr"));
    char *out = NULL, *err = NULL;
    int rc = test_run(&out, "%s %s 2>'%s'", test_tool(tool), args, err_path);
    test_run(&err, "cat '%s'", err_path);
    int lines = 0;
    for (const char *p = err; p && *p; p++)
        lines += *p == '\n';
    bool ok = rc == 1 && lines == 1 && out && !*out && strncmp(err, prefix, strlen(prefix)) == 0 &&
              strstr(err, needle);
    if (!ok)
        fprintf(stderr, "    %s %s\n    -> exit %d, stdout '%s', stderr '%s' (wanted '%s')\n", tool,
                args, rc, out ? out : "", err ? err : "", needle);
    free(out);
    free(err);
    return ok;
}

#define EVAL_REFUSES(needle, ...) \
    refused_at_start("gguf-eval", "gguf-eval: error: ", needle, __VA_ARGS__)
#define QUANTIZE_REFUSES(needle, ...) \
    refused_at_start("gguf-quantize", "gguf-quantize: error: ", needle, __VA_ARGS__)

/* Size and modification time, to see that a file was left alone. */
static bool same_stat(const char *path, const struct stat *before)
{
    struct stat now;
    return stat(path, &now) == 0 && now.st_size == before->st_size &&
           now.st_ino == before->st_ino && now.st_mtim.tv_sec == before->st_mtim.tv_sec &&
           now.st_mtim.tv_nsec == before->st_mtim.tv_nsec;
}

TEST(test_eval_refuses_outputs_that_name_an_input_or_each_other)
{
    const char *tiny = tiny_model("default");
    CHECK(tiny != NULL);
    const char *dir = support_make_dir("eval_same");
    char m[600], text[600], hard[600], soft[600], base[600];
    snprintf(m, sizeof m, "%s/model.gguf", dir);
    snprintf(text, sizeof text, "%s/text.gz", dir);
    snprintf(hard, sizeof hard, "%s/hard.gz", dir);
    snprintf(soft, sizeof soft, "%s/soft.gguf", dir);
    snprintf(base, sizeof base, "%s/base.kld", dir);
    CHECK(test_run(NULL, "cp '%s' '%s' && cp " TEXT " '%s' && ln '%s' '%s' && "
                         "ln -s model.gguf '%s'", tiny, m, text, text, hard, soft) == 0);
    struct stat model_stat, text_stat;
    CHECK(stat(m, &model_stat) == 0 && stat(text, &text_stat) == 0);
    CHECK(EVAL_REFUSES("--plot", "-m '%s' -f '%s' --plot '%s'", m, text, m));
    CHECK(EVAL_REFUSES("is the input -f", "-m '%s' -f '%s' --plot '%s/./text.gz'", m, text, dir));
    CHECK(EVAL_REFUSES("is the input -m", "-m '%s' -f '%s' --kl-divergence-base '%s'", m, text,
                       soft));
    CHECK(EVAL_REFUSES("is the input -f", "-m '%s' -f '%s' --kl-divergence-base '%s'", m, text,
                       hard));
    CHECK(EVAL_REFUSES("is also the output --kl-divergence-base",
                       "-m '%s' -f '%s' --kl-divergence-base '%s' --plot '%s/../%s/base.kld'", m,
                       text, base, dir, strrchr(dir, '/') + 1));
    /* With --kl-divergence the base is an input. */
    CHECK(test_run(NULL, "printf x > '%s'", base) == 0);
    CHECK(EVAL_REFUSES("is the input --kl-divergence-base",
                       "-m '%s' --kl-divergence --kl-divergence-base '%s' --plot '%s'", m, base,
                       base));
    CHECK(same_stat(m, &model_stat) && same_stat(text, &text_stat));
    CHECK(support_dir_entries(dir) == 5);
}

TEST(test_eval_refuses_unusable_outputs_at_start_up)
{
    const char *tiny = tiny_model("default");
    CHECK(tiny != NULL);
    char m[600], fifo[600], file[600];
    snprintf(m, sizeof m, "%s", tiny);
    const char *dir = support_make_dir("eval_unusable");
    snprintf(fifo, sizeof fifo, "%s/fifo", dir);
    snprintf(file, sizeof file, "%s/file", dir);
    CHECK(mkfifo(fifo, 0600) == 0 && test_run(NULL, "printf x > '%s'", file) == 0);
    const char *run = "-m '%s' -f " TEXT " -c 64 %s";
    char opt[1024];
    snprintf(opt, sizeof opt, "--plot '%s'", dir);
    CHECK(EVAL_REFUSES("is a directory", run, m, opt));
    snprintf(opt, sizeof opt, "--kl-divergence-base '%s'", dir);
    CHECK(EVAL_REFUSES("is a directory", run, m, opt));
    snprintf(opt, sizeof opt, "--kl-divergence-base '%s'", fifo);
    CHECK(EVAL_REFUSES("is a FIFO", run, m, opt));
    snprintf(opt, sizeof opt, "--plot '%s/missing/x.svg'", dir);
    CHECK(EVAL_REFUSES("cannot create a file there", run, m, opt));
    snprintf(opt, sizeof opt, "--plot '%s/x.svg'", file);
    CHECK(EVAL_REFUSES("Not a directory", run, m, opt));
    /* A directory nobody can create files in, even root (access(2) would say yes). */
    CHECK(EVAL_REFUSES("--plot /proc/x.svg: cannot create", run, m, "--plot /proc/x.svg"));
    if (geteuid() != 0) {
        CHECK(test_run(NULL, "mkdir '%s/ro' && chmod 555 '%s/ro'", dir, dir) == 0);
        snprintf(opt, sizeof opt, "--plot '%s/ro/x.svg'", dir);
        CHECK(EVAL_REFUSES("Permission denied", run, m, opt));
    }
    struct stat st;
    CHECK(stat(fifo, &st) == 0 && S_ISFIFO(st.st_mode));
    CHECK(support_dir_entries(dir) == 2 + (geteuid() != 0));
}

TEST(test_quantize_refuses_outputs_that_are_not_regular_files)
{
    const char *dir = support_make_dir("quantize_unusable");
    char in[600], fifo[600];
    snprintf(in, sizeof in, "%s/in.gguf", dir);
    snprintf(fifo, sizeof fifo, "%s/fifo", dir);
    CHECK(fixture_write(in, &(fixture_options){0}));
    CHECK(mkfifo(fifo, 0600) == 0);
    CHECK(QUANTIZE_REFUSES("OUT", "'%s' '%s' q8_0", in, fifo));
    CHECK(QUANTIZE_REFUSES("is a directory", "'%s' '%s' q8_0", in, dir));
    CHECK(QUANTIZE_REFUSES("cannot create a file there", "'%s' /proc/out.gguf q8_0", in));
    CHECK(test_run(NULL, "ln -s in.gguf '%s/link.gguf'", dir) == 0);
    CHECK(QUANTIZE_REFUSES("is the input IN", "'%s' '%s/link.gguf' q8_0", in, dir));
    struct stat st;
    CHECK(stat(fifo, &st) == 0 && S_ISFIFO(st.st_mode));
    CHECK(support_dir_entries(dir) == 3);
}

/* Mode bits of `path`, or -1. */
static int mode_of(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 ? (int)(st.st_mode & 07777) : -1;
}

TEST(test_outputs_get_the_permissions_of_the_umask)
{
    const char *tiny = tiny_model("default");
    CHECK(tiny != NULL);
    char m[600];
    snprintf(m, sizeof m, "%s", tiny);
    static const struct { mode_t umask; int mode; } cases[] = {{022, 0644}, {077, 0600}};
    for (size_t i = 0; i < 2; i++) {
        char name[32], base[600], svg[600], in[600], out[600];
        snprintf(name, sizeof name, "umask%03o", (unsigned)cases[i].umask);
        const char *dir = support_make_dir(name);
        snprintf(base, sizeof base, "%s/base.kld", dir);
        snprintf(svg, sizeof svg, "%s/ppl.svg", dir);
        snprintf(in, sizeof in, "%s/in.gguf", dir);
        snprintf(out, sizeof out, "%s/out.gguf", dir);
        CHECK(fixture_write(in, &(fixture_options){0}));
        tool_start_options o = {.set_umask = true, .umask = cases[i].umask};
        const char *eval_args[] = {"-m", m, "-f", TEXT, "-c", "64", "--chunks", "2",
                                   "--kl-divergence-base", base, "--plot", svg, NULL};
        int status = tool_wait(tool_start("gguf-eval", eval_args, &o), 120);
        CHECK_MSG(WIFEXITED(status) && WEXITSTATUS(status) == 0, "gguf-eval: %#x", status);
        const char *quantize_args[] = {"-q", in, out, "q8_0", NULL};
        status = tool_wait(tool_start("gguf-quantize", quantize_args, &o), 120);
        CHECK_MSG(WIFEXITED(status) && WEXITSTATUS(status) == 0, "gguf-quantize: %#x", status);
        CHECK_MSG(mode_of(base) == cases[i].mode && mode_of(svg) == cases[i].mode &&
                  mode_of(out) == cases[i].mode, "umask %03o: base %o, svg %o, out %o",
                  (unsigned)cases[i].umask, mode_of(base), mode_of(svg), mode_of(out));
    }
}

/* `command` with stdout on /dev/full: exit 1 and, as the last stderr line, `line`. */
static bool fails_on_full_stdout(const char *command, const char *line)
{
    char *err = NULL;
    int rc = test_run(&err, "%s 2>&1 >/dev/full", command);
    size_t n = err ? strlen(err) : 0;
    while (n > 0 && err[n - 1] == '\n')
        err[--n] = '\0';
    const char *last = err ? strrchr(err, '\n') : NULL;
    last = last ? last + 1 : err;
    bool ok = rc == 1 && last && strcmp(last, line) == 0;
    if (!ok)
        fprintf(stderr, "    %s >/dev/full\n    -> exit %d, stderr '%s'\n", command, rc,
                err ? err : "");
    free(err);
    return ok;
}

TEST(test_tools_fail_when_stdout_cannot_be_written)
{
    const char *tiny = tiny_model("default");
    CHECK(tiny != NULL);
    const char *dir = support_make_dir("full_stdout");
    char m[600], in[600], command[2048];
    snprintf(m, sizeof m, "%s", tiny);
    snprintf(in, sizeof in, "%s/in.gguf", dir);
    CHECK(fixture_write(in, &(fixture_options){0}));
    snprintf(command, sizeof command, "%s -m '%s' -f " TEXT " -c 64 --chunks 2",
             test_tool("gguf-eval"), m);
    CHECK(test_run(NULL, "%s >/dev/null 2>&1", command) == 0);
    CHECK(fails_on_full_stdout(command,
                               "gguf-eval: error: stdout: write failed: No space left on device"));
    snprintf(command, sizeof command, "%s '%s' '%s/out.gguf' q8_0", test_tool("gguf-quantize"), in,
             dir);
    CHECK(fails_on_full_stdout(command,
                               "gguf-quantize: error: stdout: write failed: No space left on "
                               "device"));
    snprintf(command, sizeof command, "%s '%s'", test_tool("gguf-inspect"), in);
    CHECK(test_run(NULL, "%s >/dev/null 2>&1", command) == 0);
    CHECK(fails_on_full_stdout(command, "gguf-inspect: stdout: write failed: No space left on "
                                        "device"));
    snprintf(command, sizeof command, "%s --help", test_tool("gguf-eval"));
    CHECK(fails_on_full_stdout(command,
                               "gguf-eval: error: stdout: write failed: No space left on device"));
}
