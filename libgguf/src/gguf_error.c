/* gguf_error.c - building the one-line error messages every libgguf failure carries. */
#include "gguf_internal.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

/* The last line of defence for terminals: callers escape names they quote from a file, but a
 * message is one line whatever reaches it, so any control byte still in it (a path from the
 * command line, a string a program passed) is replaced by '?' here. Escaped text has none, so
 * this never changes a message built the careful way. */
static void replace_control_bytes(char *message)
{
    for (unsigned char *p = (unsigned char *)message; *p; p++)
        if (*p < 0x20 || *p == 0x7f)
            *p = '?';
}

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
    replace_control_bytes(err->message);
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
    replace_control_bytes(err->message);
    return status;
}
