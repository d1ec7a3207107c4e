/* tokenizer_chat_template.c - the chat template of a Hugging Face folder into GGUF keys: one
 * string, or a list of named templates (tokenizer_config.json's list form) written as the
 * default template plus one key per other name. */
#include "convert/tokenizer_internal.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { TEMPLATE_MAX_BYTES = 16 << 20 };

/* The whole text file `path` as a JSON string (valid UTF-8, no NUL, at most 16 MiB). */
static bool read_text(const char *path, json_t **out, ggtk_error *err)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        return ggtk_error_set(err, GGTK_ERR_IO, GGTK_NO_OFFSET, "%s: %s", path, strerror(errno)), false;
    }
    char *buf = malloc(TEMPLATE_MAX_BYTES + 1);
    size_t n = buf ? fread(buf, 1, TEMPLATE_MAX_BYTES + 1, f) : 0;
    bool failed = buf && ferror(f);
    fclose(f);
    if (!buf) {
        return ggtk_error_set(err, GGTK_ERR_NOMEM, GGTK_NO_OFFSET, "out of memory"), false;
    }
    *out = NULL;
    if (failed) {
        ggtk_error_set(err, GGTK_ERR_IO, GGTK_NO_OFFSET, "%s: read error", path);
    } else if (n > TEMPLATE_MAX_BYTES) {
        ggtk_error_set(err, GGTK_ERR_OVERFLOW, GGTK_NO_OFFSET, "%s: larger than %d MiB", path, TEMPLATE_MAX_BYTES >> 20);
    } else if (memchr(buf, '\0', n) || !(*out = json_stringn(buf, n))) {
        ggtk_error_set(err, GGTK_ERR_INVALID, GGTK_NO_OFFSET, "%s: not UTF-8 text", path);
    }
    free(buf);
    return *out != NULL;
}

bool conv_chat_template_alternative(const char *hf_dir, json_t **out, ggtk_error *err)
{
    *out = NULL;
    char *jinja = conv_path(hf_dir, "chat_template.jinja");
    char *json = conv_path(hf_dir, "chat_template.json");
    bool ok = jinja && json;
    if (!ok) {
        ggtk_error_set(err, GGTK_ERR_NOMEM, GGTK_NO_OFFSET, "out of memory");
    } else if (conv_is_file(jinja)) {
        ok = read_text(jinja, out, err);
    } else if (conv_is_file(json)) {
        json_t *root = NULL;
        ok = conv_json_load(json, false, &root, err);
        *out = json_incref(json_object_get(root, "chat_template"));
        json_decref(root);
    }
    free(jinja);
    free(json);
    return ok;
}

static bool set_string(ggtk_writer *w, const char *key, const json_t *value, const char *source, ggtk_error *err)
{
    const char *text = json_string_value(value);
    if (!text || strlen(text) != json_string_length(value)) {
        ggtk_error_set(err, GGTK_ERR_TYPE, GGTK_NO_OFFSET, "%s: chat template for %s is not a string without NUL", source, key);
        return false;
    }
    if (ggtk_writer_set_string(w, key, text) != GGTK_OK) {
        return ggtk_error_set(err, GGTK_ERR_NOMEM, GGTK_NO_OFFSET, "out of memory"), false;
    }
    return true;
}

/* The list form: [{"name": "default", "template": "..."}, {"name": "tool_use", ...}]. */
static bool add_list(const json_t *list, const char *source, ggtk_writer *w, ggtk_error *err)
{
    const json_t *fallback = NULL;
    size_t n_names = 0, i;
    const json_t *choice;
    const char **names = calloc(json_array_size(list) + 1, sizeof *names);
    char(*buffers)[64] = calloc(json_array_size(list) + 1, sizeof *buffers);
    bool ok = names && buffers;
    json_array_foreach(list, i, choice) {
        if (!ok) {
            break;
        }
        if (!json_is_object(choice)) {
            ok = false;
            ggtk_error_set(err, GGTK_ERR_TYPE, GGTK_NO_OFFSET, "%s: chat_template[%zu] is not an object", source, i);
            break;
        }
        const char *raw = json_string_value(json_object_get(choice, "name"));
        const json_t *template = json_object_get(choice, "template");
        /* names keep letters and digits only, as the reference filters them */
        char *name = buffers[n_names];
        size_t len = 0;
        for (const char *c = raw ? raw : ""; *c && len < 63; c++) {
            bool alnum = (*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') || (*c >= '0' && *c <= '9');
            name[len++] = alnum ? *c : '_';
        }
        name[len] = '\0';
        if (len == 0 || !template || json_is_null(template)) {
            continue;
        }
        if (strcmp(name, "default") == 0) {
            fallback = template;
            continue;
        }
        char key[128];
        snprintf(key, sizeof key, "tokenizer.chat_template.%s", name);
        ok = set_string(w, key, template, source, err);
        bool seen = false;
        for (size_t k = 0; k < n_names; k++) {
            seen = seen || strcmp(names[k], name) == 0;
        }
        if (!seen) {
            names[n_names++] = name;
        }
    }
    if (!names || !buffers) {
        ggtk_error_set(err, GGTK_ERR_NOMEM, GGTK_NO_OFFSET, "out of memory");
    }
    if (ok && n_names && ggtk_writer_set_string_array(w, "tokenizer.chat_templates", names, n_names) != GGTK_OK) {
        ok = false;
        ggtk_error_set(err, GGTK_ERR_NOMEM, GGTK_NO_OFFSET, "out of memory");
    }
    ok = ok && (!fallback || set_string(w, "tokenizer.chat_template", fallback, source, err));
    free(names);
    free(buffers);
    return ok;
}

bool conv_chat_template_add(const json_t *template, const char *source, ggtk_writer *w, ggtk_error *err)
{
    if (json_is_string(template)) {
        return set_string(w, "tokenizer.chat_template", template, source, err);
    }
    return json_is_array(template) ? add_list(template, source, w, err) : true;
}
