/* gguf_get.c - read-only accessors of an opened file: header facts, key/value pairs with typed
 * getters that convert only when the value fits exactly, and the tensor table. */
#include "gguf_reader.h"

const char *ggtk_path(const ggtk_file *f) { return f->path; }
uint32_t ggtk_version(const ggtk_file *f) { return f->version; }
uint32_t ggtk_alignment(const ggtk_file *f) { return f->alignment; }
uint64_t ggtk_data_offset(const ggtk_file *f) { return f->data_offset; }
uint64_t ggtk_data_size(const ggtk_file *f) { return f->data_size; }
uint64_t ggtk_file_size(const ggtk_file *f) { return f->file_size; }
const void *ggtk_data(const ggtk_file *f) { return f->data; }

int64_t ggtk_kv_count(const ggtk_file *f) { return f->n_kv; }

int64_t ggtk_find_key(const ggtk_file *f, const char *key)
{
    return key ? ggtk_index_find(f->kv_index, f->n_kv, key) : -1;
}

const char *ggtk_kv_key(const ggtk_file *f, int64_t index)
{
    return index >= 0 && index < f->n_kv ? f->kvs[index].key : NULL;
}

const ggtk_value *ggtk_kv_value(const ggtk_file *f, int64_t index)
{
    return index >= 0 && index < f->n_kv ? &f->kvs[index].value : NULL;
}

uint64_t ggtk_kv_offset(const ggtk_file *f, int64_t index)
{
    return index >= 0 && index < f->n_kv ? f->kvs[index].offset : UINT64_MAX;
}

const ggtk_value *ggtk_get(const ggtk_file *f, const char *key)
{
    return ggtk_kv_value(f, ggtk_find_key(f, key));
}

/* An integer value as sign and magnitude: false for non-integer types. */
static bool integer_of(const ggtk_value *v, bool *negative, uint64_t *magnitude)
{
    int64_t s;
    switch (v->type) {
    case GGTK_VALUE_UINT8: *magnitude = v->v.u8; *negative = false; return true;
    case GGTK_VALUE_UINT16: *magnitude = v->v.u16; *negative = false; return true;
    case GGTK_VALUE_UINT32: *magnitude = v->v.u32; *negative = false; return true;
    case GGTK_VALUE_UINT64: *magnitude = v->v.u64; *negative = false; return true;
    case GGTK_VALUE_INT8: s = v->v.i8; break;
    case GGTK_VALUE_INT16: s = v->v.i16; break;
    case GGTK_VALUE_INT32: s = v->v.i32; break;
    case GGTK_VALUE_INT64: s = v->v.i64; break;
    default: return false;
    }
    *negative = s < 0;
    /* Negating INT64_MIN in unsigned arithmetic is well defined. */
    *magnitude = *negative ? 0 - (uint64_t)s : (uint64_t)s;
    return true;
}

/* The value of `key` or the status telling why there is none. */
static ggtk_status lookup(const ggtk_file *f, const char *key, const ggtk_value **out)
{
    *out = ggtk_get(f, key);
    return *out ? GGTK_OK : GGTK_ERR_NOT_FOUND;
}

/* As lookup(), and GGTK_ERR_TYPE unless the value is of `type`: the getters that never convert. */
static ggtk_status lookup_exact(const ggtk_file *f, const char *key, ggtk_value_type type,
                                const ggtk_value **out)
{
    ggtk_status status = lookup(f, key, out);
    if (status == GGTK_OK && (*out)->type != type)
        return GGTK_ERR_TYPE;
    return status;
}

/* As lookup(), and GGTK_ERR_TYPE unless the value is an integer: its sign and magnitude. */
static ggtk_status lookup_integer(const ggtk_file *f, const char *key, bool *negative,
                                  uint64_t *magnitude)
{
    const ggtk_value *v;
    ggtk_status status = lookup(f, key, &v);
    if (status == GGTK_OK && !integer_of(v, negative, magnitude))
        return GGTK_ERR_TYPE;
    return status;
}

ggtk_status ggtk_get_uint(const ggtk_file *f, const char *key, uint64_t *out)
{
    bool negative = false;
    uint64_t magnitude = 0;
    ggtk_status status = lookup_integer(f, key, &negative, &magnitude);
    if (status == GGTK_OK && negative)
        return GGTK_ERR_TYPE;
    if (status == GGTK_OK)
        *out = magnitude;
    return status;
}

ggtk_status ggtk_get_int(const ggtk_file *f, const char *key, int64_t *out)
{
    bool negative = false;
    uint64_t magnitude = 0;
    ggtk_status status = lookup_integer(f, key, &negative, &magnitude);
    /* INT64_MIN is the one value whose magnitude is past INT64_MAX. */
    uint64_t limit = negative ? (uint64_t)INT64_MAX + 1 : (uint64_t)INT64_MAX;
    if (status == GGTK_OK && magnitude > limit)
        return GGTK_ERR_TYPE;
    if (status == GGTK_OK)
        *out = !negative                       ? (int64_t)magnitude
               : magnitude > (uint64_t)INT64_MAX ? INT64_MIN
                                                 : -(int64_t)magnitude;
    return status;
}

ggtk_status ggtk_get_float(const ggtk_file *f, const char *key, double *out)
{
    const ggtk_value *v;
    ggtk_status status = lookup(f, key, &v);
    bool negative;
    uint64_t magnitude;
    if (status != GGTK_OK)
        return status;
    if (v->type == GGTK_VALUE_FLOAT32)
        *out = v->v.f32;
    else if (v->type == GGTK_VALUE_FLOAT64)
        *out = v->v.f64;
    else if (integer_of(v, &negative, &magnitude))
        *out = negative ? -(double)magnitude : (double)magnitude;
    else
        return GGTK_ERR_TYPE;
    return GGTK_OK;
}

ggtk_status ggtk_get_bool(const ggtk_file *f, const char *key, bool *out)
{
    const ggtk_value *v;
    ggtk_status status = lookup_exact(f, key, GGTK_VALUE_BOOL, &v);
    if (status == GGTK_OK)
        *out = v->v.b;
    return status;
}

ggtk_status ggtk_get_string(const ggtk_file *f, const char *key, const char **out)
{
    const ggtk_value *v;
    ggtk_status status = lookup_exact(f, key, GGTK_VALUE_STRING, &v);
    if (status == GGTK_OK)
        *out = v->v.str.data;
    return status;
}

ggtk_status ggtk_get_array(const ggtk_file *f, const char *key, const ggtk_array **out)
{
    const ggtk_value *v;
    ggtk_status status = lookup_exact(f, key, GGTK_VALUE_ARRAY, &v);
    if (status == GGTK_OK)
        *out = &v->v.arr;
    return status;
}

int64_t ggtk_tensor_count(const ggtk_file *f) { return f->n_tensors; }

const ggtk_tensor_info *ggtk_tensor(const ggtk_file *f, int64_t index)
{
    return index >= 0 && index < f->n_tensors ? &f->tensors[index] : NULL;
}

int64_t ggtk_find_tensor(const ggtk_file *f, const char *name)
{
    return name ? ggtk_index_find(f->tensor_index, f->n_tensors, name) : -1;
}

uint64_t ggtk_tensor_elements(const ggtk_tensor_info *t)
{
    uint64_t elements = 1;
    for (uint32_t d = 0; d < t->n_dims; d++)
        elements *= t->ne[d];
    return elements;
}
