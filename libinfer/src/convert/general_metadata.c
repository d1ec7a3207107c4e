/* general_metadata.c - the general.* keys of a conversion: read from a JSON file of GGUF keys
 * (llama.cpp's --metadata override; --to-hf writes one as gguf_metadata.json) in the order
 * gguf-py's Metadata.set_gguf_meta_model writes them, or, without one, general.name from the
 * folder's name and general.size_label from the parameter count (gguf-py's size_label()). */
#include "convert_internal.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* set_gguf_meta_model's order; other general.* keys of the file follow in the file's order, then
 * tags and languages, which it writes last. */
static const char *const ordered_keys[] = {
    "general.name", "general.author", "general.version", "general.organization",
    "general.finetune", "general.basename", "general.description", "general.quantized_by",
    "general.size_label", "general.license", "general.license.name", "general.license.link",
    "general.url", "general.doi", "general.uuid", "general.repo_url", "general.source.url",
    "general.source.doi", "general.source.uuid", "general.source.repo_url",
};
static const char *const last_keys[] = {"general.tags", "general.languages"};

/* Keys a conversion computes itself, never taken from or written to the JSON file. */
static const char *const computed_keys[] = {"general.architecture", "general.type",
                                            "general.file_type", "general.quantization_version",
                                            "general.alignment"};

static bool in_list(const char *key, const char *const *list, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (strcmp(key, list[i]) == 0)
            return true;
    return false;
}

#define IN(key, list) in_list(key, list, sizeof list / sizeof list[0])

static ggtk_status set_json_value(ggtk_writer *w, const char *key, const json_t *v,
                                  const char *path, ggtk_error *err)
{
    if (json_is_string(v))
        return ggtk_writer_set_string(w, key, json_string_value(v));
    if (json_is_boolean(v))
        return ggtk_writer_set_bool(w, key, json_is_true(v));
    if (json_is_integer(v)) {
        json_int_t i = json_integer_value(v);
        return i >= 0 && i <= (json_int_t)UINT32_MAX ? ggtk_writer_set_u32(w, key, (uint32_t)i)
                                                     : ggtk_writer_set_i64(w, key, i);
    }
    if (json_is_real(v))
        return ggtk_writer_set_f32(w, key, (float)json_real_value(v));
    if (json_is_array(v)) {
        size_t n = json_array_size(v);
        const char **strings = malloc((n ? n : 1) * sizeof *strings);
        if (!strings)
            return ggtk_error_set(err, GGTK_ERR_NOMEM, GGTK_NO_OFFSET, "out of memory");
        for (size_t i = 0; i < n; i++)
            if (!(strings[i] = json_string_value(json_array_get(v, i)))) {
                free(strings);
                return ggtk_error_set(err, GGTK_ERR_INVALID, GGTK_NO_OFFSET,
                                      "%s: \"%s\": arrays must hold strings", path, key);
            }
        ggtk_status status = ggtk_writer_set_string_array(w, key, strings, n);
        free(strings);
        return status;
    }
    return ggtk_error_set(err, GGTK_ERR_INVALID, GGTK_NO_OFFSET,
                          "%s: \"%s\" is not a string, number, bool or array of strings", path, key);
}

static ggtk_status set_checked(ggtk_writer *w, const char *key, const json_t *v, const char *path,
                               ggtk_error *err)
{
    ggtk_error local = {0};
    ggtk_status status = set_json_value(w, key, v, path, &local);
    if (status == GGTK_OK)
        return GGTK_OK;
    if (local.status != GGTK_OK) {
        if (err)
            *err = local;
        return status;
    }
    return ggtk_error_set(err, status, GGTK_NO_OFFSET, "%s: cannot set \"%s\": %s", path, key,
                          ggtk_strerror(status));
}

/* gguf-py's model_weight_count_rounded_notation with two digits: "135M", "1.7B", "7.2B". */
static void size_label(uint64_t n, char *buf, size_t size)
{
    double scaled;
    const char *suffix;
    if (n > 1e12) { scaled = n * 1e-12; suffix = "T"; }
    else if (n > 1e9) { scaled = n * 1e-9; suffix = "B"; }
    else if (n > 1e6) { scaled = n * 1e-6; suffix = "M"; }
    else { scaled = n * 1e-3; suffix = "K"; }
    char digits[32];
    snprintf(digits, sizeof digits, "%.0f", nearbyint(scaled)); /* Python's round(): to even */
    size_t len = strlen(digits);
    const char *p = digits;
    while (*p == '0') { p++; len--; }
    int fix = len >= 2 ? 0 : 2 - (int)len;
    snprintf(buf, size, "%.*f%s", fix, scaled, suffix);
}

/* The keys of the --metadata file, checked, or an empty object without one; NULL on error. */
static json_t *load_metadata(const char *path, ggtk_error *err)
{
    if (!path)
        return json_object();
    json_error_t jerr;
    json_t *meta = json_load_file(path, JSON_REJECT_DUPLICATES, &jerr);
    if (!meta) {
        ggtk_error_set(err, GGTK_ERR_INVALID, GGTK_NO_OFFSET, "%s: %s", path, jerr.text);
        return NULL;
    }
    if (!json_is_object(meta)) {
        ggtk_error_set(err, GGTK_ERR_INVALID, GGTK_NO_OFFSET,
                       "%s: not a JSON object of GGUF keys", path);
        json_decref(meta);
        return NULL;
    }
    const char *key;
    json_t *v;
    json_object_foreach(meta, key, v) if (strncmp(key, "general.", 8) != 0 || IN(key, computed_keys)) {
        ggtk_error_set(err, GGTK_ERR_INVALID, GGTK_NO_OFFSET,
                       "%s: \"%s\" is not a general.* key a conversion takes", path, key);
        json_decref(meta);
        return NULL;
    }
    return meta;
}

ggtk_status general_metadata_to_gguf(const char *metadata_path, const char *default_name,
                                     uint64_t n_params, ggtk_writer *writer, ggtk_error *err)
{
    json_t *meta = load_metadata(metadata_path, err);
    if (!meta)
        return err ? err->status : GGTK_ERR_INVALID;
    const char *path = metadata_path ? metadata_path : "metadata";
    char label[32];
    size_label(n_params, label, sizeof label);
    if (!json_object_get(meta, "general.name"))
        json_object_set_new(meta, "general.name", json_string(default_name));
    if (!json_object_get(meta, "general.size_label") && n_params > 0)
        json_object_set_new(meta, "general.size_label", json_string(label));
    ggtk_status status = GGTK_OK;
    const char *key;
    json_t *v;
    for (size_t i = 0; status == GGTK_OK && i < sizeof ordered_keys / sizeof ordered_keys[0]; i++)
        if ((v = json_object_get(meta, ordered_keys[i])))
            status = set_checked(writer, ordered_keys[i], v, path, err);
    json_object_foreach(meta, key, v) if (status == GGTK_OK && !IN(key, ordered_keys) &&
                                          !IN(key, last_keys))
        status = set_checked(writer, key, v, path, err);
    for (size_t i = 0; status == GGTK_OK && i < sizeof last_keys / sizeof last_keys[0]; i++)
        if ((v = json_object_get(meta, last_keys[i])))
            status = set_checked(writer, last_keys[i], v, path, err);
    json_decref(meta);
    return status;
}

static json_t *value_to_json(const ggtk_value *v)
{
    switch (v->type) {
    case GGTK_VALUE_STRING: return json_stringn(v->v.str.data, (size_t)v->v.str.len);
    case GGTK_VALUE_BOOL: return json_boolean(v->v.b);
    case GGTK_VALUE_UINT8: return json_integer(v->v.u8);
    case GGTK_VALUE_UINT16: return json_integer(v->v.u16);
    case GGTK_VALUE_UINT32: return json_integer(v->v.u32);
    case GGTK_VALUE_INT32: return json_integer(v->v.i32);
    case GGTK_VALUE_INT64: return json_integer(v->v.i64);
    case GGTK_VALUE_UINT64: return json_integer((json_int_t)v->v.u64);
    case GGTK_VALUE_FLOAT32: return json_real(v->v.f32);
    case GGTK_VALUE_FLOAT64: return json_real(v->v.f64);
    case GGTK_VALUE_ARRAY:
        if (v->v.arr.elem_type == GGTK_VALUE_STRING) {
            json_t *a = json_array();
            const ggtk_string *s = v->v.arr.data;
            for (uint64_t i = 0; i < v->v.arr.count; i++)
                json_array_append_new(a, json_stringn(s[i].data, (size_t)s[i].len));
            return a;
        }
        return NULL;
    default: return NULL;
    }
}

json_t *general_metadata_from_gguf(const ggtk_file *gguf)
{
    json_t *meta = json_object();
    for (int64_t i = 0; meta && i < ggtk_kv_count(gguf); i++) {
        const char *key = ggtk_kv_key(gguf, i);
        if (strncmp(key, "general.", 8) != 0 || IN(key, computed_keys))
            continue;
        json_t *v = value_to_json(ggtk_kv_value(gguf, i));
        if (v)
            json_object_set_new(meta, key, v);
    }
    return meta;
}
