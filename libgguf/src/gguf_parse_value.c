/* gguf_parse_value.c - parsing of metadata values: the fixed-size scalars, strings, and arrays
 * of any element type including strings and arrays nested up to GGUF_MAX_ARRAY_DEPTH. Counts
 * are checked against the bytes left before anything is allocated for them. */
#include "gguf_reader.h"

#include <string.h>

/* The fewest bytes one array element of a variable-size type can take on disk: a string is at
 * least its length field, a nested array at least its element type and count. */
enum { MIN_STRING_BYTES = 8, MIN_ARRAY_BYTES = 4 + 8 };

gguf_status gguf_parse_string(gguf_parser *p, const char *field, gguf_string *out)
{
    uint64_t offset = p->cursor.pos;
    uint64_t len;
    gguf_status status = gguf_read_u64(p, field, &len);
    if (status != GGUF_OK)
        return status;
    const unsigned char *bytes;
    status = gguf_parser_take(p, len, offset, field, &bytes);
    if (status != GGUF_OK)
        return status;
    char *copy = gguf_arena_strndup(&p->file->arena, bytes, len);
    if (!copy)
        return gguf_parser_fail(p, GGUF_ERR_NOMEM, offset, "out of memory copying %s (%llu bytes)",
                                field, (unsigned long long)len);
    out->len = len;
    out->data = copy;
    return GGUF_OK;
}

static gguf_status check_bools(gguf_parser *p, const unsigned char *bytes, uint64_t count,
                               uint64_t offset)
{
    for (uint64_t i = 0; i < count; i++)
        if (bytes[i] > 1)
            return gguf_parser_fail(p, GGUF_ERR_INVALID, offset + i,
                                    "bool value is %u, expected 0 or 1", bytes[i]);
    return GGUF_OK;
}

static gguf_status parse_fixed_array(gguf_parser *p, gguf_array *arr, uint64_t count_offset)
{
    size_t elem_size = gguf_value_type_size(arr->elem_type);
    uint64_t bytes;
    if (__builtin_mul_overflow(arr->count, (uint64_t)elem_size, &bytes))
        return gguf_parser_fail(p, GGUF_ERR_OVERFLOW, count_offset,
                                "array count %llu of %s overflows a 64-bit size",
                                (unsigned long long)arr->count,
                                gguf_value_type_name(arr->elem_type));
    const unsigned char *data;
    gguf_status status = gguf_parser_take(p, bytes, count_offset, "array data", &data);
    if (status != GGUF_OK)
        return status;
    if (arr->elem_type == GGUF_VALUE_BOOL) {
        status = check_bools(p, data, bytes, count_offset + 8);
        if (status != GGUF_OK)
            return status;
    }
    if (bytes == 0)
        return GGUF_OK;
    arr->data = gguf_arena_memdup(&p->file->arena, data, bytes);
    if (!arr->data)
        return gguf_parser_fail(p, GGUF_ERR_NOMEM, count_offset,
                                "out of memory copying array data (%llu bytes)",
                                (unsigned long long)bytes);
    return GGUF_OK;
}

static gguf_status parse_array(gguf_parser *p, gguf_array *arr, int depth);

/* Strings and nested arrays: items are gathered in a growable array (a pipe's remaining size is
 * unknown, so the count cannot size an allocation) and moved into the arena at the end. */
static gguf_status parse_variable_array(gguf_parser *p, gguf_array *arr, int depth,
                                        uint64_t count_offset)
{
    bool strings = arr->elem_type == GGUF_VALUE_STRING;
    gguf_status status = gguf_parser_check_count(
        p, arr->count, strings ? MIN_STRING_BYTES : MIN_ARRAY_BYTES, count_offset, "array count");
    if (status != GGUF_OK)
        return status;
    gguf_vec items;
    if (!gguf_vec_init(&items, strings ? sizeof(gguf_string) : sizeof(gguf_value),
                       gguf_parser_reserve(p, arr->count)))
        return gguf_parser_fail(p, GGUF_ERR_NOMEM, count_offset, "out of memory for array");
    for (uint64_t i = 0; i < arr->count && status == GGUF_OK; i++) {
        void *item = gguf_vec_push(&items);
        if (!item)
            status = gguf_parser_fail(p, GGUF_ERR_NOMEM, count_offset, "out of memory for array");
        else if (strings)
            status = gguf_parse_string(p, "array string", item);
        else
            status = gguf_parse_value(p, GGUF_VALUE_ARRAY, item, depth + 1);
    }
    if (status == GGUF_OK && items.count) {
        arr->data = gguf_arena_memdup(&p->file->arena, items.items, items.count * items.item_size);
        if (!arr->data)
            status = gguf_parser_fail(p, GGUF_ERR_NOMEM, count_offset, "out of memory for array");
    }
    gguf_vec_free(&items);
    return status;
}

static gguf_status parse_array(gguf_parser *p, gguf_array *arr, int depth)
{
    uint64_t type_offset = p->cursor.pos;
    uint32_t elem_type;
    gguf_status status = gguf_read_u32(p, "array element type", &elem_type);
    if (status != GGUF_OK)
        return status;
    if (elem_type >= GGUF_VALUE_TYPE_COUNT)
        return gguf_parser_fail(p, GGUF_ERR_INVALID, type_offset,
                                "array element type is %u, expected 0..%d", elem_type,
                                GGUF_VALUE_TYPE_COUNT - 1);
    if (elem_type == GGUF_VALUE_ARRAY && depth + 1 >= GGUF_MAX_ARRAY_DEPTH)
        return gguf_parser_fail(p, GGUF_ERR_INVALID, type_offset,
                                "arrays nested deeper than %d levels", GGUF_MAX_ARRAY_DEPTH);
    uint64_t count_offset = p->cursor.pos;
    status = gguf_read_u64(p, "array count", &arr->count);
    if (status != GGUF_OK)
        return status;
    arr->elem_type = (gguf_value_type)elem_type;
    arr->data = NULL;
    if (gguf_value_type_size(arr->elem_type))
        return parse_fixed_array(p, arr, count_offset);
    return parse_variable_array(p, arr, depth, count_offset);
}

gguf_status gguf_parse_value(gguf_parser *p, gguf_value_type type, gguf_value *out, int depth)
{
    out->type = type;
    if (type == GGUF_VALUE_STRING)
        return gguf_parse_string(p, "string value", &out->v.str);
    if (type == GGUF_VALUE_ARRAY)
        return parse_array(p, &out->v.arr, depth);
    uint64_t offset = p->cursor.pos;
    size_t size = gguf_value_type_size(type);
    const unsigned char *bytes;
    gguf_status status = gguf_parser_take(p, size, offset, gguf_value_type_name(type), &bytes);
    if (status != GGUF_OK)
        return status;
    if (type == GGUF_VALUE_BOOL) {
        status = check_bools(p, bytes, 1, offset);
        if (status != GGUF_OK)
            return status;
        out->v.b = bytes[0] != 0;
        return GGUF_OK;
    }
    memcpy(&out->v, bytes, size);
    return GGUF_OK;
}
