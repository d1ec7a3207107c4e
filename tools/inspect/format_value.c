/* format_value.c - metadata values, value types and tensor shapes as short readable text.
 * Floats print in the fewest digits that read back to the same value; strings are quoted with
 * C-style escapes for control characters and invalid UTF-8, which could disturb a terminal. */
#include "inspect.h"

#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

enum {
    PREVIEW_ELEMENTS = 6, /* array elements shown before "... (N elements)" */
    PREVIEW_BYTES = 60,   /* string bytes shown before "... (N bytes)" */
};

static void print_float(FILE *out, double value, bool single)
{
    char text[40];
    int digits = 1;
    for (; digits < 17; digits++) {
        snprintf(text, sizeof text, "%.*g", digits, value);
        if (single ? strtof(text, NULL) == (float)value : strtod(text, NULL) == value)
            break;
    }
    /* %g switches to an exponent once the integer part has more digits than the precision;
     * widen the precision so that 100000 does not print as 1e+05. */
    double magnitude = fabs(value);
    if (magnitude >= 1.0 && magnitude < 1e16) {
        int integer_digits = (int)floor(log10(magnitude)) + 1;
        digits = integer_digits > digits ? integer_digits : digits;
    }
    fprintf(out, "%.*g", digits, value);
}

size_t inspect_utf8_sequence(const unsigned char *s, size_t n)
{
    if (s[0] < 0x80)
        return 1;
    size_t len = s[0] >= 0xF0 && s[0] <= 0xF4 ? 4 : s[0] >= 0xE0 ? 3 : s[0] >= 0xC2 ? 2 : 0;
    if (s[0] >= 0xF5 || len == 0 || len > n)
        return 0;
    for (size_t i = 1; i < len; i++)
        if ((s[i] & 0xC0) != 0x80)
            return 0;
    uint32_t cp = s[0] & (0x7F >> len);
    for (size_t i = 1; i < len; i++)
        cp = cp << 6 | (s[i] & 0x3F);
    bool overlong = (len == 3 && cp < 0x800) || (len == 4 && cp < 0x10000);
    return overlong || (cp >= 0xD800 && cp <= 0xDFFF) || cp > 0x10FFFF ? 0 : len;
}

/* Number of bytes to show of a string of `len` bytes, cut before a UTF-8 continuation byte. */
static size_t preview_length(const char *data, uint64_t len, bool full)
{
    if (full || len <= PREVIEW_BYTES)
        return (size_t)len;
    size_t cut = PREVIEW_BYTES;
    while (cut > 0 && ((unsigned char)data[cut] & 0xC0) == 0x80)
        cut--;
    return cut;
}

/* One byte of a string: printable ASCII as is, the rest as C escapes. */
static void print_byte(FILE *out, unsigned char c)
{
    switch (c) {
    case '"': fputs("\\\"", out); break;
    case '\\': fputs("\\\\", out); break;
    case '\n': fputs("\\n", out); break;
    case '\r': fputs("\\r", out); break;
    case '\t': fputs("\\t", out); break;
    default:
        if (c < 0x20 || c >= 0x7F)
            fprintf(out, "\\x%02x", c);
        else
            fputc(c, out);
    }
}

static void print_string(FILE *out, const ggtk_string *s, bool full)
{
    size_t shown = preview_length(s->data, s->len, full);
    const unsigned char *bytes = (const unsigned char *)s->data;
    fputc('"', out);
    for (size_t i = 0; i < shown;) {
        size_t seq = inspect_utf8_sequence(bytes + i, shown - i);
        /* U+0080..U+009F are C1 controls, which some terminals obey like escape sequences. */
        bool c1_control = seq == 2 && bytes[i] == 0xC2 && bytes[i + 1] < 0xA0;
        if (seq > 1 && !c1_control) {
            fwrite(bytes + i, 1, seq, out);
            i += seq;
            continue;
        }
        for (size_t end = i + (seq ? seq : 1); i < end; i++)
            print_byte(out, bytes[i]);
    }
    fputc('"', out);
    if (shown < s->len)
        fprintf(out, "... (%" PRIu64 " bytes)", s->len);
}

/* Element `i` of a fixed-size array as a scalar value. */
static ggtk_value array_element(const ggtk_array *arr, uint64_t i)
{
    ggtk_value element = {.type = arr->elem_type};
    size_t size = ggtk_value_type_size(arr->elem_type);
    memcpy(&element.v, (const unsigned char *)arr->data + i * size, size);
    return element;
}

static void print_array(FILE *out, const ggtk_array *arr, bool full)
{
    uint64_t shown = full || arr->count <= PREVIEW_ELEMENTS ? arr->count : PREVIEW_ELEMENTS;
    fputc('[', out);
    for (uint64_t i = 0; i < shown; i++) {
        if (i > 0)
            fputs(", ", out);
        if (arr->elem_type == GGTK_VALUE_STRING)
            print_string(out, &((const ggtk_string *)arr->data)[i], full);
        else if (arr->elem_type == GGTK_VALUE_ARRAY)
            inspect_print_value(out, &((const ggtk_value *)arr->data)[i], full);
        else {
            ggtk_value element = array_element(arr, i);
            inspect_print_value(out, &element, full);
        }
    }
    if (shown < arr->count)
        fprintf(out, "%s... (%" PRIu64 " elements)", shown ? ", " : "", arr->count);
    fputc(']', out);
}

void inspect_print_value(FILE *out, const ggtk_value *value, bool full)
{
    switch (value->type) {
    case GGTK_VALUE_UINT8: fprintf(out, "%u", value->v.u8); break;
    case GGTK_VALUE_INT8: fprintf(out, "%d", value->v.i8); break;
    case GGTK_VALUE_UINT16: fprintf(out, "%u", value->v.u16); break;
    case GGTK_VALUE_INT16: fprintf(out, "%d", value->v.i16); break;
    case GGTK_VALUE_UINT32: fprintf(out, "%" PRIu32, value->v.u32); break;
    case GGTK_VALUE_INT32: fprintf(out, "%" PRId32, value->v.i32); break;
    case GGTK_VALUE_UINT64: fprintf(out, "%" PRIu64, value->v.u64); break;
    case GGTK_VALUE_INT64: fprintf(out, "%" PRId64, value->v.i64); break;
    case GGTK_VALUE_FLOAT32: print_float(out, value->v.f32, true); break;
    case GGTK_VALUE_FLOAT64: print_float(out, value->v.f64, false); break;
    case GGTK_VALUE_BOOL: fputs(value->v.b ? "true" : "false", out); break;
    case GGTK_VALUE_STRING: print_string(out, &value->v.str, full); break;
    case GGTK_VALUE_ARRAY: print_array(out, &value->v.arr, full); break;
    default: fputs("?", out); break;
    }
}

const char *inspect_value_type_label(const ggtk_value *value, char *buf, size_t size)
{
    if (value->type == GGTK_VALUE_ARRAY)
        snprintf(buf, size, "array[%s,%" PRIu64 "]", ggtk_value_type_name(value->v.arr.elem_type),
                 value->v.arr.count);
    else
        snprintf(buf, size, "%s", ggtk_value_type_name(value->type));
    return buf;
}

const char *inspect_shape_label(const ggtk_tensor_info *tensor, char *buf, size_t size)
{
    size_t used = (size_t)snprintf(buf, size, "[");
    for (uint32_t d = 0; d < tensor->n_dims && used < size; d++)
        used += (size_t)snprintf(buf + used, size - used, "%s%" PRIu64, d ? ", " : "",
                                 tensor->ne[d]);
    if (used < size)
        snprintf(buf + used, size - used, "]");
    return buf;
}
