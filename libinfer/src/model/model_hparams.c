/* model_hparams.c - the hyper-parameters of a "llama" GGUF file: required keys, optional keys
 * with llama.cpp's defaults, and the checks that they describe a model the graph can build. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "model_internal.h"

#define ARCH "llama"
/* Sanity bounds: far above any real model, low enough that products of them cannot overflow. */
#define MAX_DIM (1u << 20)
#define MAX_LAYERS 4096u

uint64_t llama_key_offset(const ggtk_file *file, const char *key)
{
    int64_t index = ggtk_find_key(file, key);
    return index < 0 ? GGTK_NO_OFFSET : ggtk_kv_offset(file, index);
}

/* Read "llama.<name>" as an unsigned integer in [1, max]. `required` false: absent keeps *out. */
static bool read_count(const ggtk_file *file, const char *name, bool required, uint32_t max,
                       uint32_t *out, ggtk_error *err)
{
    char key[128];
    snprintf(key, sizeof key, ARCH ".%s", name);
    uint64_t value;
    ggtk_status st = ggtk_get_uint(file, key, &value);
    if (st == GGTK_ERR_NOT_FOUND && !required)
        return true;
    if (st == GGTK_ERR_NOT_FOUND) {
        ggtk_error_set(err, GGTK_ERR_NOT_FOUND, GGTK_NO_OFFSET,
                       "%s: missing metadata key %s", ggtk_path(file), key);
        return false;
    }
    if (st != GGTK_OK) {
        const ggtk_value *v = ggtk_get(file, key);
        ggtk_error_set(err, GGTK_ERR_TYPE, llama_key_offset(file, key),
                       "%s: metadata key %s is %s, expected a non-negative integer",
                       ggtk_path(file), key,
                       v && v->type == GGTK_VALUE_ARRAY
                           ? "an array (per-layer values are not supported)"
                           : v ? ggtk_value_type_name(v->type) : "?");
        return false;
    }
    if (value < 1 || value > max) {
        ggtk_error_set(err, GGTK_ERR_INVALID, llama_key_offset(file, key),
                       "%s: metadata key %s is %llu, expected 1..%u", ggtk_path(file),
                       key, (unsigned long long)value, max);
        return false;
    }
    *out = (uint32_t)value;
    return true;
}

/* Read "llama.<name>" as a positive finite float. `required` false: absent keeps *out. */
static bool read_float(const ggtk_file *file, const char *name, bool required, float *out,
                       ggtk_error *err)
{
    char key[128];
    snprintf(key, sizeof key, ARCH ".%s", name);
    double value;
    ggtk_status st = ggtk_get_float(file, key, &value);
    if (st == GGTK_ERR_NOT_FOUND && !required)
        return true;
    if (st != GGTK_OK) {
        ggtk_error_set(err, st == GGTK_ERR_NOT_FOUND ? GGTK_ERR_NOT_FOUND : GGTK_ERR_TYPE,
                       llama_key_offset(file, key), "%s: %s metadata key %s%s", ggtk_path(file),
                       st == GGTK_ERR_NOT_FOUND ? "missing" : "non-numeric", key,
                       st == GGTK_ERR_NOT_FOUND ? "" : " (expected a float)");
        return false;
    }
    if (!(value > 0) || !isfinite(value)) {
        ggtk_error_set(err, GGTK_ERR_INVALID, llama_key_offset(file, key),
                       "%s: metadata key %s is %g, expected a positive number",
                       ggtk_path(file), key, value);
        return false;
    }
    *out = (float)value;
    return true;
}

/* rope.scaling.type / .factor (or the older rope.scale_linear): only linear scaling is known. */
static bool read_rope_scaling(const ggtk_file *file, inf_model_hparams *hp, ggtk_error *err)
{
    float factor = 1.0f;
    if (!read_float(file, "rope.scale_linear", false, &factor, err))
        return false;
    const char *type = NULL;
    ggtk_status st = ggtk_get_string(file, ARCH ".rope.scaling.type", &type);
    if (st == GGTK_ERR_TYPE) {
        ggtk_error_set(err, GGTK_ERR_TYPE, llama_key_offset(file, ARCH ".rope.scaling.type"),
                       "%s: metadata key " ARCH ".rope.scaling.type is not a string",
                       ggtk_path(file));
        return false;
    }
    if (type && strcmp(type, "none") != 0 && strcmp(type, "linear") != 0) {
        ggtk_error_set(err, GGTK_ERR_UNSUPPORTED, llama_key_offset(file, ARCH ".rope.scaling.type"),
                       "%s: rope scaling '%s' is not supported (only linear)",
                       ggtk_path(file), type);
        return false;
    }
    if (type && strcmp(type, "linear") == 0 &&
        !read_float(file, "rope.scaling.factor", false, &factor, err))
        return false;
    if (type && strcmp(type, "none") == 0)
        factor = 1.0f;
    hp->rope_freq_scale = 1.0f / factor;
    return true;
}

/* The shapes must fit together for the attention the graph builds. */
static bool check_hparams(const ggtk_file *file, const inf_model_hparams *hp, ggtk_error *err)
{
    const char *path = ggtk_path(file);
    if (hp->n_head % hp->n_head_kv != 0) {
        ggtk_error_set(err, GGTK_ERR_INVALID, GGTK_NO_OFFSET,
                       "%s: %u attention heads cannot be grouped over %u key/value heads",
                       path, hp->n_head, hp->n_head_kv);
        return false;
    }
    if (hp->n_rot > hp->n_embd_head || hp->n_rot % 2 != 0) {
        ggtk_error_set(err, GGTK_ERR_INVALID, llama_key_offset(file, ARCH ".rope.dimension_count"),
                       "%s: rope.dimension_count %u must be even and at most the head "
                       "size %u", path, hp->n_rot, hp->n_embd_head);
        return false;
    }
    if ((uint64_t)hp->n_embd_head * hp->n_head > MAX_DIM) {
        ggtk_error_set(err, GGTK_ERR_UNSUPPORTED, GGTK_NO_OFFSET,
                       "%s: %u heads of %u exceed the supported width", path, hp->n_head,
                       hp->n_embd_head);
        return false;
    }
    return true;
}

bool llama_read_hparams(const ggtk_file *file, inf_model_hparams *hp, ggtk_error *err)
{
    memset(hp, 0, sizeof *hp);
    if (!read_count(file, "context_length", true, 1u << 24, &hp->n_ctx_train, err) ||
        !read_count(file, "embedding_length", true, MAX_DIM, &hp->n_embd, err) ||
        !read_count(file, "block_count", true, MAX_LAYERS, &hp->n_layer, err) ||
        !read_count(file, "feed_forward_length", true, MAX_DIM, &hp->n_ff, err) ||
        !read_count(file, "attention.head_count", true, MAX_DIM, &hp->n_head, err))
        return false;
    uint64_t n_expert = 0;
    if (ggtk_get_uint(file, ARCH ".expert_count", &n_expert) == GGTK_OK && n_expert > 0) {
        ggtk_error_set(err, GGTK_ERR_UNSUPPORTED, llama_key_offset(file, ARCH ".expert_count"),
                       "%s: mixture-of-experts Llama models (expert_count %llu) are not "
                       "supported", ggtk_path(file), (unsigned long long)n_expert);
        return false;
    }
    hp->n_head_kv = hp->n_head;
    if (!read_count(file, "attention.head_count_kv", false, hp->n_head, &hp->n_head_kv, err))
        return false;
    if (hp->n_embd % hp->n_head != 0 && !ggtk_get(file, ARCH ".attention.key_length")) {
        ggtk_error_set(err, GGTK_ERR_INVALID, GGTK_NO_OFFSET,
                       "%s: embedding_length %u is not a multiple of head_count %u",
                       ggtk_path(file), hp->n_embd, hp->n_head);
        return false;
    }
    hp->n_embd_head = hp->n_embd / hp->n_head;
    uint32_t value_length = 0;
    if (!read_count(file, "attention.key_length", false, MAX_DIM, &hp->n_embd_head, err) ||
        !read_count(file, "attention.value_length", false, MAX_DIM, &value_length, err))
        return false;
    if (value_length && value_length != hp->n_embd_head) {
        ggtk_error_set(err, GGTK_ERR_UNSUPPORTED, llama_key_offset(file, ARCH ".attention.value_length"),
                       "%s: attention.value_length %u differs from key_length %u (not "
                       "supported)", ggtk_path(file), value_length, hp->n_embd_head);
        return false;
    }
    hp->n_rot = hp->n_embd_head;
    hp->rope_freq_base = 10000.0f;
    if (!read_count(file, "rope.dimension_count", false, MAX_DIM, &hp->n_rot, err) ||
        !read_float(file, "rope.freq_base", false, &hp->rope_freq_base, err) ||
        !read_float(file, "attention.layer_norm_rms_epsilon", true, &hp->rms_eps, err) ||
        !read_rope_scaling(file, hp, err))
        return false;
    return check_hparams(file, hp, err);
}
