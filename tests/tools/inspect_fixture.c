/* inspect_fixture.c - crafted GGUF files (by gguf-py) and a modified model copy for the
 * gguf-inspect tests. Tests run one after another, so "made on first use" needs no locking. */
#include "inspect_fixture.h"

#include "gguf.h"
#include "test.h"

#include <stdio.h>
#include <string.h>
#include <unistd.h>

const char *inspect_crafted(const char *name)
{
    static char dir[512], path[600];
    snprintf(dir, sizeof dir, "%s/inspect", test_tmpdir());
    snprintf(path, sizeof path, "%s/%s", dir, name);
    if (access(path, R_OK) != 0 &&
        test_run(NULL, "python3 tests/tools/py/make_inspect_files.py '%s'", dir) != 0)
        return NULL;
    return access(path, R_OK) == 0 ? path : NULL;
}

/* Flip the bits of one byte in the middle of `tensor`'s data in the file at `path`. */
static bool flip_tensor_byte(const char *path, const char *tensor)
{
    gguf_file *file = gguf_open(path, GGUF_OPEN_METADATA, NULL);
    if (!file)
        return false;
    int64_t index = gguf_find_tensor(file, tensor);
    long offset = index < 0 ? -1
                            : (long)(gguf_data_offset(file) + gguf_tensor(file, index)->offset +
                                     gguf_tensor(file, index)->size / 2);
    gguf_close(file);
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
