/* edits.c - each command-line edit applied to the copy-with-edits writer, after the checks that
 * keep the result a file every reader accepts: the key's type kept unless a type is given, values
 * range-checked, split.* keys left to gguf-split, general.alignment a power of two (changing or
 * removing it re-lays out the data section, which is said on stderr). Every edit is also recorded
 * as a key_change, which later edits read (a key set twice) and the diff prints. */
#include "edit_tool.h"

#include <fnmatch.h>
#include <jansson.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char alignment_key[] = "general.alignment";
static const char template_key[] = "tokenizer.chat_template";
static const char tokens_key[] = "tokenizer.ggml.tokens";

/* The special tokens --special-token names, and their keys (spelled as llama.cpp spells them). */
static const struct {
    const char *name;
    const char *key;
} special_tokens[] = {
    {"bos", "tokenizer.ggml.bos_token_id"},       {"eos", "tokenizer.ggml.eos_token_id"},
    {"eot", "tokenizer.ggml.eot_token_id"},       {"eom", "tokenizer.ggml.eom_token_id"},
    {"unk", "tokenizer.ggml.unknown_token_id"},   {"sep", "tokenizer.ggml.seperator_token_id"},
    {"pad", "tokenizer.ggml.padding_token_id"},   {"mask", "tokenizer.ggml.mask_token_id"},
    {"fim_pre", "tokenizer.ggml.fim_pre_token_id"}, {"fim_suf", "tokenizer.ggml.fim_suf_token_id"},
    {"fim_mid", "tokenizer.ggml.fim_mid_token_id"}, {"fim_pad", "tokenizer.ggml.fim_pad_token_id"},
    {"fim_rep", "tokenizer.ggml.fim_rep_token_id"}, {"fim_sep", "tokenizer.ggml.fim_sep_token_id"},
    {"prefix", "tokenizer.ggml.prefix_token_id"}, {"suffix", "tokenizer.ggml.suffix_token_id"},
    {"middle", "tokenizer.ggml.middle_token_id"},
};
#define N_SPECIAL_TOKENS (sizeof special_tokens / sizeof special_tokens[0])

/* One line "gguf-edit: error: OPTION KEY: MESSAGE"; returns `status`. The key may come from the
 * file (a pattern's match), so it is escaped. */
__attribute__((format(printf, 4, 5))) static int refuse(int status, const edit_request *edit,
                                                        const char *key, const char *fmt, ...)
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

/* The key's value as the edits so far leave it; NULL when absent or removed. */
static const ggtk_value *current_value(const edit_session *session, const char *key)
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
    return refuse(EXIT_USAGE, edit, key,
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

/* Store `value` under `key` in the writer and the record. Takes `value` on success. */
static int store(edit_session *session, const edit_request *edit, const char *key,
                 edit_value *value)
{
    uint32_t old_alignment = ggtk_alignment(session->source);
    const ggtk_value *current = current_value(session, alignment_key);
    if (current && current->type == GGTK_VALUE_UINT32)
        old_alignment = current->v.u32;
    ggtk_status status = ggtk_writer_set(session->writer, key, &value->value);
    if (status == GGTK_ERR_INVALID && strcmp(key, alignment_key) == 0)
        return refuse(EXIT_USAGE, edit, key, "expected a non-zero power of two of type u32");
    if (status != GGTK_OK)
        return refuse(EXIT_FAILED, edit, key, "cannot set it: %s", ggtk_strerror(status));
    if (!record(session, key, value))
        return refuse(EXIT_FAILED, edit, key, "out of memory");
    const ggtk_value *now = current_value(session, key);
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
    const ggtk_value *current = current_value(session, key);
    ggtk_value_type type, elem_type = GGTK_VALUE_UINT8;
    bool is_array = false;
    if (type_name && !edit_type_parse(type_name, type_len, &elem_type, &is_array))
        return refuse(EXIT_USAGE, edit, key, "unknown type '%.*s' (expected u8 i8 u16 i16 u32 "
                      "i32 u64 i64 f32 f64 bool str, or arr[TYPE])", (int)type_len, type_name);
    if (type_name) {
        type = is_array ? GGTK_VALUE_ARRAY : elem_type;
    } else if (!current && strcmp(key, alignment_key) == 0) {
        type = GGTK_VALUE_UINT32; /* the one type readers accept for it */
    } else if (!current) {
        return refuse(EXIT_USAGE, edit, key, "no such key in the file; to add it, give its "
                      "type: --set %s:TYPE=VALUE", key);
    } else {
        type = current->type;
        elem_type = type == GGTK_VALUE_ARRAY ? current->v.arr.elem_type : type;
        if (elem_type == GGTK_VALUE_ARRAY)
            return refuse(EXIT_USAGE, edit, key, "is an array of arrays, which cannot be "
                          "written on the command line");
    }
    if (!current && !key_spelling_ok(key))
        return refuse(EXIT_USAGE, edit, key, "expected a key of printable ASCII without spaces, "
                      "such as general.name");
    edit_value value;
    char why[300];
    if (!edit_value_parse(text, type, elem_type, &value, why, sizeof why))
        return current && !type_name
                   ? refuse(EXIT_USAGE, edit, key, "%s; KEY:TYPE=VALUE changes its type", why)
                   : refuse(EXIT_USAGE, edit, key, "%s", why);
    int rc = store(session, edit, key, &value);
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
        return refuse(EXIT_FAILED, edit, edit->arg, "out of memory");
    int rc = set_text(session, edit, key, colon ? colon + 1 : NULL,
                      colon ? (size_t)(eq - colon - 1) : 0, eq + 1);
    free(key);
    return rc;
}

/* A string for a fixed key: its type becomes string whatever it was. */
static int set_string(edit_session *session, const edit_request *edit, const char *key,
                      const char *data, size_t len)
{
    edit_value value;
    char why[300];
    if (!edit_value_string(data, len, &value, why, sizeof why))
        return refuse(EXIT_USAGE, edit, key, "%s", why);
    int rc = store(session, edit, key, &value);
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
        refuse(EXIT_FAILED, edit, path, "cannot read it: %s",
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
        rc = refuse(EXIT_FAILED, edit, edit->arg, "%s, expected a UTF-8 text file", why);
    else
        rc = store(session, edit, edit->key, &value);
    edit_value_free(&value);
    free(text);
    return rc;
}

static int remove_key(edit_session *session, const edit_request *edit, const char *key)
{
    if (is_split_key(key))
        return refuse_split_key(edit, key);
    uint32_t old_alignment = ggtk_alignment(session->source);
    const ggtk_value *alignment = current_value(session, alignment_key);
    if (alignment && alignment->type == GGTK_VALUE_UINT32)
        old_alignment = alignment->v.u32;
    ggtk_status status = ggtk_writer_remove(session->writer, key);
    if (status != GGTK_OK)
        return refuse(EXIT_FAILED, edit, key, "cannot remove it: %s", ggtk_strerror(status));
    if (!record(session, key, NULL))
        return refuse(EXIT_FAILED, edit, key, "out of memory");
    if (strcmp(key, alignment_key) == 0 && old_alignment != GGTK_DEFAULT_ALIGNMENT)
        note(session, key, "removed: tensor data re-laid out at the default %u-byte alignment "
             "(was %u); the data bytes stay the same", GGTK_DEFAULT_ALIGNMENT, old_alignment);
    return 0;
}

/* The keys present now (file keys not removed, then added keys) that `match` accepts. */
static char **matching_keys(const edit_session *session, const char *pattern, size_t *n)
{
    size_t capacity = (size_t)ggtk_kv_count(session->source) + session->n_changes + 1;
    char **keys = malloc(capacity * sizeof *keys);
    *n = 0;
    for (int64_t i = 0; keys && i < ggtk_kv_count(session->source); i++) {
        const char *key = ggtk_kv_key(session->source, i);
        if (current_value(session, key) && fnmatch(pattern, key, 0) == 0)
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
    char **keys = matching_keys(session, edit->arg, &n);
    if (!keys)
        return refuse(EXIT_FAILED, edit, edit->arg, "out of memory");
    int rc = n > 0 ? 0
             : strpbrk(edit->arg, "*?[") ? refuse(EXIT_USAGE, edit, edit->arg, "no key in the file matches it")
                                         : refuse(EXIT_USAGE, edit, edit->arg, "no such key in the file");
    for (size_t i = 0; rc == 0 && i < n; i++)
        if (is_split_key(keys[i]))
            rc = refuse_split_key(edit, keys[i]);
    /* Copies: removing a key added by an earlier edit frees the name it had in the record. */
    for (size_t i = 0; rc == 0 && i < n; i++) {
        char *key = strdup(keys[i]);
        rc = key ? remove_key(session, edit, key) : refuse(EXIT_FAILED, edit, edit->arg, "out of memory");
        free(key);
    }
    free(keys);
    return rc;
}

static const char *special_token_key(const char *name, size_t len)
{
    for (size_t i = 0; i < N_SPECIAL_TOKENS; i++)
        if (strlen(special_tokens[i].name) == len && strncmp(name, special_tokens[i].name, len) == 0)
            return special_tokens[i].key;
    return NULL;
}

/* The vocabulary as an array of strings, or NULL. */
static const ggtk_array *token_list(const edit_session *session)
{
    const ggtk_value *tokens = current_value(session, tokens_key);
    return tokens && tokens->type == GGTK_VALUE_ARRAY && tokens->v.arr.elem_type == GGTK_VALUE_STRING
               ? &tokens->v.arr
               : NULL;
}

static bool is_integer_type(ggtk_value_type type)
{
    return type <= GGTK_VALUE_INT32 || type == GGTK_VALUE_UINT64 || type == GGTK_VALUE_INT64;
}

/* Set the special token's key to `id`, keeping the key's integer type (u32 for a new key). */
static int set_token_id(edit_session *session, const edit_request *edit, const char *key,
                        uint64_t id)
{
    const ggtk_value *current = current_value(session, key);
    ggtk_value_type type =
        current && is_integer_type(current->type) ? current->type : GGTK_VALUE_UINT32;
    char text[32];
    snprintf(text, sizeof text, "%llu", (unsigned long long)id);
    edit_value value;
    char why[300];
    if (!edit_value_parse(text, type, type, &value, why, sizeof why))
        return refuse(EXIT_USAGE, edit, key, "%s", why);
    int rc = store(session, edit, key, &value);
    edit_value_free(&value);
    return rc;
}

static int apply_special_token(edit_session *session, const edit_request *edit)
{
    const char *eq = strchr(edit->arg, '=');
    const char *key = eq ? special_token_key(edit->arg, (size_t)(eq - edit->arg)) : NULL;
    if (!key) {
        fprintf(stderr, EDIT_ERROR_PREFIX "%s wants NAME=%s with NAME one of", edit->option,
                edit->kind == EDIT_SPECIAL_TOKEN ? "TOKEN" : "ID");
        for (size_t i = 0; i < N_SPECIAL_TOKENS; i++)
            fprintf(stderr, " %s", special_tokens[i].name);
        fprintf(stderr, ", not '%s'\n", edit->arg);
        return EXIT_USAGE;
    }
    const ggtk_array *tokens = token_list(session);
    const char *text = eq + 1;
    uint64_t id = 0;
    if (edit->kind == EDIT_SPECIAL_TOKEN_ID) {
        edit_value parsed;
        char why[300];
        if (!edit_value_parse(text, GGTK_VALUE_UINT32, GGTK_VALUE_UINT32, &parsed, why, sizeof why))
            return refuse(EXIT_USAGE, edit, key, "%s", why);
        id = parsed.value.v.u32;
        if (tokens && id >= tokens->count)
            return refuse(EXIT_USAGE, edit, key, "token id %llu is past the vocabulary (%llu "
                          "tokens)", (unsigned long long)id, (unsigned long long)tokens->count);
        return set_token_id(session, edit, key, id);
    }
    if (!tokens)
        return refuse(EXIT_USAGE, edit, key, "the file has no %s to find '%s' in; use "
                      "--special-token-by-id", tokens_key, text);
    const ggtk_string *strings = tokens->data;
    size_t len = strlen(text);
    uint64_t found = 0;
    for (uint64_t i = tokens->count; i-- > 0;)
        if (strings[i].len == len && memcmp(strings[i].data, text, len) == 0) {
            id = i;
            found++;
        }
    if (found == 0)
        return refuse(EXIT_USAGE, edit, key, "no token '%s' in %s", text, tokens_key);
    if (found > 1 && !session->quiet)
        fprintf(stderr, "gguf-edit: note: %s: '%s' is %llu tokens; chose the first, id %llu "
                "(--special-token-by-id picks another)\n", key, text,
                (unsigned long long)found, (unsigned long long)id);
    return set_token_id(session, edit, key, id);
}

/* A template name as llama.cpp's converters write it: letters and digits, others '_'. */
static char *template_name(const char *name)
{
    char *clean = strdup(name);
    for (char *p = clean; p && *p; p++)
        if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9')))
            *p = '_';
    return clean;
}

/* A list of {"name", "template"}: "default" is tokenizer.chat_template, each other one
 * tokenizer.chat_template.NAME, and tokenizer.chat_templates lists the names. */
static int set_named_templates(edit_session *session, const edit_request *edit, json_t *list)
{
    size_t n = json_array_size(list), n_names = 0, index;
    json_t *choice;
    char **names = calloc(n + 1, sizeof *names);
    int rc = names ? 0 : refuse(EXIT_FAILED, edit, edit->arg, "out of memory");
    json_array_foreach(list, index, choice) {
        const char *name = json_string_value(json_object_get(choice, "name"));
        json_t *template = json_object_get(choice, "template");
        if (rc != 0 || !name || !*name || !json_is_string(template))
            continue;
        char key[512], *clean = template_name(name);
        if (!clean) {
            rc = refuse(EXIT_FAILED, edit, edit->arg, "out of memory");
            continue;
        }
        if (strcmp(clean, "default") == 0) {
            snprintf(key, sizeof key, "%s", template_key);
            free(clean);
        } else {
            snprintf(key, sizeof key, "%s.%.400s", template_key, clean);
            names[n_names++] = clean;
        }
        rc = set_string(session, edit, key, json_string_value(template),
                        json_string_length(template));
    }
    if (rc == 0 && n_names > 0) {
        edit_value value = {0};
        ggtk_string *views = malloc(n_names * sizeof *views);
        for (size_t i = 0; views && i < n_names; i++)
            views[i] = (ggtk_string){strlen(names[i]), names[i]};
        rc = views && edit_value_string_list(views, n_names, &value)
                 ? store(session, edit, "tokenizer.chat_templates", &value)
                 : refuse(EXIT_FAILED, edit, edit->arg, "out of memory");
        free(views);
        edit_value_free(&value);
    }
    for (size_t i = 0; names && i < n_names; i++)
        free(names[i]);
    free(names);
    return rc;
}

/* tokenizer_config.json's chat_template (a string, or a list of named templates) replaces every
 * tokenizer.chat_template* key of the file, as gguf-py's gguf_new_metadata does. */
static int apply_template_config(edit_session *session, const edit_request *edit)
{
    json_error_t error;
    json_t *config = json_load_file(edit->arg, 0, &error);
    if (!config)
        return refuse(EXIT_FAILED, edit, edit->arg, "line %d: %s, expected a JSON file such as "
                      "tokenizer_config.json", error.line, error.text);
    json_t *template = json_object_get(config, "chat_template");
    int rc = 0;
    if (!json_is_string(template) && !json_is_array(template))
        rc = refuse(EXIT_FAILED, edit, edit->arg, "no \"chat_template\" string or list in it");
    size_t n;
    char **old = rc == 0 ? matching_keys(session, "tokenizer.chat_template*", &n) : NULL;
    if (rc == 0 && !old)
        rc = refuse(EXIT_FAILED, edit, edit->arg, "out of memory");
    for (size_t i = 0; rc == 0 && i < n; i++) {
        char *key = strdup(old[i]);
        rc = key ? remove_key(session, edit, key) : refuse(EXIT_FAILED, edit, edit->arg, "out of memory");
        free(key);
    }
    free(old);
    if (rc == 0 && json_is_string(template))
        rc = set_string(session, edit, template_key, json_string_value(template),
                        json_string_length(template));
    else if (rc == 0)
        rc = set_named_templates(session, edit, template);
    json_decref(config);
    return rc;
}

int edit_apply(edit_session *session, const edit_request *edit)
{
    switch (edit->kind) {
    case EDIT_SET: return apply_set(session, edit);
    case EDIT_REMOVE: return apply_remove(session, edit);
    case EDIT_STRING: return set_string(session, edit, edit->key, edit->arg, strlen(edit->arg));
    case EDIT_STRING_FILE: return set_string_from_file(session, edit);
    case EDIT_TEMPLATE_CONFIG: return apply_template_config(session, edit);
    case EDIT_SPECIAL_TOKEN:
    case EDIT_SPECIAL_TOKEN_ID: return apply_special_token(session, edit);
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
