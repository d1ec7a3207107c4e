/* quantize_internal.h - shared by the file quantizer's plan, run and stats modules; not public. */
#ifndef INF_QUANTIZE_INTERNAL_H
#define INF_QUANTIZE_INTERNAL_H

#include <ggtk/inf_quantize_file.h>

/* Fill *err (when not NULL) with `status` and a printf-formatted message; returns `status`. */
inf_quantize_status quantize_fail(inf_quantize_error *err, inf_quantize_status status,
                                  const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* Name of a tensor type for messages ("q4_0"), or "unknown" for a bad code. */
const char *quantize_type_name(ggtk_tensor_type type);

#endif
