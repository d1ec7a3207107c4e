/* gguf_error.c - building the one-line error messages every libgguf failure carries. */
#include "gguf_internal.h"

#include <stdarg.h>
#include <stdio.h>

ggtk_status ggtk_fail(ggtk_error *err, ggtk_status status, const char *file, uint64_t offset,
                      const char *fmt, ...)
{
    if (!err)
        return status;
    err->status = status;
    err->offset = offset;
    int used = snprintf(err->message, sizeof err->message, "%s: ", file ? file : "(gguf)");
    if (used < 0 || (size_t)used >= sizeof err->message)
        return status;
    va_list ap;
    va_start(ap, fmt);
    int more = vsnprintf(err->message + used, sizeof err->message - used, fmt, ap);
    va_end(ap);
    if (more >= 0 && (size_t)(used + more) < sizeof err->message && offset != UINT64_MAX)
        snprintf(err->message + used + more, sizeof err->message - used - more,
                 " (at byte %llu)", (unsigned long long)offset);
    return status;
}

ggtk_status ggtk_error_set(ggtk_error *err, ggtk_status status, uint64_t offset, const char *fmt,
                           ...)
{
    if (!err)
        return status;
    err->status = status;
    err->offset = offset;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err->message, sizeof err->message, fmt, ap);
    va_end(ap);
    return status;
}
