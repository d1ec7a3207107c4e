/* gguf_get.c - read-only accessors of an opened file: header facts, key/value pairs with typed
 * getters that convert only when the value fits exactly, and the tensor table. */
#include "gguf_reader.h"

const char *gguf_path(const gguf_file *f) { return f->path; }
uint32_t gguf_version(const gguf_file *f) { return f->version; }
uint32_t gguf_alignment(const gguf_file *f) { return f->alignment; }
uint64_t gguf_data_offset(const gguf_file *f) { return f->data_offset; }
uint64_t gguf_data_size(const gguf_file *f) { return f->data_size; }
uint64_t gguf_file_size(const gguf_file *f) { return f->file_size; }
const void *gguf_data(const gguf_file *f) { return f->data; }

int64_t gguf_kv_count(const gguf_file *f) { return f->n_kv; }

int64_t gguf_find_key(const gguf_file *f, const char *key)
{
    return key ? gguf_index_find(f->kv_index, f->n_kv, key) : -1;
}

const char *gguf_kv_key(const gguf_file *f, int64_t index)
{
    return index >= 0 && index < f->n_kv ? f->kvs[index].key : NULL;
}

const gguf_value *gguf_kv_value(const gguf_file *f, int64_t index)
{
    return index >= 0 && index < f->n_kv ? &f->kvs[index].value : NULL;
}

uint64_t gguf_kv_offset(const gguf_file *f, int64_t index)
{
    return index >= 0 && index < f->n_kv ? f->kvs[index].offset : UINT64_MAX;
}

const gguf_value *gguf_get(const gguf_file *f, const char *key)
{
    return gguf_kv_value(f, gguf_find_key(f, key));
}

/* An integer value as sign and magnitude: false for non-integer types. */
static bool integer_of(const gguf_value *v, bool *negative, uint64_t *magnitude)
{
    int64_t s;
    switch (v->type) {
    case GGUF_VALUE_UINT8: *magnitude = v->v.u8; *negative = false; return true;
    case GGUF_VALUE_UINT16: *magnitude = v->v.u16; *negative = false; return true;
    case GGUF_VALUE_UINT32: *magnitude = v->v.u32; *negative = false; return true;
    case GGUF_VALUE_UINT64: *magnitude = v->v.u64; *negative = false; return true;
    case GGUF_VALUE_INT8: s = v->v.i8; break;
    case GGUF_VALUE_INT16: s = v->v.i16; break;
    case GGUF_VALUE_INT32: s = v->v.i32; break;
    case GGUF_VALUE_INT64: s = v->v.i64; break;
    default: return false;
    }
    *negative = s < 0;
    /* Negating INT64_MIN in unsigned arithmetic is well defined. */
    *magnitude = *negative ? 0 - (uint64_t)s : (uint64_t)s;
    return true;
}

/* The value of `key` or the status telling why there is none. */
static gguf_status lookup(const gguf_file *f, const char *key, const gguf_value **out)
{
    *out = gguf_get(f, key);
    return *out ? GGUF_OK : GGUF_ERR_NOT_FOUND;
}

/* As lookup(), and GGUF_ERR_TYPE unless the value is of `type`: the getters that never convert. */
static gguf_status lookup_exact(const gguf_file *f, const char *key, gguf_value_type type,
                                const gguf_value **out)
{
    gguf_status status = lookup(f, key, out);
    if (status == GGUF_OK && (*out)->type != type)
        return GGUF_ERR_TYPE;
    return status;
}

/* As lookup(), and GGUF_ERR_TYPE unless the value is an integer: its sign and magnitude. */
static gguf_status lookup_integer(const gguf_file *f, const char *key, bool *negative,
                                  uint64_t *magnitude)
{
    const gguf_value *v;
    gguf_status status = lookup(f, key, &v);
    if (status == GGUF_OK && !integer_of(v, negative, magnitude))
        return GGUF_ERR_TYPE;
    return status;
}

gguf_status gguf_get_uint(const gguf_file *f, const char *key, uint64_t *out)
{
    bool negative = false;
    uint64_t magnitude = 0;
    gguf_status status = lookup_integer(f, key, &negative, &magnitude);
    if (status == GGUF_OK && negative)
        return GGUF_ERR_TYPE;
    if (status == GGUF_OK)
        *out = magnitude;
    return status;
}

gguf_status gguf_get_int(const gguf_file *f, const char *key, int64_t *out)
{
    bool negative = false;
    uint64_t magnitude = 0;
    gguf_status status = lookup_integer(f, key, &negative, &magnitude);
    /* INT64_MIN is the one value whose magnitude is past INT64_MAX. */
    uint64_t limit = negative ? (uint64_t)INT64_MAX + 1 : (uint64_t)INT64_MAX;
    if (status == GGUF_OK && magnitude > limit)
        return GGUF_ERR_TYPE;
    if (status == GGUF_OK)
        *out = !negative                       ? (int64_t)magnitude
               : magnitude > (uint64_t)INT64_MAX ? INT64_MIN
                                                 : -(int64_t)magnitude;
    return status;
}

gguf_status gguf_get_float(const gguf_file *f, const char *key, double *out)
{
    const gguf_value *v;
    gguf_status status = lookup(f, key, &v);
    bool negative;
    uint64_t magnitude;
    if (status != GGUF_OK)
        return status;
    if (v->type == GGUF_VALUE_FLOAT32)
        *out = v->v.f32;
    else if (v->type == GGUF_VALUE_FLOAT64)
        *out = v->v.f64;
    else if (integer_of(v, &negative, &magnitude))
        *out = negative ? -(double)magnitude : (double)magnitude;
    else
        return GGUF_ERR_TYPE;
    return GGUF_OK;
}

gguf_status gguf_get_bool(const gguf_file *f, const char *key, bool *out)
{
    const gguf_value *v;
    gguf_status status = lookup_exact(f, key, GGUF_VALUE_BOOL, &v);
    if (status == GGUF_OK)
        *out = v->v.b;
    return status;
}

gguf_status gguf_get_string(const gguf_file *f, const char *key, const char **out)
{
    const gguf_value *v;
    gguf_status status = lookup_exact(f, key, GGUF_VALUE_STRING, &v);
    if (status == GGUF_OK)
        *out = v->v.str.data;
    return status;
}

gguf_status gguf_get_array(const gguf_file *f, const char *key, const gguf_array **out)
{
    const gguf_value *v;
    gguf_status status = lookup_exact(f, key, GGUF_VALUE_ARRAY, &v);
    if (status == GGUF_OK)
        *out = &v->v.arr;
    return status;
}

int64_t gguf_tensor_count(const gguf_file *f) { return f->n_tensors; }

const gguf_tensor_info *gguf_tensor(const gguf_file *f, int64_t index)
{
    return index >= 0 && index < f->n_tensors ? &f->tensors[index] : NULL;
}

int64_t gguf_find_tensor(const gguf_file *f, const char *name)
{
    return name ? gguf_index_find(f->tensor_index, f->n_tensors, name) : -1;
}

uint64_t gguf_tensor_elements(const gguf_tensor_info *t)
{
    uint64_t elements = 1;
    for (uint32_t d = 0; d < t->n_dims; d++)
        elements *= t->ne[d];
    return elements;
}
