/* edits.c - each command-line edit applied to the copy-with-edits writer, after the checks that
 * keep the result a file every reader accepts: the key's type kept unless a type is given, values
 * range-checked, split.* keys left to gguf-split, general.alignment a power of two (changing or
 * removing it re-lays out the data section, which is said on stderr). Every edit is also recorded
 * as a key_change, which later edits read (a key set twice) and the diff prints. */
#include "edit_tool.h"

#include <fnmatch.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char alignment_key[] = "general.alignment";

/* The key may come from the file (a pattern's match), so it is escaped. */
int edit_refuse(int status, const edit_request *edit, const char *key, const char *fmt, ...)
{
    char shown[256];
    ggtk_escape(key, strlen(key), shown, sizeof shown);
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, EDIT_ERROR_PREFIX "%s %s: ", edit->option, shown);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
    return status;
}

static void note(const edit_session *session, const char *key, const char *fmt, uint32_t a,
                 uint32_t b)
{
    if (session->quiet)
        return;
    char shown[256];
    ggtk_escape(key, strlen(key), shown, sizeof shown);
    fprintf(stderr, "gguf-edit: note: %s: ", shown);
    fprintf(stderr, fmt, a, b);
    fputc('\n', stderr);
}

static key_change *find_change(const edit_session *session, const char *key)
{
    for (size_t i = 0; i < session->n_changes; i++)
        if (strcmp(session->changes[i].key, key) == 0)
            return &session->changes[i];
    return NULL;
}

const ggtk_value *edit_current_value(const edit_session *session, const char *key)
{
    const key_change *change = find_change(session, key);
    if (change)
        return change->removed ? NULL : &change->value.value;
    return ggtk_get(session->source, key);
}

/* Record the key's new state, taking `value` (NULL: removed). */
static bool record(edit_session *session, const char *key, edit_value *value)
{
    key_change *change = find_change(session, key);
    if (!change) {
        if (session->n_changes == session->capacity) {
            size_t capacity = session->capacity ? 2 * session->capacity : 16;
            key_change *grown = realloc(session->changes, capacity * sizeof *grown);
            if (!grown)
                return false;
            session->changes = grown;
            session->capacity = capacity;
        }
        char *copy = strdup(key);
        if (!copy)
            return false;
        change = &session->changes[session->n_changes++];
        *change = (key_change){.key = copy, .old = ggtk_get(session->source, key)};
    }
    edit_value_free(&change->value);
    change->removed = value == NULL;
    if (value) {
        change->value = *value;
        *value = (edit_value){0};
    }
    return true;
}

static bool is_split_key(const char *key) { return strncmp(key, "split.", 6) == 0; }

static int refuse_split_key(const edit_request *edit, const char *key)
{
    return edit_refuse(EXIT_USAGE, edit, key,
                  "split.* keys describe a set of split files and are written by gguf-split; "
                  "editing one part would break the set");
}

/* A key a new pair may have: printable ASCII without spaces, as GGUF keys are. */
static bool key_spelling_ok(const char *key)
{
    if (!*key)
        return false;
    for (const char *p = key; *p; p++)
        if (*p <= ' ' || *p > '~')
            return false;
    return true;
}

int edit_store(edit_session *session, const edit_request *edit, const char *key, edit_value *value)
{
    uint32_t old_alignment = ggtk_alignment(session->source);
    const ggtk_value *current = edit_current_value(session, alignment_key);
    if (current && current->type == GGTK_VALUE_UINT32)
        old_alignment = current->v.u32;
    ggtk_status status = ggtk_writer_set(session->writer, key, &value->value);
    if (status == GGTK_ERR_INVALID && strcmp(key, alignment_key) == 0)
        return edit_refuse(EXIT_USAGE, edit, key, "expected a non-zero power of two of type u32");
    if (status != GGTK_OK)
        return edit_refuse(EXIT_FAILED, edit, key, "cannot set it: %s", ggtk_strerror(status));
    if (!record(session, key, value))
        return edit_refuse(EXIT_FAILED, edit, key, "out of memory");
    const ggtk_value *now = edit_current_value(session, key);
    if (strcmp(key, alignment_key) == 0 && now->v.u32 != old_alignment)
        note(session, key, "tensor data re-laid out at %u-byte alignment (was %u); the data bytes "
             "stay the same", now->v.u32, old_alignment);
    return 0;
}

/* KEY=VALUE keeping the type of the key as it stands, or KEY:TYPE=VALUE. */
static int set_text(edit_session *session, const edit_request *edit, const char *key,
                    const char *type_name, size_t type_len, const char *text)
{
    if (is_split_key(key))
        return refuse_split_key(edit, key);
    const ggtk_value *current = edit_current_value(session, key);
    ggtk_value_type type, elem_type = GGTK_VALUE_UINT8;
    bool is_array = false;
    if (type_name && !edit_type_parse(type_name, type_len, &elem_type, &is_array))
        return edit_refuse(EXIT_USAGE, edit, key, "unknown type '%.*s' (expected u8 i8 u16 i16 u32 "
                      "i32 u64 i64 f32 f64 bool str, or arr[TYPE])", (int)type_len, type_name);
    if (type_name) {
        type = is_array ? GGTK_VALUE_ARRAY : elem_type;
    } else if (!current && strcmp(key, alignment_key) == 0) {
        type = GGTK_VALUE_UINT32; /* the one type readers accept for it */
    } else if (!current) {
        return edit_refuse(EXIT_USAGE, edit, key, "no such key in the file; to add it, give its "
                      "type: --set %s:TYPE=VALUE", key);
    } else {
        type = current->type;
        elem_type = type == GGTK_VALUE_ARRAY ? current->v.arr.elem_type : type;
        if (elem_type == GGTK_VALUE_ARRAY)
            return edit_refuse(EXIT_USAGE, edit, key, "is an array of arrays, which cannot be "
                          "written on the command line");
    }
    if (!current && !key_spelling_ok(key))
        return edit_refuse(EXIT_USAGE, edit, key, "expected a key of printable ASCII without spaces, "
                      "such as general.name");
    edit_value value;
    char why[300];
    if (!edit_value_parse(text, type, elem_type, &value, why, sizeof why))
        return current && !type_name
                   ? edit_refuse(EXIT_USAGE, edit, key, "%s; KEY:TYPE=VALUE changes its type", why)
                   : edit_refuse(EXIT_USAGE, edit, key, "%s", why);
    int rc = edit_store(session, edit, key, &value);
    edit_value_free(&value);
    return rc;
}

static int apply_set(edit_session *session, const edit_request *edit)
{
    const char *eq = strchr(edit->arg, '=');
    const char *colon = eq ? memchr(edit->arg, ':', (size_t)(eq - edit->arg)) : NULL;
    const char *key_end = colon ? colon : eq;
    if (!eq || key_end == edit->arg) {
        fprintf(stderr, EDIT_ERROR_PREFIX "%s wants KEY=VALUE or KEY:TYPE=VALUE, not '%s'\n",
                edit->option, edit->arg);
        return EXIT_USAGE;
    }
    char *key = strndup(edit->arg, (size_t)(key_end - edit->arg));
    if (!key)
        return edit_refuse(EXIT_FAILED, edit, edit->arg, "out of memory");
    int rc = set_text(session, edit, key, colon ? colon + 1 : NULL,
                      colon ? (size_t)(eq - colon - 1) : 0, eq + 1);
    free(key);
    return rc;
}

int edit_set_string(edit_session *session, const edit_request *edit, const char *key,
                    const char *data, size_t len)
{
    edit_value value;
    char why[300];
    if (!edit_value_string(data, len, &value, why, sizeof why))
        return edit_refuse(EXIT_USAGE, edit, key, "%s", why);
    int rc = edit_store(session, edit, key, &value);
    edit_value_free(&value);
    return rc;
}

/* The whole file at `path`, NUL-terminated, in a malloc'd buffer; NULL after an error line. */
static char *read_whole_file(const edit_request *edit, const char *path, size_t *len)
{
    FILE *in = fopen(path, "rb");
    char *data = NULL;
    size_t size = 0, used = 0;
    while (in) {
        if (used + 1 >= size) {
            char *grown = realloc(data, size = size ? 2 * size : 65536);
            if (!grown)
                break;
            data = grown;
        }
        size_t n = fread(data + used, 1, size - used - 1, in);
        used += n;
        if (n == 0)
            break;
    }
    bool ok = in && data && !ferror(in);
    if (!ok)
        edit_refuse(EXIT_FAILED, edit, path, "cannot read it: %s",
               in ? "read error or out of memory" : "no such file or not readable");
    if (in)
        fclose(in);
    if (!ok) {
        free(data);
        return NULL;
    }
    data[used] = '\0';
    *len = used;
    return data;
}

static int set_string_from_file(edit_session *session, const edit_request *edit)
{
    size_t len;
    char *text = read_whole_file(edit, edit->arg, &len);
    if (!text)
        return EXIT_FAILED;
    edit_value value;
    char why[300];
    int rc = 0;
    if (!edit_value_string(text, len, &value, why, sizeof why))
        rc = edit_refuse(EXIT_FAILED, edit, edit->arg, "%s, expected a UTF-8 text file", why);
    else
        rc = edit_store(session, edit, edit->key, &value);
    edit_value_free(&value);
    free(text);
    return rc;
}

int edit_remove_key(edit_session *session, const edit_request *edit, const char *key)
{
    if (is_split_key(key))
        return refuse_split_key(edit, key);
    uint32_t old_alignment = ggtk_alignment(session->source);
    const ggtk_value *alignment = edit_current_value(session, alignment_key);
    if (alignment && alignment->type == GGTK_VALUE_UINT32)
        old_alignment = alignment->v.u32;
    ggtk_status status = ggtk_writer_remove(session->writer, key);
    if (status != GGTK_OK)
        return edit_refuse(EXIT_FAILED, edit, key, "cannot remove it: %s", ggtk_strerror(status));
    if (!record(session, key, NULL))
        return edit_refuse(EXIT_FAILED, edit, key, "out of memory");
    if (strcmp(key, alignment_key) == 0 && old_alignment != GGTK_DEFAULT_ALIGNMENT)
        note(session, key, "removed: tensor data re-laid out at the default %u-byte alignment "
             "(was %u); the data bytes stay the same", GGTK_DEFAULT_ALIGNMENT, old_alignment);
    return 0;
}

char **edit_matching_keys(const edit_session *session, const char *pattern, size_t *n)
{
    size_t capacity = (size_t)ggtk_kv_count(session->source) + session->n_changes + 1;
    char **keys = malloc(capacity * sizeof *keys);
    *n = 0;
    for (int64_t i = 0; keys && i < ggtk_kv_count(session->source); i++) {
        const char *key = ggtk_kv_key(session->source, i);
        if (edit_current_value(session, key) && fnmatch(pattern, key, 0) == 0)
            keys[(*n)++] = (char *)key;
    }
    for (size_t i = 0; keys && i < session->n_changes; i++) {
        const key_change *c = &session->changes[i];
        if (!c->old && !c->removed && fnmatch(pattern, c->key, 0) == 0)
            keys[(*n)++] = c->key;
    }
    return keys;
}

static int apply_remove(edit_session *session, const edit_request *edit)
{
    size_t n;
    char **keys = edit_matching_keys(session, edit->arg, &n);
    if (!keys)
        return edit_refuse(EXIT_FAILED, edit, edit->arg, "out of memory");
    int rc = 0;
    if (n == 0)
        rc = edit_refuse(EXIT_USAGE, edit, edit->arg, "%s", strpbrk(edit->arg, "*?[")
                             ? "no key in the file matches it" : "no such key in the file");
    for (size_t i = 0; rc == 0 && i < n; i++)
        if (is_split_key(keys[i]))
            rc = refuse_split_key(edit, keys[i]);
    /* Copies: removing a key added by an earlier edit frees the name it had in the record. */
    for (size_t i = 0; rc == 0 && i < n; i++) {
        char *key = strdup(keys[i]);
        rc = key ? edit_remove_key(session, edit, key) : edit_refuse(EXIT_FAILED, edit, edit->arg, "out of memory");
        free(key);
    }
    free(keys);
    return rc;
}

int edit_apply(edit_session *session, const edit_request *edit)
{
    switch (edit->kind) {
    case EDIT_SET: return apply_set(session, edit);
    case EDIT_REMOVE: return apply_remove(session, edit);
    case EDIT_STRING: return edit_set_string(session, edit, edit->key, edit->arg, strlen(edit->arg));
    case EDIT_STRING_FILE: return set_string_from_file(session, edit);
    case EDIT_TEMPLATE_CONFIG: return edit_apply_template_config(session, edit);
    case EDIT_SPECIAL_TOKEN:
    case EDIT_SPECIAL_TOKEN_ID: return edit_apply_special_token(session, edit);
    }
    return EXIT_USAGE;
}

void edit_session_free(edit_session *session)
{
    for (size_t i = 0; i < session->n_changes; i++) {
        free(session->changes[i].key);
        edit_value_free(&session->changes[i].value);
    }
    free(session->changes);
    ggtk_writer_free(session->writer);
    *session = (edit_session){0};
}
