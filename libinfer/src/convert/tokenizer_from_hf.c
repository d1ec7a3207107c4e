/* tokenizer_from_hf.c - HF -> GGUF for the tokenizer: reads the folder's files, picks the
 * vocabulary kind as the reference converter does (tokenizer.model first, then tokenizer.json)
 * with the few rules its model classes add (vocab_rules), and adds the keys in the reference's
 * order: add_space_prefix (Llama path: from tokenizer_config.json's add_prefix_space), model, pre,
 * tokens, [scores,] token_type, [merges,] special ids, add_* flags, chat template, normalizer
 * flags[, add_space_prefix false for Gemma 2/3's SentencePiece]. */
#include "convert/convert_tokenizer.h"

#include <stdlib.h>
#include <string.h>

#include "convert/tokenizer_internal.h"

/* What differs between the reference converter's model classes when they build the vocabulary,
 * one row per class, chosen by config.json's "architectures"; the last row is the Llama path
 * (Llama, Mistral, SmolLM and any architecture not listed). */
typedef struct vocab_rule {
    const char *architectures;  /* '|'-separated config.json architectures */
    bool prefix_from_config;    /* add_space_prefix from tokenizer_config.json first (LlamaModel) */
    bool spm_no_space_prefix;   /* add_space_prefix false after a SentencePiece vocabulary (Gemma 2/3) */
    bool phi3_added_tokens;     /* Phi-3's own added-token rules for SentencePiece */
    bool spm_vocab_per_layer;   /* vocab_size_per_layer_input counts before vocab_size */
} vocab_rule;

static const vocab_rule vocab_rules[] = {
    {"Qwen2ForCausalLM|Qwen2Model|Qwen3ForCausalLM", false, false, false, true},
    {"Gemma2ForCausalLM|Gemma3ForCausalLM|Gemma3ForConditionalGeneration", false, true, false, true},
    {"Phi3ForCausalLM", false, false, true, false},
    {"", true, false, false, true},
};

static const vocab_rule *rule_for(const json_t *config)
{
    const char *arch = json_string_value(json_array_get(json_object_get(config, "architectures"), 0));
    size_t last = sizeof vocab_rules / sizeof vocab_rules[0] - 1;
    for (size_t i = 0; arch && i < last; i++) {
        if (conv_name_in_list(vocab_rules[i].architectures, arch)) {
            return &vocab_rules[i];
        }
    }
    return &vocab_rules[last];
}

/* The folder's JSON files; each NULL when absent. */
typedef struct hf_files {
    char *tokenizer_json_path, *model_path;
    json_t *tokenizer_json, *tokenizer_config, *config, *added_tokens;
} hf_files;

static void hf_files_free(hf_files *f)
{
    free(f->tokenizer_json_path);
    free(f->model_path);
    json_decref(f->tokenizer_json);
    json_decref(f->tokenizer_config);
    json_decref(f->config);
    json_decref(f->added_tokens);
}

static bool load_optional(const char *dir, const char *name, json_t **out, ggtk_error *err)
{
    char *path = conv_path(dir, name);
    bool ok = path ? conv_json_load(path, true, out, err)
                   : (ggtk_error_set(err, GGTK_ERR_NOMEM, GGTK_NO_OFFSET, "out of memory"), false);
    if (ok && *out && !json_is_object(*out)) {
        ggtk_error_set(err, GGTK_ERR_TYPE, GGTK_NO_OFFSET, "%s: the top level is not an object", path);
        json_decref(*out);
        *out = NULL;
        ok = false;
    }
    free(path);
    return ok;
}

static bool hf_files_load(const char *dir, hf_files *f, ggtk_error *err)
{
    memset(f, 0, sizeof *f);
    f->tokenizer_json_path = conv_path(dir, "tokenizer.json");
    f->model_path = conv_path(dir, "tokenizer.model");
    if (!f->tokenizer_json_path || !f->model_path) {
        return ggtk_error_set(err, GGTK_ERR_NOMEM, GGTK_NO_OFFSET, "out of memory"), false;
    }
    return load_optional(dir, "tokenizer.json", &f->tokenizer_json, err) &&
           load_optional(dir, "tokenizer_config.json", &f->tokenizer_config, err) &&
           load_optional(dir, "config.json", &f->config, err) &&
           load_optional(dir, "added_tokens.json", &f->added_tokens, err);
}

/* config.json's vocabulary size (the first of `keys` present, at the top or in text_config), 0
 * when none is; false for a value that is not a positive integer. */
static bool config_vocab_size(const json_t *config, const char *const *keys, uint64_t *out, ggtk_error *err)
{
    *out = 0;
    for (const char *const *k = keys; *k; k++) {
        const json_t *v = json_object_get(config, *k);
        if (!v || json_is_null(v)) {
            v = json_object_get(json_object_get(config, "text_config"), *k);
        }
        if (!v || json_is_null(v)) {
            continue;
        }
        if (!json_is_integer(v) || json_integer_value(v) <= 0) {
            return ggtk_error_set(err, GGTK_ERR_INVALID, GGTK_NO_OFFSET, "config.json: %s is not a positive integer", *k), false;
        }
        *out = (uint64_t)json_integer_value(v);
        return true;
    }
    return true;
}

static bool write_vocab(ggtk_writer *w, const conv_vocab *v, const char *model, const char *pre)
{
    bool ok = ggtk_writer_set_string(w, "tokenizer.ggml.model", model) == GGTK_OK &&
              ggtk_writer_set_string(w, "tokenizer.ggml.pre", pre) == GGTK_OK &&
              ggtk_writer_set_string_array(w, "tokenizer.ggml.tokens", (const char *const *)v->tokens, v->n_tokens) == GGTK_OK;
    if (ok && v->scores) {
        ok = ggtk_writer_set_array(w, "tokenizer.ggml.scores", GGTK_VALUE_FLOAT32, v->n_tokens, v->scores) == GGTK_OK;
    }
    ok = ok && ggtk_writer_set_array(w, "tokenizer.ggml.token_type", GGTK_VALUE_INT32, v->n_tokens, v->types) == GGTK_OK;
    if (ok && v->n_merges) {
        ok = ggtk_writer_set_string_array(w, "tokenizer.ggml.merges", (const char *const *)v->merges, v->n_merges) == GGTK_OK;
    }
    return ok;
}

static bool build_vocab(const char *dir, const hf_files *f, const vocab_rule *rule, conv_vocab *v, const char **model,
                        const char **pre, ggtk_error *err)
{
    static const char *const spm_size_keys[] = {"vocab_size_per_layer_input", "vocab_size", NULL};
    static const char *const bpe_size_keys[] = {"vocab_size", NULL};
    uint64_t vocab_size;
    if (conv_is_file(f->model_path)) {
        *model = "llama";
        *pre = "default";
        return config_vocab_size(f->config, rule->spm_vocab_per_layer ? spm_size_keys : bpe_size_keys, &vocab_size, err) &&
               conv_spm_from_model_file(f->model_path, f->tokenizer_config, f->added_tokens, f->tokenizer_json,
                                        rule->phi3_added_tokens, vocab_size, v, err);
    }
    if (!f->tokenizer_json) {
        ggtk_error_set(err, GGTK_ERR_NOT_FOUND, GGTK_NO_OFFSET, "%s: neither tokenizer.model nor tokenizer.json exists", dir);
        return false;
    }
    *model = "gpt2";
    return config_vocab_size(f->config, bpe_size_keys, &vocab_size, err) &&
           conv_bpe_from_tokenizer_json(f->tokenizer_json, f->tokenizer_config, vocab_size, f->tokenizer_json_path, v,
                                        pre, err);
}

bool convert_tokenizer_from_hf(const char *hf_dir, ggtk_writer *w, ggtk_error *err)
{
    hf_files f;
    conv_vocab v = {0};
    const char *model = NULL, *pre = NULL;
    bool ok = hf_files_load(hf_dir, &f, err);
    const vocab_rule *rule = rule_for(f.config);
    const json_t *prefix = json_object_get(f.tokenizer_config, "add_prefix_space");
    if (ok && rule->prefix_from_config && json_is_boolean(prefix) &&
        ggtk_writer_set_bool(w, "tokenizer.ggml.add_space_prefix", json_is_true(prefix)) != GGTK_OK) {
        ok = false;
        ggtk_error_set(err, GGTK_ERR_NOMEM, GGTK_NO_OFFSET, "out of memory");
    }
    ok = ok && build_vocab(hf_dir, &f, rule, &v, &model, &pre, err);
    if (ok && !write_vocab(w, &v, model, pre)) {
        ok = false;
        ggtk_error_set(err, GGTK_ERR_NOMEM, GGTK_NO_OFFSET, "out of memory writing the vocabulary");
    }
    if (ok) {
        conv_special_input in = {f.tokenizer_json, f.tokenizer_config, f.config, hf_dir,
                                 strcmp(model, "llama") == 0 ? v.n_tokens : UINT64_MAX};
        ok = conv_special_add(&in, w, err);
    }
    if (ok && rule->spm_no_space_prefix && strcmp(model, "llama") == 0 &&
        ggtk_writer_set_bool(w, "tokenizer.ggml.add_space_prefix", false) != GGTK_OK) {
        ok = false;
        ggtk_error_set(err, GGTK_ERR_NOMEM, GGTK_NO_OFFSET, "out of memory");
    }
    conv_vocab_free(&v);
    hf_files_free(&f);
    return ok;
}
