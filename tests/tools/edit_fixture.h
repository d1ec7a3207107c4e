/* edit_fixture.h - what the gguf-edit tests share: a small GGUF file holding a key of every type
 * and a vocabulary, a run of the tool that captures stdout and stderr apart, and the metadata
 * gguf-py reads back (tests/tools/py/gguf_metadata.py). */
#ifndef EDIT_FIXTURE_H
#define EDIT_FIXTURE_H

#include <stdbool.h>

/* Write the fixture to `path`: general.architecture "llama", general.name "fixture",
 * x.u8 .. x.f64 / x.bool / x.str (one key per scalar type), x.arr_i32 [1, 2, 3],
 * tokenizer.ggml.tokens ["<s>", "</s>", "a", "b", "a"], tokenizer.ggml.bos_token_id u32 0, and
 * with `split` the keys of a one-part split set (split.no, split.count, split.tensors.count);
 * tensors a.weight f32 [16] and b.weight f32 [8 x 4] with deterministic data. */
bool edit_fixture_write(const char *path, bool split);

/* The result of one gguf-edit run. */
typedef struct edit_run {
    int rc;
    char *out; /* stdout, malloc'd */
    char *err; /* stderr, malloc'd */
} edit_run;

/* Run gguf-edit with `args` (a shell fragment, a printf format) inside directory `dir`. */
edit_run edit_tool_run(const char *dir, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void edit_run_free(edit_run *run);
/* Number of lines in `text`. */
int edit_count_lines(const char *text);

/* gguf-py's reading of `path` (gguf_metadata.py output, malloc'd), or NULL when it failed. */
char *edit_gguf_py_metadata(const char *path);

#endif
