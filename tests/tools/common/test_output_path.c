/* test_output_path.c - the start-up checks of output paths (output_path.h) and the files the
 * tools write themselves (output_file.h), called directly. */
#include "gguf/writer_test_support.h"
#include "output_file.h"
#include "output_path.h"
#include "test.h"

#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

/* output_paths_check() for one input and up to two outputs (NULL: none). */
static ggtk_status check(const char *input, const char *out1, const char *out2, ggtk_error *err)
{
    tool_path in = {"-i", input}, outs[2] = {{"-o", out1}, {"-p", out2}};
    return output_paths_check(&in, 1, outs, out2 ? 2 : 1, err);
}

TEST(test_output_path_refuses_an_input_under_any_name)
{
    const char *dir = support_make_dir("op_input");
    char in[600], link[600], hard[600], dotted[600], other[600];
    snprintf(in, sizeof in, "%s/in.bin", dir);
    snprintf(link, sizeof link, "%s/link.bin", dir);
    snprintf(hard, sizeof hard, "%s/hard.bin", dir);
    snprintf(dotted, sizeof dotted, "%s/../%s/./in.bin", dir, strrchr(dir, '/') + 1);
    snprintf(other, sizeof other, "%s/other.bin", dir);
    CHECK(test_run(NULL, "printf x > '%s' && ln -s in.bin '%s' && ln '%s' '%s'", in, link, in,
                   hard) == 0);
    ggtk_error err;
    const char *same[] = {in, link, hard, dotted};
    for (size_t i = 0; i < 4; i++) {
        CHECK_MSG(check(in, same[i], NULL, &err) == GGTK_ERR_PATH, "%s", same[i]);
        CHECK(strstr(err.message, "-o ") == err.message && strstr(err.message, "is the input -i"));
    }
    CHECK(check(in, other, NULL, &err) == GGTK_OK);
    /* An input that does not exist yet is left for its reader to report. */
    CHECK(check(other, in, NULL, &err) == GGTK_OK);
    CHECK(support_dir_entries(dir) == 3);
}

TEST(test_output_path_refuses_two_outputs_that_are_one_file)
{
    const char *dir = support_make_dir("op_twice");
    char in[600], a[600], a_dotted[600], b[600];
    snprintf(in, sizeof in, "%s/in.bin", dir);
    snprintf(a, sizeof a, "%s/a.out", dir);
    snprintf(a_dotted, sizeof a_dotted, "%s/./a.out", dir);
    snprintf(b, sizeof b, "%s/b.out", dir);
    ggtk_error err;
    CHECK(check(in, a, a_dotted, &err) == GGTK_ERR_PATH);
    CHECK_MSG(strstr(err.message, "-p ") == err.message &&
              strstr(err.message, "is also the output -o"), "%s", err.message);
    CHECK(check(in, a, b, &err) == GGTK_OK);
    CHECK(support_dir_entries(dir) == 0);
}

TEST(test_output_path_refuses_non_regular_files_and_uncreatable_paths)
{
    const char *dir = support_make_dir("op_kinds");
    char in[600], fifo[600], sub[600], missing[600], under_file[600];
    snprintf(in, sizeof in, "%s/in.bin", dir);
    snprintf(fifo, sizeof fifo, "%s/fifo", dir);
    snprintf(sub, sizeof sub, "%s/sub", dir);
    snprintf(missing, sizeof missing, "%s/missing/x", dir);
    snprintf(under_file, sizeof under_file, "%s/in.bin/x", dir);
    CHECK(test_run(NULL, "printf x > '%s' && mkfifo '%s' && mkdir '%s'", in, fifo, sub) == 0);
    static const struct { int which; const char *needle; } cases[] = {
        {0, "is a FIFO"}, {1, "is a directory"}, {2, "No such file or directory"},
        {3, "Not a directory"}, {4, "is a device"}, {5, "cannot create a file there"}};
    const char *paths[] = {fifo, sub, missing, under_file, "/dev/null", "/proc/x"};
    ggtk_error err;
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        CHECK_MSG(check(in, paths[cases[i].which], NULL, &err) == GGTK_ERR_PATH, "%s",
                  paths[cases[i].which]);
        CHECK_MSG(strstr(err.message, cases[i].needle), "%s", err.message);
    }
    /* The probe left nothing behind. */
    CHECK(support_dir_entries(dir) == 3 && support_dir_entries(sub) == 0);
}

/* In a child with umask `mask`: write `path` through output_file; its mode bits, or -1. */
static int mode_written_under(mode_t mask, const char *path)
{
    pid_t pid = fork();
    if (pid == 0) {
        umask(mask);
        output_file f;
        bool ok = output_file_open(&f, path, NULL) == GGTK_OK && fputs("x", f.stream) >= 0 &&
                  output_file_commit(&f, NULL) == GGTK_OK;
        _exit(ok ? 0 : 1);
    }
    int status;
    struct stat st;
    if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status) || WEXITSTATUS(status) != 0 ||
        stat(path, &st) != 0)
        return -1;
    return (int)(st.st_mode & 07777);
}

TEST(test_output_file_honours_the_umask_and_leaves_only_the_target)
{
    const char *dir = support_make_dir("of_umask");
    char path[600];
    snprintf(path, sizeof path, "%s/a.svg", dir);
    CHECK(mode_written_under(022, path) == 0644);
    CHECK(mode_written_under(077, path) == 0600);
    CHECK(mode_written_under(027, path) == 0640);
    CHECK(support_dir_entries(dir) == 1);
}

TEST(test_output_file_refuses_a_fifo_and_abort_removes_the_temp_file)
{
    const char *dir = support_make_dir("of_fifo");
    char fifo[600], path[600];
    snprintf(fifo, sizeof fifo, "%s/fifo", dir);
    snprintf(path, sizeof path, "%s/out", dir);
    CHECK(mkfifo(fifo, 0600) == 0);
    output_file f;
    ggtk_error err;
    CHECK(output_file_open(&f, fifo, &err) == GGTK_ERR_PATH);
    CHECK(strstr(err.message, "not a regular file"));
    CHECK(output_file_open(&f, path, &err) == GGTK_OK);
    CHECK(support_dir_entries(dir) == 2);
    output_file_abort(&f);
    CHECK(support_dir_entries(dir) == 1);
    struct stat st;
    CHECK(stat(fifo, &st) == 0 && S_ISFIFO(st.st_mode));
}
