/* quantize_internal.h - shared by the file quantizer's plan, run and stats modules; not public. */
#ifndef INF_QUANTIZE_INTERNAL_H
#define INF_QUANTIZE_INTERNAL_H

#include <ggtk/inf_quantize_file.h>

/* Name of a tensor type for messages ("q4_0"), or "unknown" for a bad code. */
const char *quantize_type_name(ggtk_tensor_type type);

/* Append one printf-formatted line to plan->warnings. Errors: GGTK_ERR_NOMEM. */
ggtk_status quantize_plan_warn(inf_quantize_plan *plan, ggtk_error *err, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

#endif
