/* model_hparams.c - the hyper-parameters every family shares, read from "<arch>.*" keys with
 * llama.cpp's defaults (its llama_model_base::load_hparams), the rope scaling turned into the
 * parameters llama.cpp's context gives ggml_rope_ext, and the typed key readers the families'
 * own readers use. */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "model_arch.h"

/* Sanity bounds: far above any real model, low enough that products of them cannot overflow. */
#define MAX_DIM (1u << 20)
#define MAX_LAYERS 4096u
#define MAX_CONTEXT (1u << 24)

uint64_t model_key_offset(const ggtk_file *file, const char *key)
{
    int64_t index = ggtk_find_key(file, key);
    return index < 0 ? GGTK_NO_OFFSET : ggtk_kv_offset(file, index);
}

static void key_name(const hparams_reader *r, const char *name, char *key, size_t size)
{
    snprintf(key, size, "%s.%s", r->arch, name);
}

bool hp_refuse(const hparams_reader *r, ggtk_status status, const char *name, const char *fmt, ...)
{
    char key[128], message[400];
    key_name(r, name, key, sizeof key);
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(message, sizeof message, fmt, ap);
    va_end(ap);
    ggtk_error_set(r->err, status, model_key_offset(r->file, key), "%s: %s",
                   ggtk_path(r->file), message);
    return false;
}

/* An unsigned integer key in [min, max]. */
static bool read_uint(const hparams_reader *r, const char *name, bool required, uint32_t min,
                      uint32_t max, uint32_t *out)
{
    char key[128];
    key_name(r, name, key, sizeof key);
    uint64_t value;
    ggtk_status st = ggtk_get_uint(r->file, key, &value);
    if (st == GGTK_ERR_NOT_FOUND && !required)
        return true;
    if (st == GGTK_ERR_NOT_FOUND)
        return hp_refuse(r, GGTK_ERR_NOT_FOUND, name, "missing metadata key %s", key);
    if (st != GGTK_OK) {
        const ggtk_value *v = ggtk_get(r->file, key);
        return hp_refuse(r, GGTK_ERR_TYPE, name,
                         "metadata key %s is %s, expected a non-negative integer", key,
                         v && v->type == GGTK_VALUE_ARRAY
                             ? "an array (per-layer values are not supported)"
                             : v ? ggtk_value_type_name(v->type) : "?");
    }
    if (value < min || value > max)
        return hp_refuse(r, GGTK_ERR_INVALID, name, "metadata key %s is %llu, expected %u..%u",
                         key, (unsigned long long)value, min, max);
    *out = (uint32_t)value;
    return true;
}

bool hp_count(const hparams_reader *r, const char *name, bool required, uint32_t max,
              uint32_t *out)
{
    return read_uint(r, name, required, 1, max, out);
}

bool hp_count0(const hparams_reader *r, const char *name, uint32_t max, uint32_t *out)
{
    return read_uint(r, name, false, 0, max, out);
}

bool hp_float(const hparams_reader *r, const char *name, bool required, float *out)
{
    char key[128];
    key_name(r, name, key, sizeof key);
    double value;
    ggtk_status st = ggtk_get_float(r->file, key, &value);
    if (st == GGTK_ERR_NOT_FOUND && !required)
        return true;
    if (st != GGTK_OK)
        return hp_refuse(r, st == GGTK_ERR_NOT_FOUND ? GGTK_ERR_NOT_FOUND : GGTK_ERR_TYPE, name,
                         "%s metadata key %s%s",
                         st == GGTK_ERR_NOT_FOUND ? "missing" : "non-numeric", key,
                         st == GGTK_ERR_NOT_FOUND ? "" : " (expected a float)");
    if (!(value > 0) || !isfinite(value))
        return hp_refuse(r, GGTK_ERR_INVALID, name,
                         "metadata key %s is %g, expected a positive number", key, value);
    *out = (float)value;
    return true;
}

bool hp_bool(const hparams_reader *r, const char *name, bool *out)
{
    char key[128];
    key_name(r, name, key, sizeof key);
    const ggtk_value *v = ggtk_get(r->file, key);
    if (v && v->type != GGTK_VALUE_BOOL)
        return hp_refuse(r, GGTK_ERR_TYPE, name, "metadata key %s is %s, expected a bool", key,
                         ggtk_value_type_name(v->type));
    return !v || ggtk_get_bool(r->file, key, out) == GGTK_OK;
}

/* The rope scaling factor: rope.scaling.factor, else the older rope.scale_linear; absent or 0
 * means no scaling (freq_scale 1), as llama.cpp reads it. */
static bool read_rope_factor(const hparams_reader *r, float *freq_scale)
{
    char key[128];
    key_name(r, "rope.scaling.factor", key, sizeof key);
    if (!ggtk_get(r->file, key))
        key_name(r, "rope.scale_linear", key, sizeof key);
    double factor = 0;
    ggtk_status st = ggtk_get_float(r->file, key, &factor);
    if (st != GGTK_OK && st != GGTK_ERR_NOT_FOUND)
        return hp_refuse(r, GGTK_ERR_TYPE, key + strlen(r->arch) + 1,
                         "non-numeric metadata key %s (expected a float)", key);
    if (!(factor >= 0) || !isfinite(factor))
        return hp_refuse(r, GGTK_ERR_INVALID, key + strlen(r->arch) + 1,
                         "metadata key %s is %g, expected a non-negative number", key, factor);
    *freq_scale = factor == 0 ? 1.0f : 1.0f / (float)factor;
    return true;
}

/* llama.cpp's names of the scaling types, in inf_rope_scaling order. */
static const char *const ROPE_SCALING_NAMES[] = {"none", "linear", "yarn", "longrope"};

/* rope.scaling.type (default linear), the factor (rope.scaling.factor, else the older
 * rope.scale_linear; absent or 0 means 1), attn_factor and original_context_length. */
static bool read_rope_scaling(const hparams_reader *r, inf_model_hparams *hp)
{
    char key[128];
    key_name(r, "rope.scaling.type", key, sizeof key);
    const char *type = "linear";
    ggtk_status st = ggtk_get_string(r->file, key, &type);
    if (st != GGTK_OK && st != GGTK_ERR_NOT_FOUND)
        return hp_refuse(r, GGTK_ERR_TYPE, "rope.scaling.type",
                         "metadata key %s is not a string", key);
    size_t t = 0;
    while (t < 4 && strcmp(type, ROPE_SCALING_NAMES[t]) != 0)
        t++;
    if (t == 4)
        return hp_refuse(r, GGTK_ERR_UNSUPPORTED, "rope.scaling.type",
                         "rope scaling '%s' is not supported (none, linear, yarn or longrope)",
                         type);
    hp->rope_scaling = (inf_rope_scaling)t;
    if (!read_rope_factor(r, &hp->rope_freq_scale))
        return false;
    if (hp->rope_scaling == INF_ROPE_SCALING_NONE)
        hp->rope_freq_scale = 1.0f;
    hp->rope_attn_factor = 1.0f;
    hp->n_ctx_orig = hp->n_ctx_train;
    return hp_float(r, "rope.scaling.attn_factor", false, &hp->rope_attn_factor) &&
           hp_count(r, "rope.scaling.original_context_length", false, MAX_CONTEXT,
                    &hp->n_ctx_orig);
}

/* What llama.cpp's context makes of the scaling (llama_context's constructor; type none has
 * forced freq_scale 1 already): YaRN extrapolates (ext_factor 1) and its attention factor
 * cancels the kernel's magnitude correction; the file's attn_factor multiplies in last. Same
 * float operations. */
static rope_config rope_from_hparams(const inf_model_hparams *hp, inf_rope_mode mode)
{
    rope_config rope = {(int)hp->n_rot, mode,
                        inf_rope_params_plain(hp->rope_freq_base, hp->rope_freq_scale)};
    inf_rope_params *p = &rope.params;
    p->n_ctx_orig = (int32_t)hp->n_ctx_orig;
    if (hp->rope_scaling == INF_ROPE_SCALING_YARN) {
        p->ext_factor = 1.0f;
        const float factor = 1.0f / p->freq_scale;
        p->attn_factor = factor <= 1.0f ? 1.0f : 0.1f * 1.0f * logf(factor) + 1.0f;
        p->attn_factor *= 1.0f / (1.0f + 0.1f * logf(factor));
    }
    p->attn_factor *= hp->rope_attn_factor;
    return rope;
}

/* The shapes must fit together for the attention the graph builds. */
static bool check_shapes(const hparams_reader *r, const inf_model_hparams *hp)
{
    const char *path = ggtk_path(r->file);
    if (hp->n_head % hp->n_head_kv != 0) {
        ggtk_error_set(r->err, GGTK_ERR_INVALID, GGTK_NO_OFFSET,
                       "%s: %u attention heads cannot be grouped over %u key/value heads",
                       path, hp->n_head, hp->n_head_kv);
        return false;
    }
    if (hp->n_rot > hp->n_embd_head || hp->n_rot % 2 != 0)
        return hp_refuse(r, GGTK_ERR_INVALID, "rope.dimension_count",
                         "rope.dimension_count %u must be even and at most the head size %u",
                         hp->n_rot, hp->n_embd_head);
    if ((uint64_t)hp->n_embd_head * hp->n_head > MAX_DIM) {
        ggtk_error_set(r->err, GGTK_ERR_UNSUPPORTED, GGTK_NO_OFFSET,
                       "%s: %u heads of %u exceed the supported width", path, hp->n_head,
                       hp->n_embd_head);
        return false;
    }
    return true;
}

/* Head counts and sizes: head_count_kv defaults to head_count, key_length to n_embd / n_head;
 * value_length must equal key_length. */
static bool read_heads(const hparams_reader *r, inf_model_hparams *hp)
{
    hp->n_head_kv = hp->n_head;
    if (!hp_count(r, "attention.head_count_kv", false, hp->n_head, &hp->n_head_kv))
        return false;
    char key[128];
    key_name(r, "attention.key_length", key, sizeof key);
    if (hp->n_embd % hp->n_head != 0 && !ggtk_get(r->file, key)) {
        ggtk_error_set(r->err, GGTK_ERR_INVALID, GGTK_NO_OFFSET,
                       "%s: embedding_length %u is not a multiple of head_count %u",
                       ggtk_path(r->file), hp->n_embd, hp->n_head);
        return false;
    }
    hp->n_embd_head = hp->n_embd / hp->n_head;
    uint32_t value_length = 0;
    if (!hp_count(r, "attention.key_length", false, MAX_DIM, &hp->n_embd_head) ||
        !hp_count(r, "attention.value_length", false, MAX_DIM, &value_length))
        return false;
    if (value_length && value_length != hp->n_embd_head)
        return hp_refuse(r, GGTK_ERR_UNSUPPORTED, "attention.value_length",
                         "attention.value_length %u differs from key_length %u (not supported)",
                         value_length, hp->n_embd_head);
    return true;
}

bool model_read_hparams(inf_model *model, ggtk_error *err)
{
    inf_model_hparams *hp = &model->hparams;
    const model_arch *arch = model->arch;
    const hparams_reader r = {model->file, arch->name, err};
    memset(hp, 0, sizeof *hp);
    hp->arch = arch->name;
    if (!hp_count(&r, "context_length", true, MAX_CONTEXT, &hp->n_ctx_train) ||
        !hp_count(&r, "embedding_length", true, MAX_DIM, &hp->n_embd) ||
        !hp_count(&r, "block_count", true, MAX_LAYERS, &hp->n_layer) ||
        !hp_count(&r, "feed_forward_length", true, MAX_DIM, &hp->n_ff) ||
        !hp_count(&r, "attention.head_count", true, MAX_DIM, &hp->n_head))
        return false;
    uint32_t n_expert = 0;
    if (!hp_count0(&r, "expert_count", UINT32_MAX, &n_expert))
        return false;
    if (n_expert > 0)
        return hp_refuse(&r, GGTK_ERR_UNSUPPORTED, "expert_count",
                         "mixture-of-experts models (expert_count %u) are not supported",
                         n_expert);
    if (!read_heads(&r, hp))
        return false;
    hp->n_rot = hp->n_embd_head;
    hp->rope_freq_base = 10000.0f;
    if (!hp_count(&r, "rope.dimension_count", false, MAX_DIM, &hp->n_rot) ||
        !hp_float(&r, "rope.freq_base", false, &hp->rope_freq_base) ||
        !hp_float(&r, "attention.layer_norm_rms_epsilon", true, &hp->rms_eps) ||
        !hp_count0(&r, "attention.sliding_window", MAX_CONTEXT, &hp->n_swa) ||
        !read_rope_scaling(&r, hp) || !check_shapes(&r, hp))
        return false;
    model->rope = rope_from_hparams(hp, arch->rope_mode);
    return !arch->read_hparams || arch->read_hparams(&r, model);
}
