/* test_writer_target.c - ggtk_writer_begin refuses a target that exists and is not a regular file
 * before it creates anything: the final rename would replace a FIFO or a device node, and a
 * directory would fail only after the whole file was written. */
#include "gguf/writer_test_support.h"
#include "test.h"

#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

TEST(test_writer_begin_refuses_a_fifo_or_a_directory_as_target)
{
    const char *dir = support_make_dir("writer_target");
    char fifo[600], sub[600];
    snprintf(fifo, sizeof fifo, "%s/fifo", dir);
    snprintf(sub, sizeof sub, "%s/sub", dir);
    CHECK(mkfifo(fifo, 0600) == 0 && mkdir(sub, 0700) == 0);
    ggtk_writer *w = ggtk_writer_new();
    CHECK(w != NULL);
    const char *targets[] = {fifo, sub};
    for (size_t i = 0; i < 2; i++) {
        ggtk_error err;
        CHECK(ggtk_writer_begin(w, targets[i], &err) == GGTK_ERR_PATH);
        CHECK_MSG(strstr(err.message, targets[i]) && strstr(err.message, "not a regular file"),
                  "%s", err.message);
        CHECK(ggtk_writer_temp_path(w) == NULL);
    }
    struct stat st;
    CHECK(stat(fifo, &st) == 0 && S_ISFIFO(st.st_mode));
    CHECK(support_dir_entries(dir) == 2 && support_dir_entries(sub) == 0);
    ggtk_writer_free(w);
}
