/* inspect_fixture.h - what the gguf-inspect tests share: files made once per test run, running
 * the tool for JSON, and looking for expected lines in its output. */
#ifndef INSPECT_FIXTURE_H
#define INSPECT_FIXTURE_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

#include "test.h"

/* The tool under test. */
#define INSPECT test_tool("gguf-inspect")

/* The real model's path; skips the calling test when the model is missing. */
const char *inspect_model_or_skip(void);

/* Path of a crafted file from tests/tools/py/make_inspect_files.py ("small.gguf", "edited.gguf",
 * "nan.gguf", "guess.gguf", "bytes.gguf"), written by gguf-py on first use; NULL when that failed.
 * The path stays valid for the whole test run, so several may be held at once. */
const char *inspect_crafted(const char *name);

/* Run `gguf-inspect --json ARGS` and parse its output; NULL (after test_fail) when the exit
 * status is not `expected_exit` or the output is not JSON. Release with json_decref(). */
json_t *inspect_json(const char *args, int expected_exit);

/* The first of expected[0..n) that is not a substring of `text`, or NULL when all are. */
const char *inspect_first_missing(const char *text, const char *const *expected, size_t n);

/* Tensor whose data inspect_modified_model() changes. */
#define MODIFIED_TENSOR "blk.3.ffn_up.weight"

/* Path of a copy of the real model with one byte of MODIFIED_TENSOR's data flipped; NULL when the
 * model is missing or the copy failed. */
const char *inspect_modified_model(void);

/* Number of lines in `text` (a last line without newline counts). */
int inspect_count_lines(const char *text);

#endif
