/* tokenizer_edits.c - the edits that know the tokenizer's keys: special token ids by token text
 * or by id (checked against tokenizer.ggml.tokens), and the chat templates of a Hugging Face
 * tokenizer_config.json (one, or a list of named ones). */
#include "edit_tool.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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
    const ggtk_value *tokens = edit_current_value(session, tokens_key);
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
    const ggtk_value *current = edit_current_value(session, key);
    ggtk_value_type type =
        current && is_integer_type(current->type) ? current->type : GGTK_VALUE_UINT32;
    char text[32];
    snprintf(text, sizeof text, "%llu", (unsigned long long)id);
    edit_value value;
    char why[300];
    if (!edit_value_parse(text, type, type, &value, why, sizeof why))
        return edit_refuse(EXIT_USAGE, edit, key, "%s", why);
    int rc = edit_store(session, edit, key, &value);
    edit_value_free(&value);
    return rc;
}

int edit_apply_special_token(edit_session *session, const edit_request *edit)
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
            return edit_refuse(EXIT_USAGE, edit, key, "%s", why);
        id = parsed.value.v.u32;
        if (tokens && id >= tokens->count)
            return edit_refuse(EXIT_USAGE, edit, key, "token id %llu is past the vocabulary (%llu "
                          "tokens)", (unsigned long long)id, (unsigned long long)tokens->count);
        return set_token_id(session, edit, key, id);
    }
    if (!tokens)
        return edit_refuse(EXIT_USAGE, edit, key, "the file has no %s to find '%s' in; use "
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
        return edit_refuse(EXIT_USAGE, edit, key, "no token '%s' in %s", text, tokens_key);
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
    int rc = names ? 0 : edit_refuse(EXIT_FAILED, edit, edit->arg, "out of memory");
    json_array_foreach(list, index, choice) {
        const char *name = json_string_value(json_object_get(choice, "name"));
        json_t *template = json_object_get(choice, "template");
        if (rc != 0 || !name || !*name || !json_is_string(template))
            continue;
        char key[512], *clean = template_name(name);
        if (!clean) {
            rc = edit_refuse(EXIT_FAILED, edit, edit->arg, "out of memory");
            continue;
        }
        if (strcmp(clean, "default") == 0) {
            snprintf(key, sizeof key, "%s", template_key);
            free(clean);
        } else {
            snprintf(key, sizeof key, "%s.%.400s", template_key, clean);
            names[n_names++] = clean;
        }
        rc = edit_set_string(session, edit, key, json_string_value(template),
                        json_string_length(template));
    }
    if (rc == 0 && n_names > 0) {
        edit_value value = {0};
        ggtk_string *views = malloc(n_names * sizeof *views);
        for (size_t i = 0; views && i < n_names; i++)
            views[i] = (ggtk_string){strlen(names[i]), names[i]};
        rc = views && edit_value_string_list(views, n_names, &value)
                 ? edit_store(session, edit, "tokenizer.chat_templates", &value)
                 : edit_refuse(EXIT_FAILED, edit, edit->arg, "out of memory");
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
int edit_apply_template_config(edit_session *session, const edit_request *edit)
{
    json_error_t error;
    json_t *config = json_load_file(edit->arg, 0, &error);
    if (!config)
        return edit_refuse(EXIT_FAILED, edit, edit->arg, "line %d: %s, expected a JSON file such as "
                      "tokenizer_config.json", error.line, error.text);
    json_t *template = json_object_get(config, "chat_template");
    int rc = 0;
    if (!json_is_string(template) && !json_is_array(template))
        rc = edit_refuse(EXIT_FAILED, edit, edit->arg, "no \"chat_template\" string or list in it");
    size_t n;
    char **old = rc == 0 ? edit_matching_keys(session, "tokenizer.chat_template*", &n) : NULL;
    if (rc == 0 && !old)
        rc = edit_refuse(EXIT_FAILED, edit, edit->arg, "out of memory");
    for (size_t i = 0; rc == 0 && i < n; i++) {
        char *key = strdup(old[i]);
        rc = key ? edit_remove_key(session, edit, key) : edit_refuse(EXIT_FAILED, edit, edit->arg, "out of memory");
        free(key);
    }
    free(old);
    if (rc == 0 && json_is_string(template))
        rc = edit_set_string(session, edit, template_key, json_string_value(template),
                        json_string_length(template));
    else if (rc == 0)
        rc = set_named_templates(session, edit, template);
    json_decref(config);
    return rc;
}
