/* gguf_writer_value.c - metadata values in the writer: checking and deep-copying what the caller
 * gives, measuring their on-disk size, and serializing them in the GGUF layout. */
#include "gguf_writer_internal.h"

#include <stdlib.h>
#include <string.h>

static bool is_fixed_size(ggtk_value_type type)
{
    return ggtk_value_type_size(type) != 0;
}

static ggtk_status string_copy(ggtk_string *copy, const ggtk_string *string)
{
    if (string->len > 0 && !string->data)
        return GGTK_ERR_USAGE;
    if (string->len >= SIZE_MAX)
        return GGTK_ERR_OVERFLOW;
    char *data = malloc((size_t)string->len + 1);
    if (!data)
        return GGTK_ERR_NOMEM;
    if (string->len > 0)
        memcpy(data, string->data, (size_t)string->len);
    data[string->len] = '\0';
    copy->len = string->len;
    copy->data = data;
    return GGTK_OK;
}

static void array_free(ggtk_array *array)
{
    if (array->elem_type == GGTK_VALUE_STRING) {
        const ggtk_string *strings = array->data;
        for (uint64_t i = 0; strings && i < array->count; i++)
            free((void *)strings[i].data);
    } else if (array->elem_type == GGTK_VALUE_ARRAY) {
        ggtk_value *nested = (ggtk_value *)array->data;
        for (uint64_t i = 0; nested && i < array->count; i++)
            array_free(&nested[i].v.arr);
    }
    free((void *)array->data);
    array->data = NULL;
    array->count = 0;
}

/* Packed elements; bools must be 0 or 1 so that every reader sees the same value. */
static ggtk_status fixed_elements_copy(ggtk_array *copy, const ggtk_array *array)
{
    size_t size = ggtk_value_type_size(array->elem_type);
    size_t bytes;
    if (array->count > SIZE_MAX || __builtin_mul_overflow((size_t)array->count, size, &bytes))
        return GGTK_ERR_OVERFLOW;
    if (array->elem_type == GGTK_VALUE_BOOL) {
        const uint8_t *flags = array->data;
        for (size_t i = 0; i < bytes; i++)
            if (flags[i] > 1)
                return GGTK_ERR_INVALID;
    }
    void *data = malloc(bytes ? bytes : 1);
    if (!data)
        return GGTK_ERR_NOMEM;
    if (bytes)
        memcpy(data, array->data, bytes);
    copy->data = data;
    return GGTK_OK;
}

/* Copies element by element; on failure `copy` holds the elements done so far for the caller
 * to free with array_free(). */
static ggtk_status array_copy(ggtk_array *copy, const ggtk_array *array);

static ggtk_status compound_elements_copy(ggtk_array *copy, const ggtk_array *array)
{
    bool strings = array->elem_type == GGTK_VALUE_STRING;
    size_t size = strings ? sizeof(ggtk_string) : sizeof(ggtk_value);
    if (array->count > SIZE_MAX / size)
        return GGTK_ERR_OVERFLOW;
    void *data = calloc(array->count ? (size_t)array->count : 1, size);
    if (!data)
        return GGTK_ERR_NOMEM;
    copy->data = data;
    for (uint64_t i = 0; i < array->count; i++) {
        ggtk_status status;
        if (strings) {
            status = string_copy((ggtk_string *)data + i, (const ggtk_string *)array->data + i);
        } else {
            const ggtk_value *element = (const ggtk_value *)array->data + i;
            ggtk_value *element_copy = (ggtk_value *)data + i;
            if (element->type != GGTK_VALUE_ARRAY)
                return GGTK_ERR_INVALID;
            element_copy->type = GGTK_VALUE_ARRAY;
            status = array_copy(&element_copy->v.arr, &element->v.arr);
        }
        if (status != GGTK_OK)
            return status;
        copy->count = i + 1;
    }
    return GGTK_OK;
}

static ggtk_status array_copy(ggtk_array *copy, const ggtk_array *array)
{
    copy->elem_type = array->elem_type;
    copy->count = 0;
    copy->data = NULL;
    if ((unsigned)array->elem_type >= GGTK_VALUE_TYPE_COUNT)
        return GGTK_ERR_INVALID;
    if (array->count > 0 && !array->data)
        return GGTK_ERR_USAGE;
    if (is_fixed_size(array->elem_type)) {
        ggtk_status status = fixed_elements_copy(copy, array);
        if (status == GGTK_OK)
            copy->count = array->count;
        return status;
    }
    ggtk_status status = compound_elements_copy(copy, array);
    if (status != GGTK_OK)
        array_free(copy);
    return status;
}

ggtk_status writer_value_copy(ggtk_value *copy, const ggtk_value *value)
{
    memset(copy, 0, sizeof *copy);
    if (!value)
        return GGTK_ERR_USAGE;
    ggtk_status status = GGTK_OK;
    if (value->type == GGTK_VALUE_STRING)
        status = string_copy(&copy->v.str, &value->v.str);
    else if (value->type == GGTK_VALUE_ARRAY)
        status = array_copy(&copy->v.arr, &value->v.arr);
    else if (is_fixed_size(value->type))
        copy->v = value->v;
    else
        status = GGTK_ERR_INVALID;
    if (status != GGTK_OK) {
        memset(copy, 0, sizeof *copy);
        return status;
    }
    copy->type = value->type;
    return GGTK_OK;
}

void writer_value_free(ggtk_value *value)
{
    if (value->type == GGTK_VALUE_STRING)
        free((void *)value->v.str.data);
    else if (value->type == GGTK_VALUE_ARRAY)
        array_free(&value->v.arr);
    memset(value, 0, sizeof *value);
}

/* Element type, count, then the elements. */
static bool array_payload_bytes(const ggtk_array *array, uint64_t *bytes)
{
    uint64_t total = 4 + 8;
    if (is_fixed_size(array->elem_type)) {
        uint64_t elements;
        if (__builtin_mul_overflow(array->count, (uint64_t)ggtk_value_type_size(array->elem_type),
                                   &elements))
            return false;
        return !__builtin_add_overflow(total, elements, bytes);
    }
    for (uint64_t i = 0; i < array->count; i++) {
        uint64_t element;
        if (array->elem_type == GGTK_VALUE_STRING) {
            const ggtk_string *string = (const ggtk_string *)array->data + i;
            if (__builtin_add_overflow(string->len, 8, &element))
                return false;
        } else if (!array_payload_bytes(&((const ggtk_value *)array->data)[i].v.arr, &element)) {
            return false;
        }
        if (__builtin_add_overflow(total, element, &total))
            return false;
    }
    *bytes = total;
    return true;
}

bool writer_value_payload_bytes(const ggtk_value *value, uint64_t *bytes)
{
    if (value->type == GGTK_VALUE_STRING)
        return !__builtin_add_overflow(value->v.str.len, 8, bytes);
    if (value->type == GGTK_VALUE_ARRAY)
        return array_payload_bytes(&value->v.arr, bytes);
    *bytes = ggtk_value_type_size(value->type);
    return true;
}

void writer_string_serialize(writer_output *out, const char *data, uint64_t len)
{
    writer_output_u64(out, len);
    writer_output_bytes(out, data, (size_t)len);
}

static void scalar_serialize(writer_output *out, const ggtk_value *value)
{
    uint32_t f32_bits;
    uint64_t f64_bits;
    switch (value->type) {
    case GGTK_VALUE_UINT8: writer_output_le(out, value->v.u8, 1); break;
    case GGTK_VALUE_INT8: writer_output_le(out, (uint8_t)value->v.i8, 1); break;
    case GGTK_VALUE_UINT16: writer_output_le(out, value->v.u16, 2); break;
    case GGTK_VALUE_INT16: writer_output_le(out, (uint16_t)value->v.i16, 2); break;
    case GGTK_VALUE_UINT32: writer_output_le(out, value->v.u32, 4); break;
    case GGTK_VALUE_INT32: writer_output_le(out, (uint32_t)value->v.i32, 4); break;
    case GGTK_VALUE_BOOL: writer_output_le(out, value->v.b ? 1 : 0, 1); break;
    case GGTK_VALUE_UINT64: writer_output_le(out, value->v.u64, 8); break;
    case GGTK_VALUE_INT64: writer_output_le(out, (uint64_t)value->v.i64, 8); break;
    case GGTK_VALUE_FLOAT32:
        memcpy(&f32_bits, &value->v.f32, sizeof f32_bits);
        writer_output_le(out, f32_bits, 4);
        break;
    case GGTK_VALUE_FLOAT64:
        memcpy(&f64_bits, &value->v.f64, sizeof f64_bits);
        writer_output_le(out, f64_bits, 8);
        break;
    default: break; /* compound types never reach here */
    }
}

static void array_serialize(writer_output *out, const ggtk_array *array)
{
    writer_output_u32(out, (uint32_t)array->elem_type);
    writer_output_u64(out, array->count);
    if (is_fixed_size(array->elem_type)) {
        /* Packed arrays are little-endian already (see ggtk_array). */
        writer_output_bytes(out, array->data,
                            (size_t)array->count * ggtk_value_type_size(array->elem_type));
        return;
    }
    for (uint64_t i = 0; i < array->count; i++) {
        if (array->elem_type == GGTK_VALUE_STRING) {
            const ggtk_string *string = (const ggtk_string *)array->data + i;
            writer_string_serialize(out, string->data, string->len);
        } else {
            array_serialize(out, &((const ggtk_value *)array->data)[i].v.arr);
        }
    }
}

void writer_value_serialize(writer_output *out, const ggtk_value *value)
{
    writer_output_u32(out, (uint32_t)value->type);
    if (value->type == GGTK_VALUE_STRING)
        writer_string_serialize(out, value->v.str.data, value->v.str.len);
    else if (value->type == GGTK_VALUE_ARRAY)
        array_serialize(out, &value->v.arr);
    else
        scalar_serialize(out, value);
}
