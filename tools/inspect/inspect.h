/* inspect.h - the parts of gguf-inspect: option parsing (main.c) hands an inspect_options to one
 * command per mode; each command prints its result and returns the process exit status. */
#ifndef INSPECT_H
#define INSPECT_H

#include <ggtk/gguf.h>
#include <ggtk/gguf_util.h>

#include <jansson.h>
#include <stdbool.h>
#include <stdio.h>

/* Exit statuses: success / a difference, mismatch or bad file / bad command line. */
enum { EXIT_OK = 0, EXIT_FAIL = 1, EXIT_USAGE = 2 };

typedef enum inspect_mode {
    MODE_REPORT, /* header, metadata, tensors, type and model summaries */
    MODE_HASH,   /* XXH64 manifest of tensor data */
    MODE_VERIFY, /* compare with a saved manifest */
    MODE_DIFF,   /* compare two files */
    MODE_CHECK,  /* validate, report the first problem */
} inspect_mode;

typedef struct inspect_options {
    inspect_mode mode;
    bool json;               /* one JSON document instead of text */
    bool full;               /* print arrays and strings in full */
    bool hash;               /* --hash given (a report with --json also carries hashes) */
    const char *tensor_glob; /* only tensors whose name matches (fnmatch), NULL for all */
    const char *manifest;    /* --verify argument */
    const char *files[2];
    int n_files;
} inspect_options;

/* Print "gguf-inspect: MESSAGE" on stderr; the message names the file itself. */
void inspect_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Open `path` or print its error; NULL on failure. */
ggtk_file *inspect_open(const char *path, ggtk_open_mode mode);

/* True when tensor `name` passes the --tensors filter. */
bool inspect_tensor_selected(const inspect_options *opt, const char *name);

/* XXH64 of the data of every tensor that passes the filter, stored at its file index in `hashes`
 * (ggtk_tensor_count() entries; others are left alone). Prints the error and returns false on
 * failure. */
bool inspect_hash_selected(const inspect_options *opt, const ggtk_file *file, uint64_t *hashes);

/* Commands: each returns the exit status. */
int inspect_report(const inspect_options *opt);
int inspect_hash(const inspect_options *opt);
int inspect_verify(const inspect_options *opt);
int inspect_diff(const inspect_options *opt);
int inspect_check(const inspect_options *opt);

/* The quantized-tensor half of --check: true when every element of every block-quantized tensor
 * of `file` (data in memory) dequantizes to a finite float; otherwise prints the first one found
 * (tensor, element, block offset) and returns false. */
bool inspect_check_blocks(const char *path, const ggtk_file *file);

/* The text report and the JSON report of one file; `hashes` (one per tensor, file order) and
 * `all_hash` are printed when hashes is not NULL. */
int inspect_print_text(const inspect_options *opt, const ggtk_file *file,
                       const ggtk_summary *summary);
int inspect_print_json(const inspect_options *opt, const ggtk_file *file,
                       const ggtk_summary *summary, const uint64_t *hashes, uint64_t all_hash);

/* JSON building blocks (print_json.c), each a new reference or NULL when out of memory. A string
 * that is not valid UTF-8 (token pieces need not be) gets U+FFFD for each invalid byte. */
json_t *inspect_json_string(const char *data, uint64_t len);
json_t *inspect_json_value(const ggtk_value *value, bool full);
json_t *inspect_json_shape(const ggtk_tensor_info *tensor);
/* Append `item` to the array *list; when item is NULL or appending fails, release the array and
 * set *list to NULL, so that a document missing an entry fails as a whole instead of silently. */
void inspect_json_append(json_t **list, json_t *item);

/* Text output (text.c). Every key, tensor name or string from a file reaches the terminal
 * through ggtk_escape(): no raw control byte, so a name cannot forge a line or a colour. */

/* Print `text` escaped, padded with spaces to `width` columns (0: no padding). */
void inspect_print_escaped(FILE *out, const char *text, int width);
/* Columns `text` takes once escaped (capped at 4096, for table widths). */
int inspect_escaped_width(const char *text);
/* `text` escaped, in a new string; NULL when out of memory. */
char *inspect_escape_dup(const char *text);
/* A metadata value by ggtk_value_format(): unless `full`, arrays show their first elements and
 * then "... (N elements)", and long strings end in "... (N bytes)". */
void inspect_print_value(FILE *out, const ggtk_value *value, bool full);
/* "uint32", "string", "array[string,49152]" into buf. */
const char *inspect_value_type_label(const ggtk_value *value, char *buf, size_t size);
/* "[576, 49152]" into buf. */
const char *inspect_shape_label(const ggtk_tensor_info *tensor, char *buf, size_t size);

#endif
