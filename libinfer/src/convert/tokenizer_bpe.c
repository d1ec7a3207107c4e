/* tokenizer_bpe.c - a byte-level BPE vocabulary from tokenizer.json, as convert_hf_to_gguf.py's
 * get_vocab_base() builds it from transformers' fast tokenizer: the model's vocab plus the added
 * tokens (an added token's text wins its id), types NORMAL / CONTROL (special, or looking special)
 * / USER_DEFINED, ids the files leave out named [PAD<id>] and typed UNUSED; merges from either
 * of tokenizer.json's forms. */
#include "convert/tokenizer_internal.h"

#include <stdlib.h>
#include <string.h>

#include "convert/tokenizer_pre_table.h"

static bool fail(ggtk_error *err, ggtk_status status, const char *fmt, const char *path, const char *what)
{
    ggtk_error_set(err, status, GGTK_NO_OFFSET, fmt, path, what);
    return false;
}

/* An id from the files: an integer in 0..INT32_MAX, else -1. */
static int64_t token_id(const json_t *v)
{
    if (!json_is_integer(v) || json_integer_value(v) < 0 || json_integer_value(v) > INT32_MAX) {
        return -1;
    }
    return json_integer_value(v);
}

/* Check ids and count the distinct texts, as len(tokenizer.vocab) counts them. */
static bool measure(const json_t *vocab, const json_t *added, const char *path, int64_t *max_id, uint64_t *n_texts,
                    ggtk_error *err)
{
    const char *key;
    const json_t *value;
    *max_id = -1;
    *n_texts = json_object_size(vocab);
    json_object_foreach((json_t *)vocab, key, value) {
        int64_t id = token_id(value);
        if (id < 0) {
            ggtk_error_set(err, GGTK_ERR_INVALID, GGTK_NO_OFFSET, "%s: model.vocab: the id of a token is not an integer in 0..2^31-1", path);
            return false;
        }
        *max_id = id > *max_id ? id : *max_id;
    }
    size_t i;
    json_array_foreach(added, i, value) {
        const json_t *content = json_object_get(value, "content");
        int64_t id = token_id(json_object_get(value, "id"));
        if (!json_is_string(content) || id < 0) {
            ggtk_error_set(err, GGTK_ERR_INVALID, GGTK_NO_OFFSET,
                           "%s: added_tokens[%zu] lacks a string \"content\" or an integer \"id\" in 0..2^31-1", path, i);
            return false;
        }
        *max_id = id > *max_id ? id : *max_id;
        *n_texts += json_object_get(vocab, json_string_value(content)) == NULL;
    }
    return true;
}

static bool put_token(conv_vocab *v, int64_t id, char *text, int32_t type, ggtk_error *err)
{
    if (!text) {
        ggtk_error_set(err, GGTK_ERR_NOMEM, GGTK_NO_OFFSET, "out of memory");
        return false;
    }
    free(v->tokens[id]);
    v->tokens[id] = text;
    v->types[id] = type;
    return true;
}

static bool fill_tokens(const json_t *vocab, const json_t *added, const char *path, conv_vocab *v, ggtk_error *err)
{
    const char *key;
    const json_t *value;
    json_object_foreach((json_t *)vocab, key, value) {
        int64_t id = token_id(value);
        if (v->tokens[id]) {
            ggtk_error_set(err, GGTK_ERR_DUPLICATE, GGTK_NO_OFFSET, "%s: model.vocab: two tokens have id %lld", path, (long long)id);
            return false;
        }
        if (!put_token(v, id, strdup(key), TOK_NORMAL, err)) {
            return false;
        }
    }
    size_t i;
    json_array_foreach(added, i, value) {
        const char *content = json_string_value(json_object_get(value, "content"));
        int64_t id = token_id(json_object_get(value, "id"));
        bool special = json_is_true(json_object_get(value, "special"));
        bool control = special || conv_token_looks_special(content);
        /* user-defined tokens are stored pre-normalized: SentencePiece's visible space as a space */
        char *text = control ? strdup(content) : conv_replace_all(content, CONV_SPM_SPACE, " ");
        if (!put_token(v, id, text, control ? TOK_CONTROL : TOK_USER_DEFINED, err)) {
            return false;
        }
    }
    return true;
}

/* One merge of the list form ["a", "b"] as "a b", spaces inside a part written as U+0120. */
static char *merge_from_pair(const json_t *pair)
{
    const char *a = json_string_value(json_array_get(pair, 0)), *b = json_string_value(json_array_get(pair, 1));
    if (json_array_size(pair) != 2 || !a || !b) {
        return NULL;
    }
    char *ea = conv_replace_all(a, " ", CONV_GPT2_SPACE), *eb = conv_replace_all(b, " ", CONV_GPT2_SPACE);
    char *out = ea && eb ? malloc(strlen(ea) + strlen(eb) + 2) : NULL;
    if (out) {
        strcpy(out, ea);
        strcat(out, " ");
        strcat(out, eb);
    }
    free(ea);
    free(eb);
    return out;
}

static bool read_merges(const json_t *merges, const char *path, conv_vocab *v, ggtk_error *err)
{
    size_t n = json_array_size(merges);
    if (n == 0) {
        return true; /* the reference writes no merges key then */
    }
    if (n > UINT32_MAX || !(v->merges = calloc(n, sizeof *v->merges))) {
        return fail(err, GGTK_ERR_NOMEM, "%s: %s", path, "out of memory for the merges");
    }
    bool strings = json_is_string(json_array_get(merges, 0));
    for (size_t i = 0; i < n; i++, v->n_merges++) {
        const json_t *m = json_array_get(merges, i);
        if (strings ? !json_is_string(m) : !json_is_array(m)) {
            ggtk_error_set(err, GGTK_ERR_TYPE, GGTK_NO_OFFSET,
                           "%s: model.merges[%zu] is not %s like the first merge", path, i, strings ? "a string" : "a list");
            return false;
        }
        v->merges[i] = strings ? strdup(json_string_value(m)) : merge_from_pair(m);
        if (!v->merges[i]) {
            ggtk_error_set(err, strings ? GGTK_ERR_NOMEM : GGTK_ERR_INVALID, GGTK_NO_OFFSET,
                           "%s: model.merges[%zu] is not a pair of strings", path, i);
            return false;
        }
    }
    return true;
}

static bool choose_pre(const json_t *tokenizer, const json_t *tokenizer_config, const char *path, const char **pre,
                       ggtk_error *err)
{
    const json_t *clean = json_object_get(tokenizer_config, "clean_up_tokenization_spaces");
    const json_t *def = json_object_get(tokenizer, "pre_tokenizer");
    *pre = tokenizer_pre_name(def, json_is_boolean(clean) ? json_is_true(clean) : -1);
    if (!*pre) {
        char *text = tokenizer_pre_describe(def);
        ggtk_error_set(err, GGTK_ERR_UNSUPPORTED, GGTK_NO_OFFSET,
                       "%s: unrecognised pre_tokenizer %s (no tokenizer.ggml.pre family has it)", path,
                       text ? text : "(unreadable)");
        free(text);
        return false;
    }
    return true;
}

bool conv_bpe_from_tokenizer_json(const json_t *tokenizer, const json_t *tokenizer_config, uint64_t vocab_size,
                                  const char *path, conv_vocab *v, const char **pre, ggtk_error *err)
{
    const json_t *model = json_object_get(tokenizer, "model");
    const json_t *type = json_object_get(model, "type");
    const json_t *vocab = json_object_get(model, "vocab");
    const json_t *added = json_object_get(tokenizer, "added_tokens");
    if (!json_is_object(model)) {
        return fail(err, GGTK_ERR_NOT_FOUND, "%s: %s", path, "no \"model\" object");
    }
    if (type && !conv_json_is_string(type, "BPE")) {
        return fail(err, GGTK_ERR_UNSUPPORTED, "%s: model.type is %s; only BPE is converted (SentencePiece needs tokenizer.model)",
                    path, json_is_string(type) ? json_string_value(type) : "not a string");
    }
    if (!json_is_object(vocab)) {
        return fail(err, GGTK_ERR_NOT_FOUND, "%s: %s", path, "model.vocab is missing or not an object");
    }
    if (added && !json_is_array(added)) {
        return fail(err, GGTK_ERR_TYPE, "%s: %s", path, "added_tokens is not a list");
    }
    if (!json_is_array(json_object_get(model, "merges")) && json_object_get(model, "merges")) {
        return fail(err, GGTK_ERR_TYPE, "%s: %s", path, "model.merges is not a list");
    }
    int64_t max_id;
    uint64_t n_texts;
    if (!choose_pre(tokenizer, tokenizer_config, path, pre, err) || !measure(vocab, added, path, &max_id, &n_texts, err)) {
        return false;
    }
    uint64_t n = vocab_size ? vocab_size : n_texts;
    if (n > INT32_MAX) {
        ggtk_error_set(err, GGTK_ERR_OVERFLOW, GGTK_NO_OFFSET, "config.json: vocab_size %llu is larger than 2^31-1",
                       (unsigned long long)n);
        return false;
    }
    if (n == 0 || (uint64_t)max_id >= n) {
        ggtk_error_set(err, GGTK_ERR_INVALID, GGTK_NO_OFFSET, "%s: token id %lld is not below the vocabulary size %llu",
                       path, (long long)max_id, (unsigned long long)n);
        return false;
    }
    if (!conv_vocab_alloc(v, (uint32_t)n, false)) {
        return fail(err, GGTK_ERR_NOMEM, "%s: %s", path, "out of memory for the vocabulary");
    }
    if (!fill_tokens(vocab, added, path, v, err) || !read_merges(json_object_get(model, "merges"), path, v, err)) {
        conv_vocab_free(v);
        return false;
    }
    if (!conv_vocab_fill_pads(v, 0.0f)) {
        conv_vocab_free(v);
        return fail(err, GGTK_ERR_NOMEM, "%s: %s", path, "out of memory");
    }
    return true;
}
