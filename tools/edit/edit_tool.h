/* edit_tool.h - the pieces of gguf-edit: the command line (args.c), values parsed from text
 * (value_parse.c), the edits applied to a copy-with-edits writer (edits.c, and tokenizer_edits.c
 * for special tokens and chat templates), the metadata diff (report.c). main.c sequences them. */
#ifndef EDIT_TOOL_H
#define EDIT_TOOL_H

#include <ggtk/gguf.h>

#include <stdbool.h>
#include <stddef.h>

/* Exit statuses: a bad file or a failed write / a bad command line or an edit the file refuses. */
enum { EXIT_FAILED = 1, EXIT_USAGE = 2 };

/* Every error line starts with this. */
#define EDIT_ERROR_PREFIX "gguf-edit: error: "

/* ---- command line (args.c) ---- */

typedef enum edit_kind {
    EDIT_SET,              /* --set KEY=VALUE or KEY:TYPE=VALUE */
    EDIT_REMOVE,           /* --remove KEY or GLOB */
    EDIT_STRING,           /* a string option for a fixed key (--name, --chat-template ...) */
    EDIT_STRING_FILE,      /* a fixed key's string from a file (--chat-template-file) */
    EDIT_TEMPLATE_CONFIG,  /* --chat-template-config tokenizer_config.json */
    EDIT_SPECIAL_TOKEN,    /* --special-token NAME=TOKEN_TEXT */
    EDIT_SPECIAL_TOKEN_ID, /* --special-token-by-id NAME=ID */
} edit_kind;

/* One edit as the command line gives it, applied in command-line order. */
typedef struct edit_request {
    edit_kind kind;
    const char *option; /* as typed, for messages ("--set") */
    const char *arg;    /* its argument (points into argv) */
    const char *key;    /* the fixed key of EDIT_STRING / EDIT_STRING_FILE, else NULL */
} edit_request;

typedef struct edit_args {
    const char *input;
    const char *output; /* NULL with --in-place or --dry-run without OUT */
    bool in_place;
    bool dry_run;
    bool quiet;
    edit_request *edits; /* owned array */
    size_t n_edits;
} edit_args;

/* Parse argv. Returns 0 on success, EXIT_USAGE after one line on stderr, or 0 with *exit_now set
 * after printing the help on stdout. */
int edit_args_parse(edit_args *args, int argc, char **argv, bool *exit_now);
void edit_args_free(edit_args *args);

/* ---- values from text (value_parse.c) ---- */

/* A value parsed from the command line or a file; `value` may point into `storage` (owned) or
 * into the text it was parsed from. */
typedef struct edit_value {
    ggtk_value value;
    void *storage;
} edit_value;

/* The value type TYPE of "KEY:TYPE=VALUE": u8 i8 u16 i16 u32 i32 u64 i64 f32 f64 bool str, the
 * libgguf names (uint32, float32, string ...), or arr[T] for an array of T (*is_array set).
 * False when the name is none of these. */
bool edit_type_parse(const char *name, size_t len, ggtk_value_type *type, bool *is_array);
/* "u32", "str", "arr[u32]" for a type (static storage). */
const char *edit_type_label(ggtk_value_type type, ggtk_value_type elem_type);

/* Parse `text` as a `type` value (an array of `elem_type` when type is ARRAY): integers in
 * decimal, range-checked; floats as strtod reads them (nan, inf too), f32 range-checked; bool
 * true/false/1/0; strings as given (valid UTF-8 only); arrays as a JSON list ([1, 2], ["a", "b"],
 * []). Strings point into `text`, which must outlive the value. False with the reason in `why`
 * ("not a uint32 (a whole number from 0 to 4294967295)"). */
bool edit_value_parse(const char *text, ggtk_value_type type, ggtk_value_type elem_type,
                      edit_value *out, char *why, size_t why_size);
/* A string value holding `len` bytes at `data` (copied); false when they are not valid UTF-8
 * (why set) or memory ran out. */
bool edit_value_string(const char *data, size_t len, edit_value *out, char *why, size_t why_size);
/* A string array holding copies of the `count` strings `items`; false when memory ran out. */
bool edit_value_string_list(const ggtk_string *items, size_t count, edit_value *out);
void edit_value_free(edit_value *value);
/* Whether `a` and `b` have the same type and the same contents, bit for bit. */
bool edit_values_equal(const ggtk_value *a, const ggtk_value *b);

/* ---- applying edits (edits.c) ---- */

/* What happened to one key, in the order keys were first edited. */
typedef struct key_change {
    char *key;
    const ggtk_value *old; /* in the source file, NULL when the key is new */
    bool removed;
    edit_value value; /* the new value unless removed */
} key_change;

typedef struct edit_session {
    const ggtk_file *source;
    ggtk_writer *writer; /* from ggtk_writer_new_from_file(source) */
    key_change *changes;
    size_t n_changes;
    size_t capacity;
    bool quiet; /* no notes on stderr */
} edit_session;

/* Helpers the edit modules (edits.c, tokenizer_edits.c) share. */

/* One line "gguf-edit: error: OPTION KEY: MESSAGE" on stderr; returns `status`. */
int edit_refuse(int status, const edit_request *edit, const char *key, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
/* The key's value as the edits so far leave it; NULL when absent or removed. */
const ggtk_value *edit_current_value(const edit_session *session, const char *key);
/* Store `value` under `key` in the writer and the record; takes `value` on success (the caller
 * frees it either way with edit_value_free). 0 or the exit status after a refusal line. */
int edit_store(edit_session *session, const edit_request *edit, const char *key, edit_value *value);
/* A string for `key` (`len` bytes, UTF-8 checked); the key's type becomes string. */
int edit_set_string(edit_session *session, const edit_request *edit, const char *key,
                    const char *data, size_t len);
/* Remove `key`, which must be present (split.* keys refused). */
int edit_remove_key(edit_session *session, const edit_request *edit, const char *key);
/* The keys present now (file keys not removed, then added keys) matching the shell pattern, in
 * a malloc'd array of pointers owned by the session or the file (*n set); NULL when out of
 * memory. Removing a key may free its name: copy a name before removing it. */
char **edit_matching_keys(const edit_session *session, const char *pattern, size_t *n);

/* The tokenizer edits (tokenizer_edits.c): --special-token / --special-token-by-id and
 * --chat-template-config. */
int edit_apply_special_token(edit_session *session, const edit_request *edit);
int edit_apply_template_config(edit_session *session, const edit_request *edit);

/* Apply one edit to the session's writer. 0, or EXIT_USAGE / EXIT_FAILED after one line on
 * stderr naming the option, the key and what was expected. */
int edit_apply(edit_session *session, const edit_request *edit);
void edit_session_free(edit_session *session);

/* ---- report (report.c) ---- */

/* Print the metadata diff of the session on stdout, one line per changed key ("+ KEY  TYPE  NEW",
 * "- KEY  TYPE  OLD", "~ KEY  TYPE  OLD -> NEW"); returns the number of keys that changed. */
size_t edit_report_diff(const edit_session *session, bool print);

#endif
