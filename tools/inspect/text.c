/* text.c - what the text outputs share: file text (keys, names, strings) escaped by libgguf so
 * that it cannot move the cursor, recolour the terminal or forge a line, metadata values through
 * ggtk_value_format(), and the labels of value types and tensor shapes. */
#include "inspect.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

/* Output that fits here is formatted without allocating. */
enum { STACK_TEXT = 512 };

int inspect_escaped_width(const char *text)
{
    size_t width = ggtk_escape(text, strlen(text), NULL, 0);
    return width < 4096 ? (int)width : 4096;
}

char *inspect_escape_dup(const char *text)
{
    size_t len = strlen(text), size = ggtk_escape(text, len, NULL, 0) + 1;
    char *escaped = malloc(size);
    if (escaped)
        ggtk_escape(text, len, escaped, size);
    return escaped;
}

/* An snprintf-style renderer of `item`: ggtk_escape() or ggtk_value_format() behind one shape. */
typedef size_t (*render_fn)(const void *item, char *buf, size_t size, bool full);

/* Print what `render` makes of `item`, padded with spaces to `width` columns. Text too long for
 * the stack is rendered again on the heap; if that allocation fails, the cut text is printed
 * followed by "..." rather than nothing. */
static void print_rendered(FILE *out, render_fn render, const void *item, bool full, int width)
{
    char stack[STACK_TEXT];
    size_t needed = render(item, stack, sizeof stack, full);
    char *text = needed < sizeof stack ? stack : malloc(needed + 1);
    if (text && text != stack)
        render(item, text, needed + 1, full);
    fprintf(out, "%-*s%s", width, text ? text : stack, text ? "" : "...");
    if (text != stack)
        free(text);
}

static size_t render_escaped(const void *item, char *buf, size_t size, bool full)
{
    (void)full;
    return ggtk_escape(item, strlen(item), buf, size);
}

static size_t render_value(const void *item, char *buf, size_t size, bool full)
{
    return ggtk_value_format(item, buf, size,
                             full ? GGTK_FORMAT_ALL : GGTK_FORMAT_PREVIEW_ELEMENTS,
                             full ? GGTK_FORMAT_ALL : GGTK_FORMAT_PREVIEW_BYTES);
}

void inspect_print_escaped(FILE *out, const char *text, int width)
{
    print_rendered(out, render_escaped, text, false, width);
}

void inspect_print_value(FILE *out, const ggtk_value *value, bool full)
{
    print_rendered(out, render_value, value, full, 0);
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
