/* writer_test_support.h - helpers shared by the writer tests: scratch directories, file bytes,
 * deterministic tensor data, and the content description produced by the gguf-py oracle
 * (tests/gguf/py/gguf_py_oracle.py) turned into libgguf calls. */
#ifndef WRITER_TEST_SUPPORT_H
#define WRITER_TEST_SUPPORT_H

#include <ggtk/gguf.h>

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

/* A new empty directory "<test tmpdir>/<name>"; the path is in a static buffer that the next call
 * overwrites. Aborts the test on failure. */
const char *support_make_dir(const char *name);
/* Entries in `dir` other than "." and ".."; -1 when it cannot be read. */
int support_dir_entries(const char *dir);
/* The whole file in a malloc'd buffer (*size set), or NULL when it cannot be read. */
unsigned char *support_read_file(const char *path, size_t *size);
/* True when both files exist and hold the same bytes. */
bool support_same_bytes(const char *path_a, const char *path_b);
/* `size` pseudo-random bytes determined by `seed`. */
void support_fill(unsigned char *data, size_t size, unsigned seed);
/* Stream every tensor of `writer` (after begin) with support_fill(seed + index) bytes, in pieces
 * of at most `piece` bytes. */
ggtk_status support_stream_tensors(ggtk_writer *writer, unsigned seed, size_t piece,
                                   ggtk_error *err);

/* True when both values have the same type and the same contents, bit for bit (floats too),
 * recursing into arrays. */
bool support_values_equal(const ggtk_value *a, const ggtk_value *b);

/* Path of the oracle script and the command prefix that runs it. */
#define ORACLE_SCRIPT "tests/gguf/py/gguf_py_oracle.py"
/* Run the oracle's "write" (gguf-py writes `ggtk_path`, describes it in `json_path`); returns
 * its exit status and leaves its output in *output (malloc'd). */
int oracle_write(const char *ggtk_path, const char *json_path, char **output);
/* Load the oracle's JSON description; NULL on failure. */
json_t *oracle_load(const char *json_path);
/* Write the described content with libgguf to `path`; with `include_all` also the entries gguf-py
 * could not write. Tensor data is streamed in pieces of `piece` bytes. */
ggtk_status oracle_write_with_libgguf(json_t *doc, bool include_all, const char *path,
                                      size_t piece, ggtk_error *err);
/* True when `value` equals the described value of `type_name`; else false with a reason. */
bool oracle_value_matches(const ggtk_value *value, const char *type_name, json_t *described,
                          char *why, size_t why_size);
/* The described tensor's data, malloc'd (*size set). */
unsigned char *oracle_tensor_data(json_t *tensor, size_t *size);

#endif
