/* tokenizer_special.c - special token ids, add_bos/eos/sep flags, the chat template and the
 * normalizer flags of a Hugging Face folder, decided as gguf-py's SpecialVocab decides them:
 * tokenizer.json's post_processor first (a crude reading of TemplateProcessing and
 * RobertaProcessing), then tokenizer_config.json (which may override), then config.json's
 * *_token_id for the ids still unset. The reference edits its copy of tokenizer_config.json as it
 * goes (a CLS token standing in for BOS, an EOT token when the template ends on another token);
 * so does this file, on a copy. Keys reach the writer in the reference's order. */
#include "convert/tokenizer_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { MAX_TYPES = 9 };

typedef struct special_state {
    const conv_special_input *in;
    json_t *cfg; /* the edited copy of tokenizer_config.json, NULL when it is absent or empty */
    const char *types[MAX_TYPES];
    int n_types;
    struct { const char *type; int64_t id; } ids[MAX_TYPES];
    int n_ids;
    struct { const char *type; bool value; } adds[MAX_TYPES];
    int n_adds;
    int lowercase, strip_accents; /* -1: not stated */
} special_state;

/* Python's truth value of a JSON value (NULL for a missing key). */
static bool truthy(const json_t *v)
{
    switch (v ? json_typeof(v) : JSON_NULL) {
    case JSON_STRING: return json_string_length(v) > 0;
    case JSON_OBJECT: return json_object_size(v) > 0;
    case JSON_ARRAY: return json_array_size(v) > 0;
    case JSON_INTEGER: return json_integer_value(v) != 0;
    case JSON_REAL: return json_real_value(v) != 0;
    case JSON_TRUE: return true;
    default: return false;
    }
}

static bool same(const json_t *a, const json_t *b)
{
    return a && b && json_equal(a, b);
}

static const json_t *cfg_get(const special_state *s, const char *key)
{
    return s->cfg ? json_object_get(s->cfg, key) : NULL;
}

static void cfg_set(special_state *s, const char *key, const json_t *value)
{
    if (s->cfg && value) {
        json_object_set_new(s->cfg, key, json_deep_copy(value));
    }
}

static void set_add(special_state *s, const char *type, bool value)
{
    for (int i = 0; i < s->n_adds; i++) {
        if (strcmp(s->adds[i].type, type) == 0) {
            s->adds[i].value = value;
            return;
        }
    }
    if (s->n_adds < MAX_TYPES) {
        s->adds[s->n_adds].type = type;
        s->adds[s->n_adds++].value = value;
    }
}

static bool has_type(const special_state *s, const char *type)
{
    for (int i = 0; i < s->n_types; i++) {
        if (strcmp(s->types[i], type) == 0) {
            return true;
        }
    }
    return false;
}

static bool set_id(special_state *s, const char *type, const json_t *id, const char *source, ggtk_error *err)
{
    if (!json_is_integer(id)) {
        return true;
    }
    json_int_t value = json_integer_value(id);
    if (value < 0) {
        ggtk_error_set(err, GGTK_ERR_INVALID, GGTK_NO_OFFSET, "%s: %s token id %lld is negative", source, type,
                       (long long)value);
        return false;
    }
    if ((uint64_t)value >= s->in->n_vocab || value > UINT32_MAX) {
        return true; /* the reference skips an id outside the vocabulary with a warning */
    }
    for (int i = 0; i < s->n_ids; i++) {
        if (strcmp(s->ids[i].type, type) == 0) {
            return true;
        }
    }
    if (s->n_ids < MAX_TYPES) {
        s->ids[s->n_ids].type = type;
        s->ids[s->n_ids++].id = value;
    }
    return true;
}

/* The "id" of item[key] for template items such as {"SpecialToken": {"id": "<s>"}}. */
static const json_t *item_id(const json_t *item, const char *key)
{
    return json_object_get(json_object_get(item, key), "id");
}

static void read_roberta(special_state *s, const json_t *proc, const json_t **cls, const json_t **sep,
                         const json_t *bos, const json_t *eos)
{
    set_add(s, "bos", true);
    set_add(s, "eos", true);
    set_add(s, "sep", true);
    if (!truthy(*cls) && s->cfg) {
        const json_t *c = json_object_get(proc, "cls");
        *cls = json_is_array(c) ? json_array_get(c, 0) : bos;
        cfg_set(s, "cls_token", *cls);
        *cls = cfg_get(s, "cls_token");
    }
    if (!truthy(*sep) && s->cfg) {
        const json_t *c = json_object_get(proc, "sep");
        *sep = json_is_array(c) ? json_array_get(c, 0) : eos;
        cfg_set(s, "sep_token", *sep);
        *sep = cfg_get(s, "sep_token");
    }
}

/* The special tokens as the post-processor loop sees them (values of the edited config, or of
 * the template itself when there is no config). */
typedef struct special_names {
    const json_t *bos, *cls, *eos, *sep;
} special_names;

static void read_template_single(special_state *s, const json_t *single, special_names *n,
                                 const json_t **first, const json_t **last)
{
    size_t len = json_array_size(single);
    if (len <= 1) {
        return;
    }
    const json_t *f = item_id(json_array_get(single, 0), "SpecialToken");
    if (truthy(f)) {
        *first = f;
        if (!s->cfg) {
            n->bos = f;
        } else if (!same(f, n->bos) && !same(f, n->cls)) {
            if (!truthy(n->bos)) {
                cfg_set(s, "bos_token", f);
                n->bos = f;
            }
            if (!truthy(n->cls)) {
                cfg_set(s, "cls_token", f);
                n->cls = f;
            }
        }
        set_add(s, "bos", same(f, n->bos) || same(f, n->cls));
    }
    const json_t *l = item_id(json_array_get(single, len - 1), "SpecialToken");
    if (truthy(l)) {
        *last = l;
        if (!s->cfg) {
            n->eos = l;
        } else if (!same(l, n->eos)) {
            const char *extra = !has_type(s, "eot") ? "eot" : !has_type(s, "eom") ? "eom" : NULL;
            if (extra && s->n_types < MAX_TYPES) {
                s->types[s->n_types++] = extra;
                cfg_set(s, strcmp(extra, "eot") == 0 ? "eot_token" : "eom_token", n->eos);
            }
            cfg_set(s, "eos_token", l);
            n->eos = l;
        }
        set_add(s, "eos", same(l, n->eos));
    }
}

static void read_template_pair(special_state *s, const json_t *pair, special_names *n, const json_t *first,
                               const json_t *last)
{
    size_t len = json_array_size(pair);
    size_t start = first && same(item_id(json_array_get(pair, 0), "SpecialToken"), first) ? 1 : 0;
    size_t stop = last && len > 0 && same(item_id(json_array_get(pair, len - 1), "SpecialToken"), last) ? len - 1 : len;
    if (stop <= start) {
        return;
    }
    const json_t *a = item_id(json_array_get(pair, start), "Sequence");
    const json_t *b = item_id(json_array_get(pair, stop - 1), "Sequence");
    if (!conv_json_is_string(a, "A") || !conv_json_is_string(b, "B") || stop - start < 3) {
        return;
    }
    /* A [sep] [eos] B: the items between the two sequences */
    bool add_sep = false;
    const json_t *e = item_id(json_array_get(pair, start + 1), "SpecialToken");
    if (truthy(e) && (same(e, n->sep) || same(e, n->eos)) && !last) {
        add_sep = true;
    }
    if (stop - start - 2 == 2) {
        e = item_id(json_array_get(pair, start + 2), "SpecialToken");
        if (truthy(e) && (same(e, n->sep) || same(e, n->eos))) {
            add_sep = true;
        }
    }
    set_add(s, "sep", add_sep);
    if (add_sep && !truthy(n->sep) && s->cfg) {
        cfg_set(s, "sep_token", n->eos);
        n->sep = n->eos;
    }
}

static void read_post_processor(special_state *s, const json_t *tokenizer)
{
    special_names n = {cfg_get(s, "bos_token"), cfg_get(s, "cls_token"), cfg_get(s, "eos_token"),
                       cfg_get(s, "sep_token")};
    if (!truthy(n.bos) && truthy(n.cls) && s->cfg) {
        cfg_set(s, "bos_token", n.cls);
        n.bos = n.cls;
    }
    if (!truthy(n.eos) && truthy(n.sep) && s->cfg) {
        cfg_set(s, "eos_token", n.sep);
        n.eos = n.sep;
    }
    const json_t *post = json_object_get(tokenizer, "post_processor");
    if (!truthy(post) || !json_is_object(post)) {
        return;
    }
    const json_t *list = json_object_get(post, "processors");
    size_t count = list ? json_array_size(list) : 1;
    for (size_t i = 0; i < count; i++) {
        const json_t *proc = list ? json_array_get(list, i) : post;
        if (json_is_object(proc) && conv_json_is_string(json_object_get(proc, "type"), "RobertaProcessing")) {
            read_roberta(s, proc, &n.cls, &n.sep, n.bos, n.eos);
        } else if (json_is_object(proc) && conv_json_is_string(json_object_get(proc, "type"), "TemplateProcessing")) {
            const json_t *first = NULL, *last = NULL;
            read_template_single(s, json_object_get(proc, "single"), &n, &first, &last);
            read_template_pair(s, json_object_get(proc, "pair"), &n, first, last);
        }
        /* the edited config may have replaced the values these pointers named */
        n.bos = s->cfg ? cfg_get(s, "bos_token") : n.bos;
        n.cls = s->cfg ? cfg_get(s, "cls_token") : n.cls;
        n.eos = s->cfg ? cfg_get(s, "eos_token") : n.eos;
        n.sep = s->cfg ? cfg_get(s, "sep_token") : n.sep;
    }
}

static void read_normalizer(special_state *s, const json_t *norm, int depth)
{
    const json_t *type = json_object_get(norm, "type");
    if (depth > 32 || !json_is_string(type)) {
        return;
    }
    const char *t = json_string_value(type);
    if (strcmp(t, "Lowercase") == 0) {
        s->lowercase = 1;
    } else if (strcmp(t, "StripAccents") == 0) {
        s->strip_accents = 1;
    } else if (strcmp(t, "BertNormalizer") == 0) {
        const json_t *lower = json_object_get(norm, "lowercase"), *strip = json_object_get(norm, "strip_accents");
        s->lowercase = json_is_boolean(lower) ? json_is_true(lower) : s->lowercase;
        s->strip_accents = json_is_boolean(strip) ? json_is_true(strip) : s->strip_accents;
    } else if (strcmp(t, "Sequence") == 0) {
        size_t i;
        const json_t *inner;
        json_array_foreach(json_object_get(norm, "normalizers"), i, inner) {
            read_normalizer(s, inner, depth + 1);
        }
    }
}

/* The id of the first added token of tokenizer.json whose content is `content`, or NULL. */
static const json_t *added_token_id(const json_t *tokenizer, const char *content)
{
    size_t i;
    const json_t *tok;
    json_array_foreach(json_object_get(tokenizer, "added_tokens"), i, tok) {
        if (conv_json_is_string(json_object_get(tok, "content"), content)) {
            return json_object_get(tok, "id");
        }
    }
    return NULL;
}

static bool read_config_tokens(special_state *s, ggtk_error *err)
{
    for (int i = 0; i < s->n_types; i++) {
        char key[32];
        snprintf(key, sizeof key, "add_%s_token", s->types[i]);
        const json_t *add = cfg_get(s, key);
        if (json_is_boolean(add)) {
            set_add(s, s->types[i], json_is_true(add));
        }
        snprintf(key, sizeof key, "%s_token", s->types[i]);
        const json_t *entry = cfg_get(s, key);
        if (json_is_object(entry)) {
            entry = json_object_get(entry, "content");
        }
        if (json_is_string(entry) &&
            !set_id(s, s->types[i], added_token_id(s->in->tokenizer_json, json_string_value(entry)),
                    "tokenizer.json", err)) {
            return false;
        }
    }
    return true;
}

static bool read_model_config(special_state *s, ggtk_error *err)
{
    const json_t *config = s->in->config;
    for (int i = 0; config && i < s->n_types; i++) {
        char key[32];
        snprintf(key, sizeof key, "%s_token_id", s->types[i]);
        const json_t *id = json_object_get(config, key);
        if (!id || json_is_null(id)) {
            id = json_object_get(json_object_get(config, "text_config"), key);
        }
        if (!set_id(s, s->types[i], id, "config.json", err)) {
            return false;
        }
    }
    return true;
}

/* GGUF key of a special id type; NULL for types the reference has no key for (cls). */
static const char *id_key(const char *type)
{
    static const char *const keys[][2] = {
        {"bos", "tokenizer.ggml.bos_token_id"},     {"eos", "tokenizer.ggml.eos_token_id"},
        {"unk", "tokenizer.ggml.unknown_token_id"}, {"sep", "tokenizer.ggml.seperator_token_id"},
        {"pad", "tokenizer.ggml.padding_token_id"}, {"mask", "tokenizer.ggml.mask_token_id"},
        {"eot", "tokenizer.ggml.eot_token_id"},     {"eom", "tokenizer.ggml.eom_token_id"},
    };
    for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++) {
        if (strcmp(keys[i][0], type) == 0) {
            return keys[i][1];
        }
    }
    return NULL;
}

static bool write_ids_and_flags(const special_state *s, ggtk_writer *w)
{
    bool ok = true;
    for (int i = 0; i < s->n_ids; i++) {
        const char *key = id_key(s->ids[i].type);
        ok = ok && (!key || ggtk_writer_set_u32(w, key, (uint32_t)s->ids[i].id) == GGTK_OK);
    }
    for (int i = 0; i < s->n_adds; i++) {
        const char *t = s->adds[i].type;
        if (strcmp(t, "bos") == 0 || strcmp(t, "eos") == 0 || strcmp(t, "sep") == 0) {
            char key[48];
            snprintf(key, sizeof key, "tokenizer.ggml.add_%s_token", t);
            ok = ok && ggtk_writer_set_bool(w, key, s->adds[i].value) == GGTK_OK;
        }
    }
    return ok;
}

bool conv_special_add(const conv_special_input *in, ggtk_writer *w, ggtk_error *err)
{
    special_state s = {.in = in, .types = {"bos", "eos", "unk", "sep", "pad", "cls", "mask"}, .n_types = 7,
                       .lowercase = -1, .strip_accents = -1};
    if (truthy(in->tokenizer_config)) {
        if (!(s.cfg = json_deep_copy(in->tokenizer_config))) {
            return ggtk_error_set(err, GGTK_ERR_NOMEM, GGTK_NO_OFFSET, "out of memory"), false;
        }
    }
    if (in->tokenizer_json) {
        read_normalizer(&s, json_object_get(in->tokenizer_json, "normalizer"), 0);
        read_post_processor(&s, in->tokenizer_json);
    }
    json_t *template = NULL, *alternative = NULL;
    bool ok = true;
    if (s.cfg) {
        ok = conv_chat_template_alternative(in->hf_dir, &alternative, err);
        template = json_object_get(s.cfg, "chat_template");
        template = template ? template : alternative;
        ok = ok && read_config_tokens(&s, err);
    }
    ok = ok && read_model_config(&s, err);
    if (ok && !write_ids_and_flags(&s, w)) {
        ok = false;
        ggtk_error_set(err, GGTK_ERR_NOMEM, GGTK_NO_OFFSET, "out of memory");
    }
    ok = ok && (!template || conv_chat_template_add(template, "tokenizer_config.json", w, err));
    if (ok && ((s.lowercase >= 0 && ggtk_writer_set_bool(w, "tokenizer.ggml.normalizer.lowercase", s.lowercase) != GGTK_OK) ||
               (s.strip_accents >= 0 &&
                ggtk_writer_set_bool(w, "tokenizer.ggml.normalizer.strip_accents", s.strip_accents) != GGTK_OK))) {
        ok = false;
        ggtk_error_set(err, GGTK_ERR_NOMEM, GGTK_NO_OFFSET, "out of memory");
    }
    json_decref(alternative);
    json_decref(s.cfg);
    return ok;
}
