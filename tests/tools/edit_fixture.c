/* edit_fixture.c - see edit_fixture.h. */
#include "edit_fixture.h"
#include "gguf/writer_test_support.h"
#include "test.h"

#include <ggtk/gguf.h>

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static bool set_keys(ggtk_writer *w, bool split)
{
    static const int32_t numbers[] = {1, 2, 3};
    static const char *const tokens[] = {"<s>", "</s>", "a", "b", "a"};
    bool ok = ggtk_writer_set_string(w, "general.architecture", "llama") == GGTK_OK &&
              ggtk_writer_set_string(w, "general.name", "fixture") == GGTK_OK &&
              ggtk_writer_set_u8(w, "x.u8", 8) == GGTK_OK &&
              ggtk_writer_set_i8(w, "x.i8", -8) == GGTK_OK &&
              ggtk_writer_set_u16(w, "x.u16", 16) == GGTK_OK &&
              ggtk_writer_set_i16(w, "x.i16", -16) == GGTK_OK &&
              ggtk_writer_set_u32(w, "x.u32", 32) == GGTK_OK &&
              ggtk_writer_set_i32(w, "x.i32", -32) == GGTK_OK &&
              ggtk_writer_set_u64(w, "x.u64", 64) == GGTK_OK &&
              ggtk_writer_set_i64(w, "x.i64", -64) == GGTK_OK &&
              ggtk_writer_set_f32(w, "x.f32", 1.5f) == GGTK_OK &&
              ggtk_writer_set_f64(w, "x.f64", -2.5) == GGTK_OK &&
              ggtk_writer_set_bool(w, "x.bool", true) == GGTK_OK &&
              ggtk_writer_set_string(w, "x.str", "text") == GGTK_OK &&
              ggtk_writer_set_array(w, "x.arr_i32", GGTK_VALUE_INT32, 3, numbers) == GGTK_OK &&
              ggtk_writer_set_string_array(w, "tokenizer.ggml.tokens", tokens, 5) == GGTK_OK &&
              ggtk_writer_set_u32(w, "tokenizer.ggml.bos_token_id", 0) == GGTK_OK;
    if (ok && split)
        ok = ggtk_writer_set_u16(w, "split.no", 0) == GGTK_OK &&
             ggtk_writer_set_u16(w, "split.count", 1) == GGTK_OK &&
             ggtk_writer_set_i32(w, "split.tensors.count", 2) == GGTK_OK;
    return ok;
}

bool edit_fixture_write(const char *path, bool split)
{
    ggtk_writer *w = ggtk_writer_new();
    const uint64_t a_shape[] = {16}, b_shape[] = {8, 4};
    ggtk_error err;
    bool ok = w && set_keys(w, split) &&
              ggtk_writer_add_tensor(w, "a.weight", GGTK_TENSOR_F32, 1, a_shape) == GGTK_OK &&
              ggtk_writer_add_tensor(w, "b.weight", GGTK_TENSOR_F32, 2, b_shape) == GGTK_OK &&
              ggtk_writer_begin(w, path, &err) == GGTK_OK &&
              support_stream_tensors(w, 7, 24, &err) == GGTK_OK &&
              ggtk_writer_finish(w, &err) == GGTK_OK;
    ggtk_writer_free(w);
    return ok;
}

static char *read_text(const char *path)
{
    size_t size;
    unsigned char *data = support_read_file(path, &size);
    char *text = data ? realloc(data, size + 1) : NULL;
    if (!text) {
        free(data);
        return strdup("");
    }
    text[size] = '\0';
    return text;
}

edit_run edit_tool_run(const char *dir, const char *fmt, ...)
{
    char args[4096], cwd[512], err_path[600];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(args, sizeof args, fmt, ap);
    va_end(ap);
    if (!getcwd(cwd, sizeof cwd))
        snprintf(cwd, sizeof cwd, ".");
    snprintf(err_path, sizeof err_path, "%s", test_tmpfile("gguf-edit.stderr"));
    edit_run run = {0};
    run.rc = test_run(&run.out, "cd '%s' && '%s/%s' %s 2>'%s'", dir, cwd, test_tool("gguf-edit"),
                      args, err_path);
    run.err = read_text(err_path);
    if (!run.out)
        run.out = strdup("");
    return run;
}

void edit_run_free(edit_run *run)
{
    free(run->out);
    free(run->err);
    *run = (edit_run){0};
}

int edit_count_lines(const char *text)
{
    int lines = 0;
    for (const char *p = text; p && *p; p++)
        lines += *p == '\n';
    return lines;
}

char *edit_gguf_py_metadata(const char *path)
{
    char *out = NULL;
    int rc = test_run(&out, "python3 tests/tools/py/gguf_metadata.py '%s'", path);
    if (rc != 0) {
        fprintf(stderr, "    gguf_metadata.py %s failed: %s\n", path, out ? out : "");
        free(out);
        return NULL;
    }
    return out;
}
