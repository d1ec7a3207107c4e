/* gguf_internal.h - helpers shared by the reader and the writer; not installed. */
#ifndef GGTK_INTERNAL_H
#define GGTK_INTERNAL_H

#include <ggtk/gguf.h>

/* Fill *err (when not NULL) with `status`, `offset` and a printf-formatted one-line message, and
 * return `status` so callers can write `return ggtk_fail(err, ...)`. The message is prefixed
 * with `file` ("FILE: ") and suffixed with " (at byte OFFSET)" when offset != UINT64_MAX. */
ggtk_status ggtk_fail(ggtk_error *err, ggtk_status status, const char *file, uint64_t offset,
                      const char *fmt, ...) __attribute__((format(printf, 5, 6)));

/* `text` (NUL-terminated) escaped by ggtk_escape() into buf; when it does not fit, cut and ended
 * with "...". Returns buf, for quoting file text in a message. */
const char *ggtk_escape_cut(char *buf, size_t size, const char *text);

#endif
