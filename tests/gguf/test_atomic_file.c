/* test_atomic_file.c - the atomic file (ggtk/atomic_file.h): a commit puts exactly the written
 * bytes at the target with the umask's mode; anything short of a commit leaves the target as it
 * was and no temporary file; unusable targets and directories are refused before anything is
 * created. Each test runs in its own process, so the umask and file-size limits set here stay
 * here. */
#include "gguf/writer_test_support.h"
#include "test.h"

#include <ggtk/atomic_file.h>

#include <errno.h>
#include <fnmatch.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

/* Whether `path` holds exactly `text`. */
static bool holds(const char *path, const char *text)
{
    size_t size;
    unsigned char *bytes = support_read_file(path, &size);
    bool same = bytes && size == strlen(text) && memcmp(bytes, text, size) == 0;
    free(bytes);
    return same;
}

static void write_text(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    CHECK(f && fputs(text, f) >= 0 && fclose(f) == 0);
}

static int mode_of(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 ? (int)(st.st_mode & 07777) : -1;
}

TEST(test_atomic_file_commit_gives_the_content_and_the_umask_mode)
{
    const char *dir = support_make_dir("atomic_commit");
    char path[600], pattern[600];
    snprintf(path, sizeof path, "%s/out.bin", dir);
    snprintf(pattern, sizeof pattern, "%s/.out.bin.??????.tmp", dir);
    static const struct { mode_t mask; int mode; } cases[] = {
        {022, 0644}, {077, 0600}, {027, 0640}};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        umask(cases[i].mask);
        ggtk_error err = {0};
        ggtk_atomic_file *f = ggtk_atomic_file_open(path, &err);
        CHECK_MSG(f != NULL, "%s", err.message);
        const char *temp = ggtk_atomic_file_temp_path(f);
        CHECK(temp && fnmatch(pattern, temp, FNM_PATHNAME) == 0 && access(temp, F_OK) == 0);
        CHECK(strcmp(ggtk_atomic_file_path(f), path) == 0);
        /* Through the descriptor, then the stream (flushed by the commit). */
        CHECK(write(ggtk_atomic_file_fd(f), "head ", 5) == 5);
        CHECK(fprintf(ggtk_atomic_file_stream(f), "tail %zu\n", i) > 0);
        CHECK_MSG(ggtk_atomic_file_commit(f, &err) == GGTK_OK, "%s", err.message);
        CHECK(ggtk_atomic_file_temp_path(f) == NULL && ggtk_atomic_file_fd(f) == -1 &&
              ggtk_atomic_file_stream(f) == NULL);
        CHECK(ggtk_atomic_file_commit(f, &err) == GGTK_ERR_USAGE);
        ggtk_atomic_file_close(f);
        char expected[32];
        snprintf(expected, sizeof expected, "head tail %zu\n", i);
        CHECK(holds(path, expected));
        CHECK_MSG(mode_of(path) == cases[i].mode, "umask %03o: mode %03o", (unsigned)cases[i].mask,
                  (unsigned)mode_of(path));
        CHECK(support_dir_entries(dir) == 1);
    }
}

TEST(test_atomic_file_close_without_commit_keeps_the_old_target)
{
    const char *dir = support_make_dir("atomic_abandon");
    char path[600];
    snprintf(path, sizeof path, "%s/out.bin", dir);
    ggtk_atomic_file *f = ggtk_atomic_file_open(path, NULL);
    CHECK(f && fputs("new", ggtk_atomic_file_stream(f)) >= 0);
    CHECK(support_dir_entries(dir) == 1);
    ggtk_atomic_file_close(f);
    CHECK(support_dir_entries(dir) == 0);

    write_text(path, "old");
    f = ggtk_atomic_file_open(path, NULL);
    CHECK(f && write(ggtk_atomic_file_fd(f), "new", 3) == 3);
    CHECK(support_dir_entries(dir) == 2 && holds(path, "old"));
    ggtk_atomic_file_close(f);
    CHECK(support_dir_entries(dir) == 1 && holds(path, "old"));
    ggtk_atomic_file_close(NULL);
}

TEST(test_atomic_file_refuses_a_fifo_or_a_directory_before_creating_anything)
{
    const char *dir = support_make_dir("atomic_target");
    char fifo[600], sub[600], slash[600];
    snprintf(fifo, sizeof fifo, "%s/fifo", dir);
    snprintf(sub, sizeof sub, "%s/sub", dir);
    snprintf(slash, sizeof slash, "%s/new/", dir);
    CHECK(mkfifo(fifo, 0600) == 0 && mkdir(sub, 0700) == 0);
    const char *targets[] = {fifo, sub};
    const int codes[] = {EEXIST, EISDIR};
    for (size_t i = 0; i < 2; i++) {
        ggtk_error err = {0};
        CHECK(ggtk_atomic_file_open(targets[i], &err) == NULL && errno == codes[i]);
        CHECK(err.status == GGTK_ERR_PATH);
        CHECK_MSG(strstr(err.message, targets[i]) == err.message &&
                  strstr(err.message, "not a regular file"), "%s", err.message);
    }
    ggtk_error err = {0};
    CHECK(ggtk_atomic_file_open(slash, &err) == NULL && err.status == GGTK_ERR_USAGE);
    CHECK(ggtk_atomic_file_open("", &err) == NULL && err.status == GGTK_ERR_USAGE);
    CHECK(ggtk_atomic_file_open(NULL, NULL) == NULL && errno == EINVAL);
    struct stat st;
    CHECK(stat(fifo, &st) == 0 && S_ISFIFO(st.st_mode));
    CHECK(support_dir_entries(dir) == 2 && support_dir_entries(sub) == 0);
}

TEST(test_atomic_file_names_a_directory_it_cannot_write)
{
    const char *dir = support_make_dir("atomic_unwritable");
    char directory[600], path[700];
    snprintf(directory, sizeof directory, "%s/missing", dir);
    snprintf(path, sizeof path, "%s/out.bin", directory);
    ggtk_error err = {0};
    CHECK(ggtk_atomic_file_open(path, &err) == NULL && errno == ENOENT);
    CHECK(err.status == GGTK_ERR_IO);
    char needle[700];
    snprintf(needle, sizeof needle, "cannot create a temporary file in %s: %s", directory,
             strerror(ENOENT));
    CHECK_MSG(strstr(err.message, path) == err.message && strstr(err.message, needle), "%s",
              err.message);
    /* /proc refuses new files, to root too. */
    CHECK(ggtk_atomic_file_open("/proc/out.bin", &err) == NULL && err.status == GGTK_ERR_IO);
    CHECK_MSG(strstr(err.message, "temporary file in /proc: "), "%s", err.message);
    CHECK(support_dir_entries(dir) == 0);
}

TEST(test_atomic_file_failed_commit_removes_the_temp_file)
{
    const char *dir = support_make_dir("atomic_failed_commit");
    char path[600];
    snprintf(path, sizeof path, "%s/out.bin", dir);
    /* The rename fails: the target became a directory after the open. */
    ggtk_error err = {0};
    ggtk_atomic_file *f = ggtk_atomic_file_open(path, &err);
    CHECK(f && mkdir(path, 0700) == 0);
    CHECK(ggtk_atomic_file_commit(f, &err) == GGTK_ERR_IO);
    CHECK_MSG(strstr(err.message, path) == err.message && strstr(err.message, "cannot rename"),
              "%s", err.message);
    CHECK(ggtk_atomic_file_temp_path(f) == NULL && support_dir_entries(dir) == 1);
    ggtk_atomic_file_close(f);
    CHECK(rmdir(path) == 0);
    /* A buffered write fails (files may not grow past 4 KiB here): the commit reports it. */
    signal(SIGXFSZ, SIG_IGN);
    CHECK(setrlimit(RLIMIT_FSIZE, &(struct rlimit){4096, 4096}) == 0);
    write_text(path, "old");
    f = ggtk_atomic_file_open(path, &err);
    CHECK(f != NULL);
    for (int i = 0; i < 8192; i++)
        fputc('x', ggtk_atomic_file_stream(f));
    CHECK(ggtk_atomic_file_commit(f, &err) == GGTK_ERR_IO);
    CHECK_MSG(strstr(err.message, "cannot write") && strstr(err.message, strerror(EFBIG)), "%s",
              err.message);
    ggtk_atomic_file_close(f);
    CHECK(support_dir_entries(dir) == 1 && holds(path, "old"));
}
