/* report.c - the metadata diff gguf-edit prints: one line per key whose value or type changed,
 * keys and values escaped by libgguf (a key or string cannot forge a line), long strings and
 * arrays shortened as gguf-inspect shortens them. */
#include "edit_tool.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void print_escaped(const char *text)
{
    size_t len = strlen(text), size = ggtk_escape(text, len, NULL, 0) + 1;
    char *escaped = malloc(size);
    if (escaped)
        ggtk_escape(text, len, escaped, size);
    fputs(escaped ? escaped : "?", stdout);
    free(escaped);
}

static void print_value(const ggtk_value *value)
{
    char stack[512];
    size_t needed = ggtk_value_format(value, stack, sizeof stack, GGTK_FORMAT_PREVIEW_ELEMENTS,
                                      GGTK_FORMAT_PREVIEW_BYTES);
    char *text = needed < sizeof stack ? stack : malloc(needed + 1);
    if (text && text != stack)
        ggtk_value_format(value, text, needed + 1, GGTK_FORMAT_PREVIEW_ELEMENTS,
                          GGTK_FORMAT_PREVIEW_BYTES);
    fputs(text ? text : stack, stdout);
    if (text != stack)
        free(text);
}

static const char *label(const ggtk_value *value)
{
    return edit_type_label(value->type, value->type == GGTK_VALUE_ARRAY ? value->v.arr.elem_type
                                                                        : value->type);
}

/* One line for `change`; false when the key ends as it began. */
static bool print_change(const key_change *change, bool print)
{
    const ggtk_value *new_value = change->removed ? NULL : &change->value.value;
    if (!change->old && !new_value)
        return false; /* added, then removed again */
    if (change->old && new_value && edit_values_equal(change->old, new_value))
        return false;
    if (!print)
        return true;
    const ggtk_value *shown = new_value ? new_value : change->old;
    fputs(!change->old ? "+ " : !new_value ? "- " : "~ ", stdout);
    print_escaped(change->key);
    printf("  %s  ", label(change->old ? change->old : shown));
    print_value(change->old ? change->old : shown);
    if (change->old && new_value) {
        fputs(" -> ", stdout);
        if (change->old->type != new_value->type ||
            (new_value->type == GGTK_VALUE_ARRAY &&
             new_value->v.arr.elem_type != change->old->v.arr.elem_type))
            printf("%s  ", label(new_value));
        print_value(new_value);
    }
    putchar('\n');
    return true;
}

size_t edit_report_diff(const edit_session *session, bool print)
{
    size_t changed = 0;
    for (size_t i = 0; i < session->n_changes; i++)
        changed += print_change(&session->changes[i], print);
    return changed;
}
