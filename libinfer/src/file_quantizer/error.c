/* error.c - status names and error formatting for the file quantizer. */
#include "quantize_internal.h"

#include <stdarg.h>
#include <stdio.h>

const char *inf_quantize_strerror(inf_quantize_status status)
{
    switch (status) {
    case INF_QUANTIZE_OK: return "success";
    case INF_QUANTIZE_ERR_USAGE: return "invalid options";
    case INF_QUANTIZE_ERR_SAME_FILE: return "output is the input file";
    case INF_QUANTIZE_ERR_INPUT: return "unreadable input";
    case INF_QUANTIZE_ERR_REQUANTIZE: return "input already quantized";
    case INF_QUANTIZE_ERR_UNSUPPORTED: return "unsupported tensor type";
    case INF_QUANTIZE_ERR_NONFINITE: return "non-finite value";
    case INF_QUANTIZE_ERR_OUTPUT: return "output write failed";
    case INF_QUANTIZE_ERR_NOMEM: return "out of memory";
    }
    return "unknown error";
}

inf_quantize_status quantize_fail(inf_quantize_error *err, inf_quantize_status status,
                                  const char *fmt, ...)
{
    if (err) {
        err->status = status;
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(err->message, sizeof err->message, fmt, ap);
        va_end(ap);
    }
    return status;
}

const char *quantize_type_name(ggtk_tensor_type type)
{
    const ggtk_tensor_type_info *info = ggtk_tensor_type_info_get(type);
    return info ? info->name : "unknown";
}
