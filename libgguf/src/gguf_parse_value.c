/* gguf_parse_value.c - parsing of metadata values: the fixed-size scalars, strings, and arrays
 * of any element type including strings and arrays nested up to GGTK_MAX_ARRAY_DEPTH. Counts
 * are checked against the bytes left before anything is allocated for them. */
#include "gguf_reader.h"

#include <string.h>

/* The fewest bytes one array element of a variable-size type can take on disk: a string is at
 * least its length field, a nested array at least its element type and count. */
enum { MIN_STRING_BYTES = 8, MIN_ARRAY_BYTES = 4 + 8 };

ggtk_status ggtk_parse_string(ggtk_parser *p, const char *field, ggtk_string *out)
{
    uint64_t offset = p->cursor.pos;
    uint64_t len;
    ggtk_status status = ggtk_read_u64(p, field, &len);
    if (status != GGTK_OK)
        return status;
    const unsigned char *bytes;
    status = ggtk_parser_take(p, len, offset, field, &bytes);
    if (status != GGTK_OK)
        return status;
    char *copy = ggtk_arena_strndup(&p->file->arena, bytes, len);
    if (!copy)
        return ggtk_parser_fail(p, GGTK_ERR_NOMEM, offset, "out of memory copying %s (%llu bytes)",
                                field, (unsigned long long)len);
    out->len = len;
    out->data = copy;
    return GGTK_OK;
}

static ggtk_status check_bools(ggtk_parser *p, const unsigned char *bytes, uint64_t count,
                               uint64_t offset)
{
    for (uint64_t i = 0; i < count; i++)
        if (bytes[i] > 1)
            return ggtk_parser_fail(p, GGTK_ERR_INVALID, offset + i,
                                    "bool value is %u, expected 0 or 1", bytes[i]);
    return GGTK_OK;
}

static ggtk_status parse_fixed_array(ggtk_parser *p, ggtk_array *arr, uint64_t count_offset)
{
    size_t elem_size = ggtk_value_type_size(arr->elem_type);
    uint64_t bytes;
    if (__builtin_mul_overflow(arr->count, (uint64_t)elem_size, &bytes))
        return ggtk_parser_fail(p, GGTK_ERR_OVERFLOW, count_offset,
                                "array count %llu of %s overflows a 64-bit size",
                                (unsigned long long)arr->count,
                                ggtk_value_type_name(arr->elem_type));
    const unsigned char *data;
    ggtk_status status = ggtk_parser_take(p, bytes, count_offset, "array data", &data);
    if (status != GGTK_OK)
        return status;
    if (arr->elem_type == GGTK_VALUE_BOOL) {
        status = check_bools(p, data, bytes, count_offset + 8);
        if (status != GGTK_OK)
            return status;
    }
    if (bytes == 0)
        return GGTK_OK;
    arr->data = ggtk_arena_memdup(&p->file->arena, data, bytes);
    if (!arr->data)
        return ggtk_parser_fail(p, GGTK_ERR_NOMEM, count_offset,
                                "out of memory copying array data (%llu bytes)",
                                (unsigned long long)bytes);
    return GGTK_OK;
}

static ggtk_status parse_array(ggtk_parser *p, ggtk_array *arr, int depth);

/* Strings and nested arrays: items are gathered in a growable array (a pipe's remaining size is
 * unknown, so the count cannot size an allocation) and moved into the arena at the end. */
static ggtk_status parse_variable_array(ggtk_parser *p, ggtk_array *arr, int depth,
                                        uint64_t count_offset)
{
    bool strings = arr->elem_type == GGTK_VALUE_STRING;
    ggtk_status status = ggtk_parser_check_count(
        p, arr->count, strings ? MIN_STRING_BYTES : MIN_ARRAY_BYTES, count_offset, "array count");
    if (status != GGTK_OK)
        return status;
    ggtk_vec items;
    if (!ggtk_vec_init(&items, strings ? sizeof(ggtk_string) : sizeof(ggtk_value),
                       ggtk_parser_reserve(p, arr->count)))
        return ggtk_parser_fail(p, GGTK_ERR_NOMEM, count_offset, "out of memory for array");
    for (uint64_t i = 0; i < arr->count && status == GGTK_OK; i++) {
        void *item = ggtk_vec_push(&items);
        if (!item)
            status = ggtk_parser_fail(p, GGTK_ERR_NOMEM, count_offset, "out of memory for array");
        else if (strings)
            status = ggtk_parse_string(p, "array string", item);
        else
            status = ggtk_parse_value(p, GGTK_VALUE_ARRAY, item, depth + 1);
    }
    if (status == GGTK_OK && items.count) {
        arr->data = ggtk_arena_memdup(&p->file->arena, items.items, items.count * items.item_size);
        if (!arr->data)
            status = ggtk_parser_fail(p, GGTK_ERR_NOMEM, count_offset, "out of memory for array");
    }
    ggtk_vec_free(&items);
    return status;
}

static ggtk_status parse_array(ggtk_parser *p, ggtk_array *arr, int depth)
{
    uint64_t type_offset = p->cursor.pos;
    uint32_t elem_type;
    ggtk_status status = ggtk_read_u32(p, "array element type", &elem_type);
    if (status != GGTK_OK)
        return status;
    if (elem_type >= GGTK_VALUE_TYPE_COUNT)
        return ggtk_parser_fail(p, GGTK_ERR_INVALID, type_offset,
                                "array element type is %u, expected 0..%d", elem_type,
                                GGTK_VALUE_TYPE_COUNT - 1);
    if (elem_type == GGTK_VALUE_ARRAY && depth + 1 >= GGTK_MAX_ARRAY_DEPTH)
        return ggtk_parser_fail(p, GGTK_ERR_INVALID, type_offset,
                                "arrays nested deeper than %d levels", GGTK_MAX_ARRAY_DEPTH);
    uint64_t count_offset = p->cursor.pos;
    status = ggtk_read_u64(p, "array count", &arr->count);
    if (status != GGTK_OK)
        return status;
    arr->elem_type = (ggtk_value_type)elem_type;
    arr->data = NULL;
    if (ggtk_value_type_size(arr->elem_type))
        return parse_fixed_array(p, arr, count_offset);
    return parse_variable_array(p, arr, depth, count_offset);
}

ggtk_status ggtk_parse_value(ggtk_parser *p, ggtk_value_type type, ggtk_value *out, int depth)
{
    out->type = type;
    if (type == GGTK_VALUE_STRING)
        return ggtk_parse_string(p, "string value", &out->v.str);
    if (type == GGTK_VALUE_ARRAY)
        return parse_array(p, &out->v.arr, depth);
    uint64_t offset = p->cursor.pos;
    size_t size = ggtk_value_type_size(type);
    const unsigned char *bytes;
    ggtk_status status = ggtk_parser_take(p, size, offset, ggtk_value_type_name(type), &bytes);
    if (status != GGTK_OK)
        return status;
    if (type == GGTK_VALUE_BOOL) {
        status = check_bools(p, bytes, 1, offset);
        if (status != GGTK_OK)
            return status;
        out->v.b = bytes[0] != 0;
        return GGTK_OK;
    }
    memcpy(&out->v, bytes, size);
    return GGTK_OK;
}
