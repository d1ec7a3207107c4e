/* gguf_text.c - text from a file made safe to print: ggtk_escape() for names and strings, and
 * ggtk_value_format() for metadata values as one line. A file may hold any bytes; escaping keeps
 * control characters (C0, DEL, C1) and invalid UTF-8 from reaching a terminal or forging lines. */
#include "gguf_internal.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

size_t ggtk_utf8_sequence(const unsigned char *s, size_t n)
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

/* Bounded output built from pieces: a piece goes into buf only whole and only while everything
 * before it did, so a cut never splits an escape or a character; `needed` counts every byte. */
typedef struct text_sink {
    char *buf;
    size_t size;
    size_t used;
    size_t needed;
    bool full;
} text_sink;

static void put(text_sink *s, const char *piece, size_t n)
{
    s->needed += n;
    if (s->full || s->used + n >= s->size) {
        s->full = true;
        return;
    }
    memcpy(s->buf + s->used, piece, n);
    s->used += n;
}

static void put_text(text_sink *s, const char *text) { put(s, text, strlen(text)); }

static size_t finish(text_sink *s)
{
    if (s->size > 0)
        s->buf[s->used] = '\0';
    return s->needed;
}

/* One byte that is not part of a printable character: a C escape. */
static void put_escaped_byte(text_sink *s, unsigned char c, bool quoted)
{
    char text[8];
    switch (c) {
    case '\\': put_text(s, "\\\\"); return;
    case '\n': put_text(s, "\\n"); return;
    case '\r': put_text(s, "\\r"); return;
    case '\t': put_text(s, "\\t"); return;
    case '"':
        if (quoted) {
            put_text(s, "\\\"");
            return;
        }
        break;
    default: break;
    }
    if (c < 0x20 || c >= 0x7F) {
        snprintf(text, sizeof text, "\\x%02x", c);
        put_text(s, text);
    } else {
        put(s, (const char *)&c, 1);
    }
}

/* `len` bytes escaped; `quoted` also escapes '"' (for text shown between double quotes). */
static void put_escaped(text_sink *s, const char *data, size_t len, bool quoted)
{
    const unsigned char *bytes = (const unsigned char *)data;
    for (size_t i = 0; i < len;) {
        size_t seq = ggtk_utf8_sequence(bytes + i, len - i);
        /* U+0080..U+009F are C1 controls, which some terminals obey like ESC sequences. */
        bool c1_control = seq == 2 && bytes[i] == 0xC2 && bytes[i + 1] < 0xA0;
        if (seq > 1 && !c1_control) {
            put(s, data + i, seq);
            i += seq;
            continue;
        }
        for (size_t end = i + (seq ? seq : 1); i < end; i++)
            put_escaped_byte(s, bytes[i], quoted);
    }
}

size_t ggtk_escape(const char *text, size_t len, char *buf, size_t size)
{
    text_sink s = {buf, size, 0, 0, false};
    put_escaped(&s, text, len, false);
    return finish(&s);
}

const char *ggtk_escape_cut(char *buf, size_t size, const char *text)
{
    static const char ellipsis[] = "...";
    if (ggtk_escape(text, strlen(text), buf, size) >= size && size > sizeof ellipsis) {
        ggtk_escape(text, strlen(text), buf, size - (sizeof ellipsis - 1));
        strcat(buf, ellipsis);
    }
    return buf;
}

/* The fewest significant digits that read back as the same float (or double). */
static void put_float(text_sink *s, double value, bool single)
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
    snprintf(text, sizeof text, "%.*g", digits, value);
    put_text(s, text);
}

static void put_string(text_sink *s, const ggtk_string *str, uint64_t max_bytes)
{
    size_t shown = str->len <= max_bytes ? (size_t)str->len : (size_t)max_bytes;
    /* Cut before a UTF-8 continuation byte, not inside a character. */
    while (shown < str->len && shown > 0 && ((unsigned char)str->data[shown] & 0xC0) == 0x80)
        shown--;
    put_text(s, "\"");
    put_escaped(s, str->data, shown, true);
    put_text(s, "\"");
    if (shown < str->len) {
        char more[48];
        snprintf(more, sizeof more, "... (%" PRIu64 " bytes)", str->len);
        put_text(s, more);
    }
}

static void put_value(text_sink *s, const ggtk_value *value, uint64_t max_elements,
                      uint64_t max_bytes);

static void put_array(text_sink *s, const ggtk_array *arr, uint64_t max_elements,
                      uint64_t max_bytes)
{
    uint64_t shown = arr->count <= max_elements ? arr->count : max_elements;
    size_t size = ggtk_value_type_size(arr->elem_type);
    put_text(s, "[");
    for (uint64_t i = 0; i < shown; i++) {
        if (i > 0)
            put_text(s, ", ");
        if (arr->elem_type == GGTK_VALUE_STRING) {
            put_string(s, &((const ggtk_string *)arr->data)[i], max_bytes);
        } else if (arr->elem_type == GGTK_VALUE_ARRAY) {
            put_value(s, &((const ggtk_value *)arr->data)[i], max_elements, max_bytes);
        } else {
            ggtk_value element = {.type = arr->elem_type};
            memcpy(&element.v, (const unsigned char *)arr->data + i * size, size);
            put_value(s, &element, max_elements, max_bytes);
        }
    }
    if (shown < arr->count) {
        char more[48];
        snprintf(more, sizeof more, "%s... (%" PRIu64 " elements)", shown ? ", " : "",
                 arr->count);
        put_text(s, more);
    }
    put_text(s, "]");
}

static void put_value(text_sink *s, const ggtk_value *value, uint64_t max_elements,
                      uint64_t max_bytes)
{
    char text[32];
    switch (value->type) {
    case GGTK_VALUE_UINT8: snprintf(text, sizeof text, "%u", value->v.u8); break;
    case GGTK_VALUE_INT8: snprintf(text, sizeof text, "%d", value->v.i8); break;
    case GGTK_VALUE_UINT16: snprintf(text, sizeof text, "%u", value->v.u16); break;
    case GGTK_VALUE_INT16: snprintf(text, sizeof text, "%d", value->v.i16); break;
    case GGTK_VALUE_UINT32: snprintf(text, sizeof text, "%" PRIu32, value->v.u32); break;
    case GGTK_VALUE_INT32: snprintf(text, sizeof text, "%" PRId32, value->v.i32); break;
    case GGTK_VALUE_UINT64: snprintf(text, sizeof text, "%" PRIu64, value->v.u64); break;
    case GGTK_VALUE_INT64: snprintf(text, sizeof text, "%" PRId64, value->v.i64); break;
    case GGTK_VALUE_BOOL: snprintf(text, sizeof text, "%s", value->v.b ? "true" : "false"); break;
    case GGTK_VALUE_FLOAT32: put_float(s, value->v.f32, true); return;
    case GGTK_VALUE_FLOAT64: put_float(s, value->v.f64, false); return;
    case GGTK_VALUE_STRING: put_string(s, &value->v.str, max_bytes); return;
    case GGTK_VALUE_ARRAY: put_array(s, &value->v.arr, max_elements, max_bytes); return;
    default: snprintf(text, sizeof text, "?"); break;
    }
    put_text(s, text);
}

size_t ggtk_value_format(const ggtk_value *value, char *buf, size_t size, uint64_t max_elements,
                         uint64_t max_string_bytes)
{
    text_sink s = {buf, size, 0, 0, false};
    put_value(&s, value, max_elements, max_string_bytes);
    return finish(&s);
}
