/* eval_error.c - the one-line error messages of libinfer/src/eval. */
#include "eval_internal.h"

#include <stdarg.h>
#include <stdio.h>

void inf_eval_set_error(char *err, size_t err_size, const char *fmt, ...)
{
    if (!err || err_size == 0)
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, err_size, fmt, ap);
    va_end(ap);
}
