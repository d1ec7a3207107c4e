/* value_parse.c - metadata values from command-line text: type names, range-checked scalars,
 * UTF-8 checked strings, arrays written as JSON lists, and value equality for the diff. */
#include "edit_tool.h"

#include <errno.h>
#include <float.h>
#include <jansson.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* One row per value type the command line can name. */
static const struct {
    const char *name; /* short name; ggtk_value_type_name() gives the long one */
    ggtk_value_type type;
    bool is_signed;
    int64_t min;
    uint64_t max;
} value_types[] = {
    {"u8", GGTK_VALUE_UINT8, false, 0, UINT8_MAX},
    {"i8", GGTK_VALUE_INT8, true, INT8_MIN, INT8_MAX},
    {"u16", GGTK_VALUE_UINT16, false, 0, UINT16_MAX},
    {"i16", GGTK_VALUE_INT16, true, INT16_MIN, INT16_MAX},
    {"u32", GGTK_VALUE_UINT32, false, 0, UINT32_MAX},
    {"i32", GGTK_VALUE_INT32, true, INT32_MIN, INT32_MAX},
    {"u64", GGTK_VALUE_UINT64, false, 0, UINT64_MAX},
    {"i64", GGTK_VALUE_INT64, true, INT64_MIN, INT64_MAX},
    {"f32", GGTK_VALUE_FLOAT32, true, 0, 0},
    {"f64", GGTK_VALUE_FLOAT64, true, 0, 0},
    {"bool", GGTK_VALUE_BOOL, false, 0, 1},
    {"str", GGTK_VALUE_STRING, false, 0, 0},
};
#define N_VALUE_TYPES (sizeof value_types / sizeof value_types[0])

static int type_row(ggtk_value_type type)
{
    for (size_t i = 0; i < N_VALUE_TYPES; i++)
        if (value_types[i].type == type)
            return (int)i;
    return -1;
}

static bool scalar_type_parse(const char *name, size_t len, ggtk_value_type *type)
{
    for (size_t i = 0; i < N_VALUE_TYPES; i++) {
        const char *long_name = ggtk_value_type_name(value_types[i].type);
        if ((strlen(value_types[i].name) == len && strncmp(name, value_types[i].name, len) == 0) ||
            (strlen(long_name) == len && strncmp(name, long_name, len) == 0)) {
            *type = value_types[i].type;
            return true;
        }
    }
    return false;
}

bool edit_type_parse(const char *name, size_t len, ggtk_value_type *type, bool *is_array)
{
    *is_array = len > 5 && strncmp(name, "arr[", 4) == 0 && name[len - 1] == ']';
    if (*is_array)
        return scalar_type_parse(name + 4, len - 5, type);
    return scalar_type_parse(name, len, type);
}

const char *edit_type_label(ggtk_value_type type, ggtk_value_type elem_type)
{
    static char label[32];
    int row = type_row(type == GGTK_VALUE_ARRAY ? elem_type : type);
    const char *name = row >= 0 ? value_types[row].name : ggtk_value_type_name(elem_type);
    if (type == GGTK_VALUE_ARRAY)
        snprintf(label, sizeof label, "arr[%s]", name);
    else
        snprintf(label, sizeof label, "%s", name);
    return label;
}

/* What a value of type row `row` looks like, for messages. */
static void expected(int row, char *why, size_t why_size, const char *text)
{
    const char *name = ggtk_value_type_name(value_types[row].type);
    switch (value_types[row].type) {
    case GGTK_VALUE_FLOAT32:
    case GGTK_VALUE_FLOAT64:
        snprintf(why, why_size, "'%s' is not a %s (a number such as 0.5, 1e-6, nan or inf%s)",
                 text, name, value_types[row].type == GGTK_VALUE_FLOAT32 ? ", within ±3.4e38" : "");
        return;
    case GGTK_VALUE_BOOL:
        snprintf(why, why_size, "'%s' is not a bool (true, false, 1 or 0)", text);
        return;
    default:
        if (value_types[row].is_signed)
            snprintf(why, why_size, "'%s' is not an %s (a whole number from %lld to %llu)", text,
                     name, (long long)value_types[row].min,
                     (unsigned long long)value_types[row].max);
        else
            snprintf(why, why_size, "'%s' is not a %s (a whole number from 0 to %llu)", text, name,
                     (unsigned long long)value_types[row].max);
    }
}

/* Decimal digits after an optional '-' (only when `is_signed`), nothing else. */
static bool integer_syntax(const char *text, bool is_signed)
{
    const char *p = text + (is_signed && text[0] == '-');
    if (!*p)
        return false;
    for (; *p; p++)
        if (*p < '0' || *p > '9')
            return false;
    return true;
}

static bool parse_integer(const char *text, int row, ggtk_value *out)
{
    if (!integer_syntax(text, value_types[row].is_signed))
        return false;
    errno = 0;
    if (value_types[row].is_signed) {
        long long v = strtoll(text, NULL, 10);
        if (errno || v < value_types[row].min || v > (long long)value_types[row].max)
            return false;
        switch (value_types[row].type) {
        case GGTK_VALUE_INT8: out->v.i8 = (int8_t)v; break;
        case GGTK_VALUE_INT16: out->v.i16 = (int16_t)v; break;
        case GGTK_VALUE_INT32: out->v.i32 = (int32_t)v; break;
        default: out->v.i64 = v; break;
        }
        return true;
    }
    unsigned long long v = strtoull(text, NULL, 10);
    if (errno || v > value_types[row].max)
        return false;
    switch (value_types[row].type) {
    case GGTK_VALUE_UINT8: out->v.u8 = (uint8_t)v; break;
    case GGTK_VALUE_UINT16: out->v.u16 = (uint16_t)v; break;
    case GGTK_VALUE_UINT32: out->v.u32 = (uint32_t)v; break;
    default: out->v.u64 = v; break;
    }
    return true;
}

static bool parse_float(const char *text, ggtk_value *out)
{
    if (!*text || *text == ' ' || (*text >= '\t' && *text <= '\r'))
        return false;
    char *end;
    errno = 0;
    double v = strtod(text, &end);
    /* ERANGE for an underflow to (nearly) zero is fine; an overflow to infinity is not. */
    if (*end || (errno == ERANGE && isinf(v)))
        return false;
    if (out->type == GGTK_VALUE_FLOAT64) {
        out->v.f64 = v;
        return true;
    }
    if (isfinite(v) && fabs(v) > FLT_MAX)
        return false;
    out->v.f32 = (float)v;
    return true;
}

static bool parse_bool(const char *text, ggtk_value *out)
{
    bool is_true = strcmp(text, "true") == 0 || strcmp(text, "1") == 0;
    out->v.b = is_true;
    return is_true || strcmp(text, "false") == 0 || strcmp(text, "0") == 0;
}

static bool utf8_valid(const char *data, size_t len, size_t *bad_at)
{
    for (size_t i = 0; i < len;) {
        size_t n = ggtk_utf8_sequence((const unsigned char *)data + i, len - i);
        if (n == 0) {
            *bad_at = i;
            return false;
        }
        i += n;
    }
    return true;
}

static bool parse_scalar(const char *text, ggtk_value_type type, ggtk_value *out, char *why,
                         size_t why_size)
{
    int row = type_row(type);
    *out = (ggtk_value){.type = type};
    bool ok;
    size_t bad_at;
    switch (type) {
    case GGTK_VALUE_FLOAT32:
    case GGTK_VALUE_FLOAT64: ok = parse_float(text, out); break;
    case GGTK_VALUE_BOOL: ok = parse_bool(text, out); break;
    case GGTK_VALUE_STRING:
        if (!utf8_valid(text, strlen(text), &bad_at)) {
            snprintf(why, why_size, "the string is not valid UTF-8 (byte %zu)", bad_at);
            return false;
        }
        out->v.str = (ggtk_string){strlen(text), text};
        return true;
    default: ok = parse_integer(text, row, out); break;
    }
    if (!ok)
        expected(row, why, why_size, text);
    return ok;
}

bool edit_value_string_list(const ggtk_string *items, size_t count, edit_value *out)
{
    size_t bytes = 0;
    for (size_t i = 0; i < count; i++)
        bytes += (size_t)items[i].len + 1;
    /* One block: the ggtk_string array, then the bytes of each string with its NUL. */
    ggtk_string *strings = malloc(count * sizeof *strings + bytes + 1);
    if (!strings)
        return false;
    char *next = (char *)(strings + count);
    for (size_t i = 0; i < count; i++) {
        memcpy(next, items[i].data, (size_t)items[i].len);
        next[items[i].len] = '\0';
        strings[i] = (ggtk_string){items[i].len, next};
        next += items[i].len + 1;
    }
    out->storage = strings;
    out->value = (ggtk_value){.type = GGTK_VALUE_ARRAY, .v.arr = {GGTK_VALUE_STRING, count, strings}};
    return true;
}

/* A JSON list of strings (jansson has checked that they are UTF-8). */
static bool parse_string_list(const char *text, edit_value *out, char *why, size_t why_size)
{
    json_error_t error;
    json_t *list = json_loads(text, JSON_ALLOW_NUL, &error);
    size_t count = json_is_array(list) ? json_array_size(list) : 0;
    bool ok = json_is_array(list);
    for (size_t i = 0; ok && i < count; i++)
        ok = json_is_string(json_array_get(list, i));
    if (!ok) {
        snprintf(why, why_size, "expected a JSON list of strings such as [\"a\", \"b\"]%s%s",
                 list ? "" : ": ", list ? "" : error.text);
        json_decref(list);
        return false;
    }
    ggtk_string *items = malloc((count ? count : 1) * sizeof *items);
    for (size_t i = 0; items && i < count; i++) {
        json_t *item = json_array_get(list, i);
        items[i] = (ggtk_string){json_string_length(item), json_string_value(item)};
    }
    ok = items && edit_value_string_list(items, count, out);
    if (!ok)
        snprintf(why, why_size, "out of memory");
    free(items);
    json_decref(list);
    return ok;
}

/* The text between '[' and ']' cut at commas, each piece parsed as a scalar of `elem_type`. */
static bool parse_scalar_list(const char *text, ggtk_value_type elem_type, edit_value *out,
                              char *why, size_t why_size)
{
    size_t len = strlen(text);
    while (len > 0 && strchr(" \t\n\r", text[len - 1]))
        len--;
    const char *start = text + strspn(text, " \t\n\r");
    if (*start != '[' || len == 0 || text[len - 1] != ']' || start >= text + len - 1) {
        snprintf(why, why_size, "expected a JSON list such as [1, 2, 3]");
        return false;
    }
    char *body = strndup(start + 1, (size_t)(text + len - 1 - (start + 1)));
    size_t size = ggtk_value_type_size(elem_type), count = 0;
    unsigned char *elements = malloc(strlen(text) / 2 * size + size);
    bool ok = body && elements, empty = body && body[strspn(body, " \t\n\r")] == '\0';
    if (!ok)
        snprintf(why, why_size, "out of memory");
    for (char *piece = body, *comma; ok && !empty && piece; piece = comma ? comma + 1 : NULL) {
        if ((comma = strchr(piece, ',')))
            *comma = '\0';
        piece += strspn(piece, " \t\n\r");
        size_t n = strlen(piece);
        while (n > 0 && strchr(" \t\n\r", piece[n - 1]))
            piece[--n] = '\0';
        ggtk_value element;
        char element_why[200];
        if (!(ok = parse_scalar(piece, elem_type, &element, element_why, sizeof element_why)))
            snprintf(why, why_size, "element %zu: %s", count, element_why);
        else /* every scalar member starts at the union's first byte (little-endian GGUF) */
            memcpy(elements + count++ * size, &element.v, size);
    }
    free(body);
    if (!ok) {
        free(elements);
        return false;
    }
    out->storage = elements;
    out->value = (ggtk_value){.type = GGTK_VALUE_ARRAY, .v.arr = {elem_type, count, elements}};
    return true;
}

bool edit_value_parse(const char *text, ggtk_value_type type, ggtk_value_type elem_type,
                      edit_value *out, char *why, size_t why_size)
{
    *out = (edit_value){0};
    if (type != GGTK_VALUE_ARRAY)
        return parse_scalar(text, type, &out->value, why, why_size);
    if (elem_type == GGTK_VALUE_STRING)
        return parse_string_list(text, out, why, why_size);
    if (type_row(elem_type) < 0) {
        snprintf(why, why_size, "arrays of %s cannot be written on the command line",
                 ggtk_value_type_name(elem_type));
        return false;
    }
    return parse_scalar_list(text, elem_type, out, why, why_size);
}

bool edit_value_string(const char *data, size_t len, edit_value *out, char *why, size_t why_size)
{
    size_t bad_at;
    *out = (edit_value){0};
    if (!utf8_valid(data, len, &bad_at)) {
        snprintf(why, why_size, "not valid UTF-8 (byte %zu)", bad_at);
        return false;
    }
    char *copy = malloc(len + 1);
    if (!copy) {
        snprintf(why, why_size, "out of memory");
        return false;
    }
    memcpy(copy, data, len);
    copy[len] = '\0';
    out->storage = copy;
    out->value = (ggtk_value){.type = GGTK_VALUE_STRING, .v.str = {len, copy}};
    return true;
}

void edit_value_free(edit_value *value)
{
    free(value->storage);
    *value = (edit_value){0};
}

static bool strings_equal(const ggtk_string *a, const ggtk_string *b)
{
    return a->len == b->len && (a->len == 0 || memcmp(a->data, b->data, (size_t)a->len) == 0);
}

static bool arrays_equal(const ggtk_array *a, const ggtk_array *b)
{
    if (a->elem_type != b->elem_type || a->count != b->count)
        return false;
    for (uint64_t i = 0; i < a->count; i++) {
        if (a->elem_type == GGTK_VALUE_STRING &&
            !strings_equal((const ggtk_string *)a->data + i, (const ggtk_string *)b->data + i))
            return false;
        if (a->elem_type == GGTK_VALUE_ARRAY &&
            !arrays_equal(&((const ggtk_value *)a->data)[i].v.arr,
                          &((const ggtk_value *)b->data)[i].v.arr))
            return false;
    }
    size_t size = ggtk_value_type_size(a->elem_type);
    return size == 0 || a->count == 0 || memcmp(a->data, b->data, (size_t)a->count * size) == 0;
}

bool edit_values_equal(const ggtk_value *a, const ggtk_value *b)
{
    if (a->type != b->type)
        return false;
    if (a->type == GGTK_VALUE_STRING)
        return strings_equal(&a->v.str, &b->v.str);
    if (a->type == GGTK_VALUE_ARRAY)
        return arrays_equal(&a->v.arr, &b->v.arr);
    return memcmp(&a->v, &b->v, ggtk_value_type_size(a->type)) == 0;
}
