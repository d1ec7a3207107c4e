/* inspect_fixture.h - files the gguf-inspect tests share, made once per test run. */
#ifndef INSPECT_FIXTURE_H
#define INSPECT_FIXTURE_H

#include <stdbool.h>

/* Path of a crafted file from tests/tools/py/make_inspect_files.py ("small.gguf", "edited.gguf",
 * "nan.gguf", "guess.gguf"), written by gguf-py on first use; NULL when that failed. */
const char *inspect_crafted(const char *name);

/* Tensor whose data inspect_modified_model() changes. */
#define MODIFIED_TENSOR "blk.3.ffn_up.weight"

/* Path of a copy of the real model with one byte of MODIFIED_TENSOR's data flipped; NULL when the
 * model is missing or the copy failed. */
const char *inspect_modified_model(void);

/* Number of lines in `text` (a last line without newline counts). */
int inspect_count_lines(const char *text);

#endif
