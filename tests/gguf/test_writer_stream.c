/* Tests of writing a file: the temporary file beside the target, streamed tensor data, and that
 * every failure (too much or too little data, I/O errors, unwritable directories, abandoning)
 * leaves neither the target nor a temporary file, and an existing target untouched. */
#include <ggtk/gguf.h>
#include "test.h"
#include "writer_test_support.h"

#include <fnmatch.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

/* Two tensors: 12 bytes of F32 and 68 bytes of Q8_0. */
static ggtk_writer *two_tensor_writer(void)
{
    ggtk_writer *w = ggtk_writer_new();
    ggtk_writer_set_string(w, "general.name", "stream test");
    ggtk_writer_add_tensor(w, "a", GGTK_TENSOR_F32, 1, (uint64_t[]){3});
    ggtk_writer_add_tensor(w, "b", GGTK_TENSOR_Q8_0, 2, (uint64_t[]){32, 2});
    return w;
}

static void write_text(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    if (f) {
        fputs(text, f);
        fclose(f);
    }
}

/* A new scratch directory `name` holding "model.gguf" with the text "old": the target a write
 * replaces, or must leave untouched when it fails. Its path goes to path[512]. */
static const char *dir_with_old_target(const char *name, char path[512])
{
    const char *dir = support_make_dir(name);
    snprintf(path, 512, "%s/model.gguf", dir);
    write_text(path, "old");
    return dir;
}

TEST(test_writer_uses_a_temp_file_beside_the_target)
{
    const char *dir = support_make_dir("temp_beside");
    char path[512], pattern[512];
    snprintf(path, sizeof path, "%s/model.gguf", dir);
    snprintf(pattern, sizeof pattern, "%s/.model.gguf.??????.tmp", dir);
    ggtk_writer *w = two_tensor_writer();
    CHECK(ggtk_writer_temp_path(w) == NULL);
    ggtk_error err = {0};
    CHECK(ggtk_writer_begin(w, path, &err) == GGTK_OK);
    const char *temp = ggtk_writer_temp_path(w);
    CHECK(temp && fnmatch(pattern, temp, FNM_PATHNAME) == 0);
    CHECK(access(temp, F_OK) == 0 && access(path, F_OK) != 0);
    /* Metadata and tensors are frozen while writing. */
    CHECK(ggtk_writer_set_u32(w, "x", 1) == GGTK_ERR_USAGE);
    CHECK(ggtk_writer_remove(w, "general.name") == GGTK_ERR_USAGE);
    CHECK(ggtk_writer_add_tensor(w, "c", GGTK_TENSOR_F32, 1, (uint64_t[]){1}) == GGTK_ERR_USAGE);
    CHECK(ggtk_writer_set_tensor_type(w, "a", GGTK_TENSOR_F16) == GGTK_ERR_USAGE);
    CHECK(ggtk_writer_remove_tensor(w, "a") == GGTK_ERR_USAGE);
    CHECK(ggtk_writer_begin(w, path, &err) == GGTK_ERR_USAGE);
    char *temp_copy = strdup(temp);
    CHECK(support_stream_tensors(w, 3, 5, &err) == GGTK_OK);
    CHECK_MSG(ggtk_writer_finish(w, &err) == GGTK_OK, "%s", err.message);
    CHECK(ggtk_writer_temp_path(w) == NULL && access(temp_copy, F_OK) != 0);
    CHECK(support_dir_entries(dir) == 1);
    /* Permissions as a plain creat() would give them, not mkstemp's 0600. */
    struct stat st;
    mode_t mask = umask(0);
    umask(mask);
    CHECK(stat(path, &st) == 0 && (st.st_mode & 0777) == (0666 & ~mask));
    free(temp_copy);
    ggtk_writer_free(w);
}

TEST(test_writer_replaces_an_existing_target)
{
    char path[512];
    const char *dir = dir_with_old_target("replace_target", path);
    ggtk_writer *w = two_tensor_writer();
    ggtk_error err = {0};
    CHECK(ggtk_writer_begin(w, path, &err) == GGTK_OK);
    CHECK(support_stream_tensors(w, 3, 1000, &err) == GGTK_OK);
    CHECK(ggtk_writer_finish(w, &err) == GGTK_OK);
    size_t size = 0;
    unsigned char *got = support_read_file(path, &size);
    CHECK(got && size == ggtk_writer_file_size(w) && memcmp(got, "GGUF", 4) == 0);
    CHECK(support_dir_entries(dir) == 1);
    free(got);
    ggtk_writer_free(w);
}

/* After a failed write: the directory holds only what it held before, `path` says "old". */
static bool nothing_left(const char *dir, const char *path)
{
    size_t size = 0;
    unsigned char *got = support_read_file(path, &size);
    bool untouched = got && size == 3 && memcmp(got, "old", 3) == 0;
    free(got);
    return untouched && support_dir_entries(dir) == 1;
}

TEST(test_writer_refuses_too_much_data_and_leaves_nothing)
{
    char path[512];
    const char *dir = dir_with_old_target("too_much", path);
    ggtk_writer *w = two_tensor_writer();
    ggtk_error err = {0};
    unsigned char data[100] = {0};
    CHECK(ggtk_writer_begin(w, path, &err) == GGTK_OK);
    CHECK(ggtk_writer_write_data(w, data, 70, &err) == GGTK_OK);
    CHECK(ggtk_writer_write_data(w, data, 11, &err) == GGTK_ERR_USAGE);
    CHECK(err.status == GGTK_ERR_USAGE && strstr(err.message, "only 10 remain"));
    CHECK(ggtk_writer_temp_path(w) == NULL && nothing_left(dir, path));
    /* The write is over: more data or finishing is misuse. */
    CHECK(ggtk_writer_write_data(w, data, 1, &err) == GGTK_ERR_USAGE);
    CHECK(ggtk_writer_finish(w, &err) == GGTK_ERR_USAGE);
    ggtk_writer_free(w);
}

TEST(test_writer_refuses_too_little_data_and_leaves_nothing)
{
    char path[512];
    const char *dir = dir_with_old_target("too_little", path);
    ggtk_writer *w = two_tensor_writer();
    ggtk_error err = {0};
    unsigned char data[100] = {0};
    CHECK(ggtk_writer_begin(w, path, &err) == GGTK_OK);
    CHECK(ggtk_writer_write_data(w, data, 20, &err) == GGTK_OK);
    CHECK(ggtk_writer_finish(w, &err) == GGTK_ERR_USAGE);
    CHECK_MSG(strstr(err.message, "tensor 'b' got 8 of its 68 bytes"), "%s", err.message);
    CHECK(ggtk_writer_temp_path(w) == NULL && nothing_left(dir, path));
    ggtk_writer_free(w);
}

TEST(test_writer_refuses_unwritable_directories)
{
    const char *dir = support_make_dir("unwritable");
    char path[512];
    ggtk_writer *w = two_tensor_writer();
    ggtk_error err = {0};
    snprintf(path, sizeof path, "%s/missing/model.gguf", dir);
    CHECK(ggtk_writer_begin(w, path, &err) == GGTK_ERR_IO);
    CHECK_MSG(strstr(err.message, "cannot create a temporary file"), "%s", err.message);
    snprintf(path, sizeof path, "%s/file", dir);
    write_text(path, "old");
    snprintf(path, sizeof path, "%s/file/model.gguf", dir);
    CHECK(ggtk_writer_begin(w, path, &err) == GGTK_ERR_IO);
    CHECK(ggtk_writer_begin(w, "", &err) == GGTK_ERR_USAGE);
    snprintf(path, sizeof path, "%s/", dir);
    CHECK(ggtk_writer_begin(w, path, &err) == GGTK_ERR_USAGE);
    CHECK(ggtk_writer_temp_path(w) == NULL && support_dir_entries(dir) == 1);
    if (geteuid() != 0) { /* root writes into read-only directories anyway */
        char locked[400];
        snprintf(locked, sizeof locked, "%s/locked", dir);
        CHECK(mkdir(locked, 0555) == 0);
        snprintf(path, sizeof path, "%s/model.gguf", locked);
        CHECK(ggtk_writer_begin(w, path, &err) == GGTK_ERR_IO);
        CHECK(support_dir_entries(locked) == 0);
    }
    ggtk_writer_free(w);
}

TEST(test_writer_io_error_removes_the_temp_file)
{
    char path[512];
    const char *dir = dir_with_old_target("io_error", path);
    ggtk_writer *w = ggtk_writer_new();
    CHECK(ggtk_writer_add_tensor(w, "big", GGTK_TENSOR_F32, 1, (uint64_t[]){1 << 20}) == GGTK_OK);
    /* Files in this test process may not grow past 64 KiB: writes fail with EFBIG. */
    signal(SIGXFSZ, SIG_IGN);
    CHECK(setrlimit(RLIMIT_FSIZE, &(struct rlimit){65536, 65536}) == 0);
    ggtk_error err = {0};
    CHECK(ggtk_writer_begin(w, path, &err) == GGTK_OK);
    ggtk_status status = support_stream_tensors(w, 1, 1 << 22, &err);
    if (status == GGTK_OK)
        status = ggtk_writer_finish(w, &err);
    CHECK(status == GGTK_ERR_IO && err.status == GGTK_ERR_IO);
    CHECK_MSG(strstr(err.message, "model.gguf") && strstr(err.message, "File too large"), "%s",
              err.message);
    CHECK(ggtk_writer_temp_path(w) == NULL && nothing_left(dir, path));
    ggtk_writer_free(w);
}

TEST(test_writer_abort_and_free_remove_the_temp_file)
{
    char path[512];
    const char *dir = dir_with_old_target("abandon", path);
    ggtk_error err = {0};
    unsigned char data[16] = {0};
    ggtk_writer *w = two_tensor_writer();
    CHECK(ggtk_writer_begin(w, path, &err) == GGTK_OK);
    CHECK(ggtk_writer_write_data(w, data, sizeof data, &err) == GGTK_OK);
    ggtk_writer_abort(w);
    CHECK(ggtk_writer_temp_path(w) == NULL && nothing_left(dir, path));
    CHECK(ggtk_writer_write_data(w, data, 1, &err) == GGTK_ERR_USAGE);
    /* After abort the writer can be edited and written again. */
    CHECK(ggtk_writer_set_u32(w, "x", 1) == GGTK_OK);
    CHECK(ggtk_writer_begin(w, path, &err) == GGTK_OK);
    ggtk_writer_free(w);
    CHECK(nothing_left(dir, path));
}

TEST(test_writer_without_tensors_writes_a_padded_header)
{
    const char *dir = support_make_dir("no_tensors");
    char path[512];
    snprintf(path, sizeof path, "%s/meta.gguf", dir);
    ggtk_writer *w = ggtk_writer_new();
    CHECK(ggtk_writer_set_string(w, "general.name", "x") == GGTK_OK);
    ggtk_error err = {0};
    unsigned char byte = 0;
    CHECK(ggtk_writer_begin(w, path, &err) == GGTK_OK);
    CHECK(ggtk_writer_write_data(w, &byte, 0, &err) == GGTK_OK);
    CHECK(ggtk_writer_finish(w, &err) == GGTK_OK);
    size_t size = 0;
    unsigned char *got = support_read_file(path, &size);
    /* 24 + (8+12 + 4 + 8+1) = 57, padded to 64 */
    CHECK(got && size == 64 && ggtk_writer_file_size(w) == 64 && got[57] == 0 && got[63] == 0);
    free(got);
    ggtk_writer_free(w);
}
