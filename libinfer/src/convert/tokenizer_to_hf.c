/* tokenizer_to_hf.c - GGUF -> HF for the tokenizer: reads the tokenizer.* keys once, builds
 * tokenizer.json, tokenizer_config.json and special_tokens_map.json (for SentencePiece also
 * tokenizer.model and, when needed, added_tokens.json), and adds them to the converter's output set.
 * tokenizer_config.json carries what the reverse conversion reads back (add_*_token flags,
 * add_prefix_space, the special tokens by text, clean_up_tokenization_spaces, the chat
 * templates), so HF -> GGUF of the written folder gives the file's keys again. */
#include "convert/convert_tokenizer.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "convert/tokenizer_export.h"
#include "convert/tokenizer_internal.h"
#include "convert/tokenizer_pre_table.h"

const char *const export_special_gguf_keys[SPECIAL_COUNT] = {
    "tokenizer.ggml.bos_token_id",        "tokenizer.ggml.eos_token_id",     "tokenizer.ggml.unknown_token_id",
    "tokenizer.ggml.seperator_token_id", "tokenizer.ggml.padding_token_id", "tokenizer.ggml.mask_token_id",
};
const char *const export_special_hf_names[SPECIAL_COUNT] = {"bos_token", "eos_token", "unk_token",
                                                            "sep_token", "pad_token", "mask_token"};

static bool key_fail(ggtk_error *err, ggtk_status status, const gguf_tokenizer *t, const char *key, const char *what)
{
    ggtk_error_set(err, status, GGTK_NO_OFFSET, "%s: %s %s", t->path, key, what);
    return false;
}

static bool read_array(const ggtk_file *file, const gguf_tokenizer *t, const char *key, ggtk_value_type type,
                       bool required, const ggtk_array **out, ggtk_error *err)
{
    *out = NULL;
    ggtk_status s = ggtk_get_array(file, key, out);
    if (s == GGTK_ERR_NOT_FOUND && !required) {
        return true;
    }
    if (s != GGTK_OK || (*out)->elem_type != type) {
        *out = NULL;
        return key_fail(err, s == GGTK_ERR_NOT_FOUND ? GGTK_ERR_NOT_FOUND : GGTK_ERR_TYPE, t, key,
                        s == GGTK_ERR_NOT_FOUND ? "is missing" : "is not an array of the expected type");
    }
    return true;
}

static int read_flag(const ggtk_file *file, const char *key)
{
    bool value;
    return ggtk_get_bool(file, key, &value) == GGTK_OK ? value : -1;
}

static bool read_model(const ggtk_file *file, gguf_tokenizer *t, ggtk_error *err)
{
    const char *model = NULL;
    if (ggtk_get_string(file, "tokenizer.ggml.model", &model) != GGTK_OK) {
        return key_fail(err, GGTK_ERR_NOT_FOUND, t, "tokenizer.ggml.model", "is missing or not a string");
    }
    t->spm = strcmp(model, "llama") == 0;
    if (!t->spm && strcmp(model, "gpt2") != 0) {
        ggtk_error_set(err, GGTK_ERR_UNSUPPORTED, GGTK_NO_OFFSET,
                       "%s: tokenizer.ggml.model \"%.40s\" cannot be exported (gpt2 and llama can)", t->path, model);
        return false;
    }
    t->pre = "default";
    ggtk_get_string(file, "tokenizer.ggml.pre", &t->pre);
    return true;
}

bool export_read_gguf(const ggtk_file *file, gguf_tokenizer *t, ggtk_error *err)
{
    memset(t, 0, sizeof *t);
    t->path = ggtk_path(file);
    const ggtk_array *tokens, *types, *scores, *merges;
    if (!read_model(file, t, err) ||
        !read_array(file, t, "tokenizer.ggml.tokens", GGTK_VALUE_STRING, true, &tokens, err) ||
        !read_array(file, t, "tokenizer.ggml.token_type", GGTK_VALUE_INT32, false, &types, err) ||
        !read_array(file, t, "tokenizer.ggml.scores", GGTK_VALUE_FLOAT32, false, &scores, err) ||
        !read_array(file, t, "tokenizer.ggml.merges", GGTK_VALUE_STRING, false, &merges, err)) {
        return false;
    }
    t->n_tokens = tokens->count;
    t->tokens = tokens->data;
    if (t->n_tokens == 0 || t->n_tokens > INT32_MAX) {
        return key_fail(err, GGTK_ERR_INVALID, t, "tokenizer.ggml.tokens", "must hold 1..2^31-1 tokens");
    }
    if ((types && types->count != t->n_tokens) || (scores && scores->count != t->n_tokens)) {
        return key_fail(err, GGTK_ERR_INVALID, t, types && types->count != t->n_tokens ? "tokenizer.ggml.token_type" : "tokenizer.ggml.scores",
                        "has another length than tokenizer.ggml.tokens");
    }
    t->types = types ? types->data : NULL;
    t->scores = scores ? scores->data : NULL;
    t->merges = merges ? merges->data : NULL;
    t->n_merges = merges ? merges->count : 0;
    for (int i = 0; i < SPECIAL_COUNT; i++) {
        uint64_t id;
        t->special[i] = -1;
        if (ggtk_get_uint(file, export_special_gguf_keys[i], &id) == GGTK_OK) {
            if (id >= t->n_tokens) {
                return key_fail(err, GGTK_ERR_INVALID, t, export_special_gguf_keys[i], "is not a token id of the vocabulary");
            }
            t->special[i] = (int64_t)id;
        }
    }
    t->add_bos = read_flag(file, "tokenizer.ggml.add_bos_token");
    t->add_eos = read_flag(file, "tokenizer.ggml.add_eos_token");
    t->add_sep = read_flag(file, "tokenizer.ggml.add_sep_token");
    t->add_space_prefix = read_flag(file, "tokenizer.ggml.add_space_prefix");
    return true;
}

int32_t export_token_type(const gguf_tokenizer *t, uint64_t id)
{
    return t->types ? t->types[id] : TOK_NORMAL;
}

json_t *export_token_string(const gguf_tokenizer *t, uint64_t id, ggtk_error *err)
{
    const ggtk_string *s = &t->tokens[id];
    json_t *text = memchr(s->data, '\0', s->len) ? NULL : json_stringn(s->data, s->len);
    if (!text) {
        ggtk_error_set(err, GGTK_ERR_INVALID, GGTK_NO_OFFSET, "%s: tokenizer.ggml.tokens[%llu] is not UTF-8 without NUL",
                       t->path, (unsigned long long)id);
    }
    return text;
}

bool export_token_is_added(const gguf_tokenizer *t, uint64_t id, bool *special)
{
    int32_t type = export_token_type(t, id);
    *special = type == TOK_CONTROL || type == TOK_UNKNOWN;
    return *special || type == TOK_USER_DEFINED;
}

export_added_list export_spm_listed_added(const gguf_tokenizer *t, uint64_t id)
{
    int32_t type = export_token_type(t, id);
    if (!t->spm || !t->scores || t->scores[id] != -1000.0f) {
        return EXPORT_NOT_LISTED;
    }
    return type == TOK_CONTROL ? EXPORT_IN_DECODER : type == TOK_USER_DEFINED ? EXPORT_IN_ADDED_TOKENS_JSON : EXPORT_NOT_LISTED;
}

/* For SentencePiece, added_tokens.json's {text: id} of the user-defined added tokens; NULL when
 * there are none (or for byte-level BPE). */
static json_t *added_tokens_json(const gguf_tokenizer *t, ggtk_error *err)
{
    json_t *added = json_object();
    for (uint64_t id = 0; added && id < t->n_tokens; id++) {
        if (export_spm_listed_added(t, id) != EXPORT_IN_ADDED_TOKENS_JSON) {
            continue;
        }
        json_t *text = export_token_string(t, id, err);
        if (!text) {
            json_decref(added);
            return NULL;
        }
        json_object_set_new(added, json_string_value(text), json_integer((json_int_t)id));
        json_decref(text);
    }
    if (added && json_object_size(added) == 0) {
        json_decref(added);
        added = NULL;
    }
    return added;
}

/* tokenizer_config.json's "chat_template": the string, or the list of named templates. */
static json_t *chat_template(const ggtk_file *file)
{
    const char *fallback = NULL;
    const ggtk_array *names = NULL;
    ggtk_get_string(file, "tokenizer.chat_template", &fallback);
    if (ggtk_get_array(file, "tokenizer.chat_templates", &names) != GGTK_OK || names->elem_type != GGTK_VALUE_STRING) {
        return fallback ? json_string(fallback) : NULL;
    }
    json_t *list = json_array();
    if (fallback) {
        json_array_append_new(list, json_pack("{s:s, s:s}", "name", "default", "template", fallback));
    }
    const ggtk_string *name = names->data;
    for (uint64_t i = 0; i < names->count; i++) {
        char key[160];
        const char *text = NULL;
        snprintf(key, sizeof key, "tokenizer.chat_template.%.*s", (int)(name[i].len < 100 ? name[i].len : 100), name[i].data);
        if (ggtk_get_string(file, key, &text) == GGTK_OK) {
            json_array_append_new(list, json_pack("{s:s%, s:s}", "name", name[i].data, (size_t)name[i].len, "template", text));
        }
    }
    return list;
}

static json_t *special_tokens_by_text(const gguf_tokenizer *t, ggtk_error *err)
{
    json_t *map = json_object();
    for (int i = 0; map && i < SPECIAL_COUNT; i++) {
        if (t->special[i] < 0) {
            continue;
        }
        json_t *text = export_token_string(t, (uint64_t)t->special[i], err);
        if (!text) {
            json_decref(map);
            return NULL;
        }
        json_object_set_new(map, export_special_hf_names[i], text);
    }
    return map;
}

static json_t *added_tokens_decoder(const gguf_tokenizer *t, ggtk_error *err)
{
    json_t *decoder = json_object();
    for (uint64_t id = 0; decoder && id < t->n_tokens; id++) {
        bool special;
        bool listed = t->spm ? export_spm_listed_added(t, id) == EXPORT_IN_DECODER : export_token_is_added(t, id, &special);
        if (!listed) {
            continue;
        }
        special = t->spm || special;
        json_t *text = export_token_string(t, id, err);
        if (!text) {
            json_decref(decoder);
            return NULL;
        }
        char key[24];
        snprintf(key, sizeof key, "%llu", (unsigned long long)id);
        json_object_set_new(decoder, key, json_pack("{s:o, s:b, s:b, s:b, s:b, s:b}", "content", text, "lstrip", 0,
                                                    "normalized", 0, "rstrip", 0, "single_word", 0, "special", special));
    }
    return decoder;
}

static json_t *tokenizer_config(const gguf_tokenizer *t, const ggtk_file *file, ggtk_error *err)
{
    json_t *config = json_object();
    json_t *decoder = added_tokens_decoder(t, err);
    json_t *specials = special_tokens_by_text(t, err);
    if (!config || !decoder || !specials) {
        json_decref(config);
        json_decref(decoder);
        json_decref(specials);
        return NULL;
    }
    const struct { const char *key; int value; } flags[] = {
        {"add_prefix_space", t->add_space_prefix}, {"add_bos_token", t->add_bos},
        {"add_eos_token", t->add_eos},             {"add_sep_token", t->add_sep},
    };
    for (size_t i = 0; i < sizeof flags / sizeof flags[0]; i++) {
        if (flags[i].value >= 0) {
            json_object_set_new(config, flags[i].key, json_boolean(flags[i].value));
        }
    }
    json_object_set_new(config, "added_tokens_decoder", decoder);
    json_object_update(config, specials);
    json_decref(specials);
    bool clean = false, ignore_merges;
    json_decref(t->spm ? NULL : tokenizer_pre_json(t->pre, &clean, &ignore_merges));
    json_object_set_new(config, "clean_up_tokenization_spaces", json_boolean(clean));
    json_t *template = chat_template(file);
    if (template) {
        json_object_set_new(config, "chat_template", template);
    }
    json_object_set_new(config, "tokenizer_class", json_string("PreTrainedTokenizerFast"));
    return config;
}

/* Add dir/name, holding `root`, to `files`. */
static bool save(output_set *files, const json_t *root, const char *dir, const char *name, ggtk_error *err)
{
    FILE *stream = output_set_open(files, dir, name, err);
    if (!stream) {
        return false;
    }
    if (json_dumpf(root, stream, JSON_INDENT(2) | JSON_PRESERVE_ORDER) != 0 || fputc('\n', stream) == EOF) {
        ggtk_error_set(err, GGTK_ERR_IO, GGTK_NO_OFFSET, "%s/%s: cannot write", dir, name);
        return false;
    }
    return true;
}

bool convert_tokenizer_to_hf(const ggtk_file *gguf, output_set *files, const char *out_dir, ggtk_error *err)
{
    gguf_tokenizer t;
    if (!export_read_gguf(gguf, &t, err)) {
        return false;
    }
    json_t *tokenizer = export_tokenizer_json(&t, err);
    json_t *config = tokenizer ? tokenizer_config(&t, gguf, err) : NULL;
    json_t *map = config ? special_tokens_by_text(&t, err) : NULL;
    ggtk_error added_err = {0};
    json_t *added = map ? added_tokens_json(&t, &added_err) : NULL;
    bool ok = map && added_err.status == GGTK_OK;
    if (map && !ok && err) {
        *err = added_err;
    }
    ok = ok && save(files, tokenizer, out_dir, "tokenizer.json", err) &&
         save(files, config, out_dir, "tokenizer_config.json", err) &&
         save(files, map, out_dir, "special_tokens_map.json", err) &&
         (!added || save(files, added, out_dir, "added_tokens.json", err)) &&
         (!t.spm || export_spm_model(&t, files, out_dir, err));
    json_decref(tokenizer);
    json_decref(config);
    json_decref(map);
    json_decref(added);
    return ok;
}
