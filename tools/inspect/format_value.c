/* format_value.c - metadata values, value types and tensor shapes as short readable text.
 * Floats print in the fewest digits that read back to the same value; strings are quoted with
 * C-style escapes so that control bytes cannot disturb the terminal. */
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

static void print_string(FILE *out, const gguf_string *s, bool full)
{
    size_t shown = preview_length(s->data, s->len, full);
    fputc('"', out);
    for (size_t i = 0; i < shown; i++) {
        unsigned char c = (unsigned char)s->data[i];
        switch (c) {
        case '"': fputs("\\\"", out); break;
        case '\\': fputs("\\\\", out); break;
        case '\n': fputs("\\n", out); break;
        case '\r': fputs("\\r", out); break;
        case '\t': fputs("\\t", out); break;
        default:
            if (c < 0x20 || c == 0x7F)
                fprintf(out, "\\x%02x", c);
            else
                fputc(c, out);
        }
    }
    fputc('"', out);
    if (shown < s->len)
        fprintf(out, "... (%" PRIu64 " bytes)", s->len);
}

/* Element `i` of a fixed-size array as a scalar value. */
static gguf_value array_element(const gguf_array *arr, uint64_t i)
{
    gguf_value element = {.type = arr->elem_type};
    size_t size = gguf_value_type_size(arr->elem_type);
    memcpy(&element.v, (const unsigned char *)arr->data + i * size, size);
    return element;
}

static void print_array(FILE *out, const gguf_array *arr, bool full)
{
    uint64_t shown = full || arr->count <= PREVIEW_ELEMENTS ? arr->count : PREVIEW_ELEMENTS;
    fputc('[', out);
    for (uint64_t i = 0; i < shown; i++) {
        if (i > 0)
            fputs(", ", out);
        if (arr->elem_type == GGUF_VALUE_STRING)
            print_string(out, &((const gguf_string *)arr->data)[i], full);
        else if (arr->elem_type == GGUF_VALUE_ARRAY)
            inspect_print_value(out, &((const gguf_value *)arr->data)[i], full);
        else {
            gguf_value element = array_element(arr, i);
            inspect_print_value(out, &element, full);
        }
    }
    if (shown < arr->count)
        fprintf(out, "%s... (%" PRIu64 " elements)", shown ? ", " : "", arr->count);
    fputc(']', out);
}

void inspect_print_value(FILE *out, const gguf_value *value, bool full)
{
    switch (value->type) {
    case GGUF_VALUE_UINT8: fprintf(out, "%u", value->v.u8); break;
    case GGUF_VALUE_INT8: fprintf(out, "%d", value->v.i8); break;
    case GGUF_VALUE_UINT16: fprintf(out, "%u", value->v.u16); break;
    case GGUF_VALUE_INT16: fprintf(out, "%d", value->v.i16); break;
    case GGUF_VALUE_UINT32: fprintf(out, "%" PRIu32, value->v.u32); break;
    case GGUF_VALUE_INT32: fprintf(out, "%" PRId32, value->v.i32); break;
    case GGUF_VALUE_UINT64: fprintf(out, "%" PRIu64, value->v.u64); break;
    case GGUF_VALUE_INT64: fprintf(out, "%" PRId64, value->v.i64); break;
    case GGUF_VALUE_FLOAT32: print_float(out, value->v.f32, true); break;
    case GGUF_VALUE_FLOAT64: print_float(out, value->v.f64, false); break;
    case GGUF_VALUE_BOOL: fputs(value->v.b ? "true" : "false", out); break;
    case GGUF_VALUE_STRING: print_string(out, &value->v.str, full); break;
    case GGUF_VALUE_ARRAY: print_array(out, &value->v.arr, full); break;
    default: fputs("?", out); break;
    }
}

const char *inspect_value_type_label(const gguf_value *value, char *buf, size_t size)
{
    if (value->type == GGUF_VALUE_ARRAY)
        snprintf(buf, size, "array[%s,%" PRIu64 "]", gguf_value_type_name(value->v.arr.elem_type),
                 value->v.arr.count);
    else
        snprintf(buf, size, "%s", gguf_value_type_name(value->type));
    return buf;
}

const char *inspect_shape_label(const gguf_tensor_info *tensor, char *buf, size_t size)
{
    size_t used = (size_t)snprintf(buf, size, "[");
    for (uint32_t d = 0; d < tensor->n_dims && used < size; d++)
        used += (size_t)snprintf(buf + used, size - used, "%s%" PRIu64, d ? ", " : "",
                                 tensor->ne[d]);
    if (used < size)
        snprintf(buf + used, size - used, "]");
    return buf;
}
