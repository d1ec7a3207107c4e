/* quantize_internal.h - shared by the file quantizer's plan, run and stats modules; not public. */
#ifndef INF_QUANTIZE_INTERNAL_H
#define INF_QUANTIZE_INTERNAL_H

#include <ggtk/inf_quantize_file.h>

/* Name of a tensor type for messages ("q4_0"), or "unknown" for a bad code. */
const char *quantize_type_name(ggtk_tensor_type type);

#endif
