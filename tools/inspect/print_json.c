/* print_json.c - the report as one JSON document (jansson): the same sections as the text report
 * under "header", "metadata", "tensors", "types" and "model". JSON has no NaN or infinity, so a
 * non-finite float value is written as the string "nan", "inf" or "-inf"; nothing is dropped. */
#include "inspect.h"

#include <inttypes.h>
#include <jansson.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

enum { PREVIEW_ELEMENTS = GGTK_FORMAT_PREVIEW_ELEMENTS }; /* as in the text report */

/* JSON strings must be UTF-8; token strings in a vocabulary need not be, so invalid bytes are
 * replaced instead of failing the whole document. */
json_t *inspect_json_string(const char *data, uint64_t len)
{
    json_t *valid = json_stringn(data, (size_t)len);
    if (valid)
        return valid;
    char *clean = malloc((size_t)len * 3 + 1);
    if (!clean)
        return NULL;
    size_t out = 0;
    const unsigned char *s = (const unsigned char *)data;
    for (size_t i = 0; i < len;) {
        size_t seq = ggtk_utf8_sequence(s + i, (size_t)len - i);
        if (seq == 0) {
            memcpy(clean + out, "\xEF\xBF\xBD", 3);
            out += 3;
            i++;
        } else {
            memcpy(clean + out, s + i, seq);
            out += seq;
            i += seq;
        }
    }
    json_t *result = json_stringn(clean, out);
    free(clean);
    return result;
}

void inspect_json_append(json_t **list, json_t *item)
{
    if (!item || json_array_append_new(*list, item) != 0) {
        json_decref(*list);
        *list = NULL;
    }
}

static json_t *u64_json(uint64_t value)
{
    /* json_int_t is signed 64-bit: larger values go out as decimal strings, not rounded reals. */
    if (value > INT64_MAX) {
        char text[24];
        snprintf(text, sizeof text, "%" PRIu64, value);
        return json_string(text);
    }
    return json_integer((json_int_t)value);
}

/* jansson refuses non-finite reals (json_real() returns NULL), which would drop the key. */
static json_t *real_json(double value)
{
    if (isnan(value))
        return json_string("nan");
    if (isinf(value))
        return json_string(value > 0 ? "inf" : "-inf");
    return json_real(value);
}

static json_t *cstring_json(const char *text) { return inspect_json_string(text, strlen(text)); }

static json_t *array_json(const ggtk_array *arr, bool full)
{
    uint64_t shown = full || arr->count <= PREVIEW_ELEMENTS ? arr->count : PREVIEW_ELEMENTS;
    json_t *list = json_array();
    size_t size = ggtk_value_type_size(arr->elem_type);
    for (uint64_t i = 0; list && i < shown; i++) {
        json_t *item;
        if (arr->elem_type == GGTK_VALUE_STRING) {
            const ggtk_string *s = &((const ggtk_string *)arr->data)[i];
            item = inspect_json_string(s->data, s->len);
        } else if (arr->elem_type == GGTK_VALUE_ARRAY) {
            item = inspect_json_value(&((const ggtk_value *)arr->data)[i], full);
        } else {
            ggtk_value element = {.type = arr->elem_type};
            memcpy(&element.v, (const unsigned char *)arr->data + i * size, size);
            item = inspect_json_value(&element, full);
        }
        inspect_json_append(&list, item);
    }
    return list;
}

json_t *inspect_json_value(const ggtk_value *value, bool full)
{
    switch (value->type) {
    case GGTK_VALUE_UINT8: return json_integer(value->v.u8);
    case GGTK_VALUE_INT8: return json_integer(value->v.i8);
    case GGTK_VALUE_UINT16: return json_integer(value->v.u16);
    case GGTK_VALUE_INT16: return json_integer(value->v.i16);
    case GGTK_VALUE_UINT32: return json_integer(value->v.u32);
    case GGTK_VALUE_INT32: return json_integer(value->v.i32);
    case GGTK_VALUE_UINT64: return u64_json(value->v.u64);
    case GGTK_VALUE_INT64: return json_integer(value->v.i64);
    case GGTK_VALUE_FLOAT32: return real_json(value->v.f32);
    case GGTK_VALUE_FLOAT64: return real_json(value->v.f64);
    case GGTK_VALUE_BOOL: return json_boolean(value->v.b);
    case GGTK_VALUE_STRING: return inspect_json_string(value->v.str.data, value->v.str.len);
    case GGTK_VALUE_ARRAY: return array_json(&value->v.arr, full);
    default: return json_null();
    }
}

static json_t *header_json(const ggtk_file *file)
{
    return json_pack("{s:I, s:I, s:I, s:I, s:I, s:I}", "version", (json_int_t)ggtk_version(file),
                     "alignment", (json_int_t)ggtk_alignment(file), "kv_count",
                     (json_int_t)ggtk_kv_count(file), "tensor_count",
                     (json_int_t)ggtk_tensor_count(file), "data_offset",
                     (json_int_t)ggtk_data_offset(file), "file_size",
                     (json_int_t)ggtk_file_size(file));
}

static json_t *metadata_json(const inspect_options *opt, const ggtk_file *file)
{
    json_t *list = json_array();
    for (int64_t i = 0; list && i < ggtk_kv_count(file); i++) {
        const ggtk_value *value = ggtk_kv_value(file, i);
        json_t *entry = json_pack("{s:o, s:s, s:o}", "key", cstring_json(ggtk_kv_key(file, i)),
                                  "type", ggtk_value_type_name(value->type), "value",
                                  inspect_json_value(value, opt->full));
        if (entry && value->type == GGTK_VALUE_ARRAY) {
            json_object_set_new(entry, "element_type",
                                json_string(ggtk_value_type_name(value->v.arr.elem_type)));
            json_object_set_new(entry, "count", u64_json(value->v.arr.count));
            json_object_set_new(entry, "truncated",
                                json_boolean(!opt->full && value->v.arr.count > PREVIEW_ELEMENTS));
        }
        inspect_json_append(&list, entry);
    }
    return list;
}

json_t *inspect_json_shape(const ggtk_tensor_info *tensor)
{
    json_t *shape = json_array();
    for (uint32_t d = 0; shape && d < tensor->n_dims; d++)
        inspect_json_append(&shape, u64_json(tensor->ne[d]));
    return shape;
}

static json_t *tensor_json(int64_t index, const ggtk_tensor_info *t, const uint64_t *hash)
{
    json_t *entry = json_pack("{s:I, s:o, s:s, s:o, s:o, s:o}", "index", (json_int_t)index,
                              "name", cstring_json(t->name), "type",
                              ggtk_tensor_type_name(t->type), "shape",
                              inspect_json_shape(t), "offset", u64_json(t->offset), "bytes",
                              u64_json(t->size));
    if (entry && hash) {
        char hex[17];
        snprintf(hex, sizeof hex, "%016" PRIx64, *hash);
        json_object_set_new(entry, "xxh64", json_string(hex));
    }
    return entry;
}

static json_t *tensors_json(const inspect_options *opt, const ggtk_file *file,
                            const uint64_t *hashes)
{
    json_t *list = json_array();
    for (int64_t i = 0; list && i < ggtk_tensor_count(file); i++) {
        const ggtk_tensor_info *t = ggtk_tensor(file, i);
        if (inspect_tensor_selected(opt, t->name))
            inspect_json_append(&list, tensor_json(i, t, hashes ? &hashes[i] : NULL));
    }
    return list;
}

static json_t *types_json(const ggtk_summary *summary)
{
    json_t *list = json_array();
    for (int i = 0; list && i < summary->n_types; i++) {
        const ggtk_type_usage *u = &summary->types[i];
        double share = summary->tensor_bytes
                           ? 100.0 * (double)u->bytes / (double)summary->tensor_bytes
                           : 0.0;
        inspect_json_append(&list, json_pack("{s:s, s:I, s:o, s:o, s:f}", "type",
                                              ggtk_tensor_type_name(u->type),
                                              "tensors", (json_int_t)u->tensors, "elements",
                                              u64_json(u->elements), "bytes", u64_json(u->bytes),
                                              "percent", share));
    }
    return list;
}

static json_t *model_json(const ggtk_summary *summary)
{
    const ggtk_file_type_info *ft = summary->file_type_info;
    return json_pack("{s:o?, s:o, s:o, s:f, s:I, s:s?, s:s?, s:b}", "architecture",
                     summary->architecture ? cstring_json(summary->architecture) : NULL,
                     "parameters", u64_json(summary->parameters),
                     "tensor_bytes", u64_json(summary->tensor_bytes), "bits_per_weight",
                     summary->bits_per_weight, "file_type", (json_int_t)summary->file_type,
                     "file_type_name", ft ? ft->name : NULL, "file_type_label",
                     ft ? ft->label : NULL, "file_type_guessed", summary->file_type_guessed);
}

int inspect_print_json(const inspect_options *opt, const ggtk_file *file,
                       const ggtk_summary *summary, const uint64_t *hashes, uint64_t all_hash)
{
    json_t *root = json_pack("{s:o, s:o, s:o, s:o, s:o, s:o}", "file",
                             cstring_json(ggtk_path(file)), "header", header_json(file),
                             "metadata", metadata_json(opt, file), "tensors",
                             tensors_json(opt, file, hashes), "types", types_json(summary),
                             "model", model_json(summary));
    if (root && opt->tensor_glob)
        json_object_set_new(root, "tensor_glob", cstring_json(opt->tensor_glob));
    if (root && inspect_is_split_part(file)) {
        bool failed = false;
        json_t *split = inspect_split_json(opt->files[0], &failed);
        if (failed) {
            json_decref(root);
            return EXIT_FAIL;
        }
        if (!split || json_object_set_new(root, "split", split) != 0) {
            json_decref(root);
            root = NULL;
        }
    }
    if (root && hashes && !opt->tensor_glob) {
        char hex[17];
        snprintf(hex, sizeof hex, "%016" PRIx64, all_hash);
        json_object_set_new(root, "xxh64_all", json_string(hex));
    }
    if (!root || json_dumpf(root, stdout, JSON_INDENT(2)) != 0) {
        json_decref(root);
        inspect_error("%s: building the JSON document failed (out of memory?)", ggtk_path(file));
        return EXIT_FAIL;
    }
    putchar('\n');
    json_decref(root);
    return EXIT_OK;
}
