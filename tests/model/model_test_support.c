/* model_test_support.c - see model_test_support.h. */
#include "model_test_support.h"

#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "test.h"

const char *tiny_model(const char *variant)
{
    static char path[512];
    char name[64];
    snprintf(name, sizeof name, "tiny_%s.gguf", variant);
    snprintf(path, sizeof path, "%s", test_tmpfile(name));
    if (access(path, R_OK) == 0)
        return path;
    char *out = NULL;
    int rc = test_run(&out, "python3 tests/model/py/tiny_llama.py make '%s' --variant %s", path,
                      variant);
    if (rc != 0)
        fprintf(stderr, "    tiny_llama.py make %s failed: %s\n", variant, out ? out : "");
    free(out);
    return rc == 0 ? path : NULL;
}

const char *edited_model(const char *source, const char *name, model_edit_fn edit)
{
    static char path[512];
    snprintf(path, sizeof path, "%s", test_tmpfile(name));
    ggtk_error err;
    ggtk_file *file = ggtk_open(source, GGTK_OPEN_MMAP, &err);
    if (!file)
        return NULL;
    ggtk_writer *writer = ggtk_writer_new_from_file(file);
    bool ok = writer && edit(writer) && ggtk_writer_write_from(writer, path, file, &err) == GGTK_OK;
    if (!ok)
        fprintf(stderr, "    could not write %s\n", path);
    ggtk_writer_free(writer);
    ggtk_close(file);
    return ok ? path : NULL;
}

const char *truncated_model(const char *source, const char *name, long size)
{
    static char path[512];
    snprintf(path, sizeof path, "%s", test_tmpfile(name));
    return test_run(NULL, "head -c %ld '%s' > '%s'", size, source, path) == 0 ? path : NULL;
}
