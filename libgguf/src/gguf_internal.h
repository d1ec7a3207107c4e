/* gguf_internal.h - helpers shared by the reader and the writer; not installed. */
#ifndef GGUF_INTERNAL_H
#define GGUF_INTERNAL_H

#include "gguf.h"

/* Fill *err (when not NULL) with `status`, `offset` and a printf-formatted one-line message, and
 * return `status` so callers can write `return gguf_fail(err, ...)`. The message is prefixed
 * with `file` ("FILE: ") and suffixed with " (at byte OFFSET)" when offset != UINT64_MAX. */
gguf_status gguf_fail(gguf_error *err, gguf_status status, const char *file, uint64_t offset,
                      const char *fmt, ...) __attribute__((format(printf, 5, 6)));

#endif
