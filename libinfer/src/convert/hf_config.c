/* hf_config.c - config.json to the `<arch>.*` keys of a family (its table in hf_families.c) and
 * back; each value checked to fit the GGUF type it becomes. */
#include "convert_internal.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

static const char *const rope_theta_names[] = {"global_rope_theta", "rope_global_theta",
                                               "rope_theta_global", "rope_theta",
                                               "rotary_emb_base", NULL};
static const char *const rope_theta_swa_names[] = {"local_rope_theta", "rope_local_theta",
                                                   "rope_theta_local", "swa_rope_theta",
                                                   "rope_local_base_freq", NULL};

const json_t *hf_config_get(const json_t *config, const char *name)
{
    const json_t *value = json_object_get(config, name);
    if (!value) {
        const json_t *text = json_object_get(config, "text_config");
        value = json_is_object(text) ? json_object_get(text, name) : NULL;
    }
    return json_is_null(value) ? NULL : value;
}

/* find_hparam: the first of `names` present; its name in *found. */
static const json_t *find_first(const json_t *config, const char *const *names, const char **found)
{
    for (size_t i = 0; names[i]; i++) {
        const json_t *value = hf_config_get(config, names[i]);
        if (value) {
            *found = names[i];
            return value;
        }
    }
    return NULL;
}

/* rope_parameters (or rope_scaling), its "full_attention" part when it has one. */
static const json_t *rope_parameters(const json_t *config, bool full)
{
    const json_t *rope = hf_config_get(config, "rope_parameters");
    if (!json_is_object(rope))
        rope = hf_config_get(config, "rope_scaling");
    if (!json_is_object(rope))
        return NULL;
    const json_t *part = json_object_get(rope, "full_attention");
    return full && json_is_object(part) ? part : rope;
}

static ggtk_status bad_value(const char *path, const char *name, const char *what, ggtk_error *err)
{
    return ggtk_error_set(err, GGTK_ERR_INVALID, GGTK_NO_OFFSET, "%s: \"%s\" is not %s", path,
                          name, what);
}

static ggtk_status set_u32(ggtk_writer *w, const char *key, const json_t *value, const char *path,
                           const char *name, ggtk_error *err)
{
    if (!json_is_integer(value) || json_integer_value(value) < 0 ||
        json_integer_value(value) > (json_int_t)UINT32_MAX)
        return bad_value(path, name, "an integer from 0 to 4294967295 (a GGUF uint32)", err);
    return ggtk_writer_set_u32(w, key, (uint32_t)json_integer_value(value));
}

static ggtk_status set_f32(ggtk_writer *w, const char *key, const json_t *value, const char *path,
                           const char *name, ggtk_error *err)
{
    double v = json_number_value(value);
    if (!json_is_number(value) || !isfinite((float)v))
        return bad_value(path, name, "a number that fits a float32", err);
    return ggtk_writer_set_f32(w, key, (float)v);
}

static ggtk_status need_u32(const json_t *config, const char *name, const char *path,
                            uint64_t *out, ggtk_error *err)
{
    const json_t *v = hf_config_get(config, name);
    if (!v)
        return ggtk_error_set(err, GGTK_ERR_INVALID, GGTK_NO_OFFSET, "%s: \"%s\" is missing",
                              path, name);
    if (!json_is_integer(v) || json_integer_value(v) <= 0 || json_integer_value(v) > (json_int_t)UINT32_MAX)
        return bad_value(path, name, "a positive integer that fits a uint32", err);
    *out = (uint64_t)json_integer_value(v);
    return GGTK_OK;
}

/* rope_type linear and yarn as TextModel writes them; other types are refused by name, except
 * the ones it ignores here too (no type: none). */
static ggtk_status rope_scaling(const json_t *config, const char *path, const char *arch,
                                ggtk_writer *w, ggtk_error *err)
{
    const json_t *rope = rope_parameters(config, true);
    const json_t *type = rope ? json_object_get(rope, "rope_type") : NULL;
    if (!type && rope)
        type = json_object_get(rope, "type");
    if (!json_is_string(type) || strcmp(json_string_value(type), "default") == 0)
        return GGTK_OK;
    const char *name = json_string_value(type);
    const json_t *factor = json_object_get(rope, "factor");
    char key[160];
    if ((strcmp(name, "linear") == 0 || strcmp(name, "yarn") == 0) && factor) {
        snprintf(key, sizeof key, "%s.rope.scaling.type", arch);
        ggtk_status status = ggtk_writer_set_string(w, key, name);
        snprintf(key, sizeof key, "%s.rope.scaling.factor", arch);
        if (status == GGTK_OK)
            status = set_f32(w, key, factor, path, "rope_scaling.factor", err);
        if (status == GGTK_OK && strcmp(name, "yarn") == 0) {
            snprintf(key, sizeof key, "%s.rope.scaling.original_context_length", arch);
            const json_t *orig = json_object_get(rope, "original_max_position_embeddings");
            status = orig ? set_u32(w, key, orig, path, "rope_scaling.original_max_position_embeddings", err)
                          : bad_value(path, "rope_scaling.original_max_position_embeddings",
                                      "present (yarn needs it)", err);
        }
        return status;
    }
    return ggtk_error_set(err, GGTK_ERR_UNSUPPORTED, GGTK_NO_OFFSET,
                          "%s: rope scaling type '%s' is not supported by this converter", path,
                          name);
}

static const json_t *rope_theta(const json_t *config, bool swa, const char **found)
{
    const json_t *rope = rope_parameters(config, !swa);
    if (swa && rope) {
        const json_t *sliding = json_object_get(rope, "sliding_attention");
        rope = json_is_object(sliding) ? sliding : NULL;
    }
    const json_t *theta = rope ? json_object_get(rope, "rope_theta") : NULL;
    if (json_is_number(theta)) {
        *found = "rope_theta";
        return theta;
    }
    return find_first(config, swa ? rope_theta_swa_names : rope_theta_names, found);
}

/* The value a computed key gets; false when the key is left out. */
static ggtk_status computed_u32(const config_key *k, const json_t *config, const char *path,
                                uint64_t *out, bool *present, ggtk_error *err)
{
    uint64_t n_embd = 0, n_head = 0;
    ggtk_status status = need_u32(config, "hidden_size", path, &n_embd, err);
    if (status == GGTK_OK)
        status = need_u32(config, "num_attention_heads", path, &n_head, err);
    if (status != GGTK_OK)
        return status;
    *present = true;
    if (k->kind == CK_ROPE_DIM) {
        const json_t *head_dim = hf_config_get(config, "head_dim");
        if (head_dim)
            return need_u32(config, "head_dim", path, out, err);
        *out = n_embd / n_head;
        return GGTK_OK;
    }
    const json_t *rope = rope_parameters(config, false);
    const json_t *pct = rope ? json_object_get(rope, "partial_rotary_factor") : NULL;
    if (!pct)
        pct = hf_config_get(config, "partial_rotary_factor");
    double factor = pct ? json_number_value(pct) : 1.0;
    if (pct && (!json_is_number(pct) || !(factor > 0 && factor <= 1)))
        return bad_value(path, "partial_rotary_factor", "a number in (0, 1]", err);
    *out = (uint64_t)(factor * (double)n_embd) / n_head;
    return GGTK_OK;
}

static ggtk_status one_key(const config_key *k, const json_t *config, const char *path,
                           const char *arch, uint32_t file_type, ggtk_writer *w, ggtk_error *err)
{
    char key[160];
    if (strncmp(k->gguf, "general.", 8) == 0)
        snprintf(key, sizeof key, "%s", k->gguf);
    else
        snprintf(key, sizeof key, "%s.%s", arch, k->gguf);
    const char *name = k->hf[0];
    const json_t *value = NULL;
    switch (k->kind) {
    case CK_FILE_TYPE:
        return ggtk_writer_set_u32(w, key, file_type);
    case CK_ROPE_SCALING:
        return rope_scaling(config, path, arch, w, err);
    case CK_ROPE_DIM:
    case CK_ROPE_DIM_PARTIAL: {
        uint64_t v = 0;
        bool present = false;
        ggtk_status status = computed_u32(k, config, path, &v, &present, err);
        return status == GGTK_OK && present ? ggtk_writer_set_u32(w, key, (uint32_t)v) : status;
    }
    case CK_ROPE_THETA:
    case CK_ROPE_THETA_SWA:
        value = rope_theta(config, k->kind == CK_ROPE_THETA_SWA, &name);
        break;
    case CK_SLIDING_WINDOW_UNLESS_PATTERN_1: {
        const json_t *pattern = hf_config_get(config, "sliding_window_pattern");
        if (json_is_integer(pattern) && json_integer_value(pattern) == 1)
            return GGTK_OK;
        value = find_first(config, k->hf, &name);
        break;
    }
    default:
        value = find_first(config, k->hf, &name);
    }
    if (!value && (k->flags & CK_DEFAULT)) {
        bool is_int = k->kind == CK_U32;
        return is_int ? ggtk_writer_set_u32(w, key, (uint32_t)k->fallback)
                      : ggtk_writer_set_f32(w, key, (float)k->fallback);
    }
    if (!value && (k->flags & CK_NULL_ZERO))
        return ggtk_writer_set_u32(w, key, 0);
    if (!value && (k->flags & CK_REQUIRED)) {
        char names[256] = "";
        for (size_t i = 0, used = 0; k->hf[i] && used < sizeof names; i++)
            used += (size_t)snprintf(names + used, sizeof names - used, "%s\"%s\"",
                                     i ? " or " : "", k->hf[i]);
        return ggtk_error_set(err, GGTK_ERR_INVALID, GGTK_NO_OFFSET,
                              "%s: %s is missing (%s needs it for %s)", path,
                              names[0] ? names : "\"rope_theta\"", arch, key);
    }
    if (!value)
        return GGTK_OK;
    if (k->kind == CK_F32_TRUTHY && json_is_number(value) && json_number_value(value) == 0)
        return GGTK_OK;
    if (k->kind == CK_U32 || k->kind == CK_SLIDING_WINDOW_UNLESS_PATTERN_1)
        return set_u32(w, key, value, path, name, err);
    return set_f32(w, key, value, path, name, err);
}

ggtk_status hf_config_to_gguf(const hf_family *family, const json_t *config, const char *config_path,
                              uint32_t file_type, ggtk_writer *writer, ggtk_error *err)
{
    for (size_t i = 0; i < family->n_keys; i++) {
        ggtk_error local = {0};
        ggtk_status status = one_key(&family->keys[i], config, config_path, family->gguf_arch,
                                     file_type, writer, &local);
        if (status != GGTK_OK) {
            if (local.status == GGTK_OK) /* the writer failed, not a check */
                return ggtk_error_set(err, status, GGTK_NO_OFFSET, "%s: cannot set %s: %s",
                                      config_path, family->keys[i].gguf, ggtk_strerror(status));
            if (err)
                *err = local;
            return status;
        }
    }
    return GGTK_OK;
}

/* The config.json name --to-hf writes a key under: the row's first name, except where that first
 * name is a rarer spelling tried first on import. */
static const char *export_name(const config_key *k)
{
    if (strcmp(k->gguf, "block_count") == 0)
        return "num_hidden_layers";
    if (strcmp(k->gguf, "feed_forward_length") == 0)
        return "intermediate_size";
    return k->hf[0];
}

/* --to-hf: one key back to its config.json name. */
static void key_back(const config_key *k, const hf_family *family, const ggtk_file *gguf,
                     json_t *config)
{
    const char *name = export_name(k);
    char key[160];
    snprintf(key, sizeof key, "%s.%s", family->gguf_arch, k->gguf);
    uint64_t u = 0;
    double f = 0;
    switch (k->kind) {
    case CK_U32:
    case CK_SLIDING_WINDOW_UNLESS_PATTERN_1:
        if (ggtk_get_uint(gguf, key, &u) == GGTK_OK && name)
            json_object_set_new(config, name, json_integer((json_int_t)u));
        return;
    case CK_F32:
    case CK_F32_TRUTHY:
        if (ggtk_get_float(gguf, key, &f) == GGTK_OK && name)
            json_object_set_new(config, name, json_real(f));
        return;
    case CK_ROPE_THETA:
        if (ggtk_get_float(gguf, key, &f) == GGTK_OK)
            json_object_set_new(config, "rope_theta", json_real(f));
        return;
    case CK_ROPE_THETA_SWA:
        if (ggtk_get_float(gguf, key, &f) == GGTK_OK)
            json_object_set_new(config, "rope_local_base_freq", json_real(f));
        return;
    default:
        return;
    }
}

/* rope.dimension_count back to head_dim / partial_rotary_factor, rope scaling to rope_scaling. */
static void rope_back(const hf_family *family, const ggtk_file *gguf, json_t *config)
{
    char key[160];
    uint64_t rope_dim = 0, n_embd = 0, n_head = 0;
    snprintf(key, sizeof key, "%s.rope.dimension_count", family->gguf_arch);
    bool has_dim = ggtk_get_uint(gguf, key, &rope_dim) == GGTK_OK;
    snprintf(key, sizeof key, "%s.embedding_length", family->gguf_arch);
    ggtk_get_uint(gguf, key, &n_embd);
    snprintf(key, sizeof key, "%s.attention.head_count", family->gguf_arch);
    ggtk_get_uint(gguf, key, &n_head);
    if (has_dim && n_head && n_embd) {
        bool partial = strcmp(family->gguf_arch, "phi3") == 0;
        if (partial && rope_dim * n_head != n_embd)
            json_object_set_new(config, "partial_rotary_factor",
                                json_real((double)(rope_dim * n_head) / (double)n_embd));
        else if (!partial && rope_dim != n_embd / n_head && !json_object_get(config, "head_dim"))
            json_object_set_new(config, "head_dim", json_integer((json_int_t)rope_dim));
    }
    const char *type = NULL;
    double factor = 0;
    snprintf(key, sizeof key, "%s.rope.scaling.type", family->gguf_arch);
    if (ggtk_get_string(gguf, key, &type) != GGTK_OK || strcmp(type, "none") == 0)
        return;
    snprintf(key, sizeof key, "%s.rope.scaling.factor", family->gguf_arch);
    ggtk_get_float(gguf, key, &factor);
    json_t *scaling = json_pack("{s:s,s:f}", "rope_type", type, "factor", factor);
    uint64_t orig = 0;
    snprintf(key, sizeof key, "%s.rope.scaling.original_context_length", family->gguf_arch);
    if (ggtk_get_uint(gguf, key, &orig) == GGTK_OK && strcmp(type, "yarn") == 0)
        json_object_set_new(scaling, "original_max_position_embeddings", json_integer((json_int_t)orig));
    json_object_set_new(config, "rope_scaling", scaling);
}

void hf_config_from_gguf(const hf_family *family, const ggtk_file *gguf, json_t *config)
{
    for (size_t i = 0; i < family->n_keys; i++)
        key_back(&family->keys[i], family, gguf, config);
    rope_back(family, gguf, config);
    char key[160];
    uint64_t orig = 0;
    snprintf(key, sizeof key, "%s.rope.scaling.original_context_length", family->gguf_arch);
    if (strcmp(family->gguf_arch, "phi3") == 0 && ggtk_get_uint(gguf, key, &orig) == GGTK_OK)
        json_object_set_new(config, "original_max_position_embeddings", json_integer((json_int_t)orig));
}
