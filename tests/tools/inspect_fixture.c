/* inspect_fixture.c - crafted GGUF files (by gguf-py), a modified model copy and the helpers the
 * gguf-inspect tests share. Tests run one after another, so "made on first use" needs no locking. */
#include "inspect_fixture.h"

#include <ggtk/gguf.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

const char *inspect_model_or_skip(void)
{
    const char *model = test_model_path();
    if (!model)
        SKIP("model missing: run make models");
    return model;
}

const char *inspect_crafted(const char *name)
{
    /* One path per name asked for (a handful), so that callers may hold several. */
    static struct {
        char name[64];
        char path[600];
    } made[16];
    static size_t n_made;
    char dir[512], path[600];
    snprintf(dir, sizeof dir, "%s/inspect", test_tmpdir());
    snprintf(path, sizeof path, "%s/%s", dir, name);
    if (access(path, R_OK) != 0 &&
        test_run(NULL, "python3 tests/tools/py/make_inspect_files.py '%s'", dir) != 0)
        return NULL;
    if (access(path, R_OK) != 0)
        return NULL;
    for (size_t i = 0; i < n_made; i++)
        if (strcmp(made[i].name, name) == 0)
            return made[i].path;
    if (n_made == sizeof made / sizeof made[0] || strlen(name) >= sizeof made[0].name)
        return NULL;
    snprintf(made[n_made].name, sizeof made[n_made].name, "%s", name);
    snprintf(made[n_made].path, sizeof made[n_made].path, "%s", path);
    return made[n_made++].path;
}

json_t *inspect_json(const char *args, int expected_exit)
{
    char *out = NULL;
    int rc = test_run(&out, "%s --json %s 2>/dev/null", INSPECT, args);
    json_error_t error;
    json_t *doc = rc == expected_exit ? json_loads(out, 0, &error) : NULL;
    if (!doc)
        test_fail(__FILE__, __LINE__, "exit %d (expected %d) or bad JSON (%s): %.200s", rc,
                  expected_exit, rc == expected_exit ? error.text : "", out);
    free(out);
    return doc;
}

const char *inspect_first_missing(const char *text, const char *const *expected, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (!strstr(text, expected[i]))
            return expected[i];
    return NULL;
}

/* Flip the bits of one byte in the middle of `tensor`'s data in the file at `path`. */
static bool flip_tensor_byte(const char *path, const char *tensor)
{
    ggtk_file *file = ggtk_open(path, GGTK_OPEN_METADATA, NULL);
    if (!file)
        return false;
    int64_t index = ggtk_find_tensor(file, tensor);
    long offset = index < 0 ? -1
                            : (long)(ggtk_data_offset(file) + ggtk_tensor(file, index)->offset +
                                     ggtk_tensor(file, index)->size / 2);
    ggtk_close(file);
    FILE *f = offset < 0 ? NULL : fopen(path, "r+b");
    if (!f)
        return false;
    int byte = fseek(f, offset, SEEK_SET) == 0 ? fgetc(f) : EOF;
    bool ok = byte != EOF && fseek(f, offset, SEEK_SET) == 0 && fputc(byte ^ 0xFF, f) != EOF;
    return fclose(f) == 0 && ok;
}

const char *inspect_modified_model(void)
{
    static char path[600];
    const char *model = test_model_path();
    if (!model)
        return NULL;
    snprintf(path, sizeof path, "%s/inspect-modified.gguf", test_tmpdir());
    if (access(path, R_OK) == 0)
        return path;
    char partial[620];
    snprintf(partial, sizeof partial, "%s.part", path);
    if (test_run(NULL, "cp '%s' '%s'", model, partial) != 0 ||
        !flip_tensor_byte(partial, MODIFIED_TENSOR) || rename(partial, path) != 0)
        return NULL;
    return path;
}

int inspect_count_lines(const char *text)
{
    int lines = 0;
    for (const char *p = text; *p; p++)
        lines += *p == '\n' || (p[1] == '\0');
    return lines;
}
