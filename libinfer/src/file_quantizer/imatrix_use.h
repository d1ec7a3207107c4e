/* imatrix_use.h - the importance matrix of a file quantization (imatrix_use.c); not public. */
#ifndef INF_QUANTIZE_IMATRIX_USE_H
#define INF_QUANTIZE_IMATRIX_USE_H

#include <ggtk/inf_quantize_file.h>

/* With options.imatrix set: check it against the planned tensors (GGTK_ERR_INVALID for an entry
 * whose size differs from its tensor's or an imatrix without metadata), add warnings for
 * weighted conversions without an entry and for partly covered entries, count the tensors that
 * use it, and record it in the output's metadata as llama-quantize does. GGTK_OK at once
 * without an imatrix. */
ggtk_status quantize_imatrix_plan(inf_quantize_plan *plan, ggtk_error *err);

/* The importance weights tensor `t` is quantized with (ne0 * ne2 floats, matrix e at e * ne0;
 * malloc'd, the caller frees), or *weights NULL when it has none. false when out of memory. */
bool quantize_imatrix_weights(const inf_quantize_plan *plan, const inf_quantize_plan_tensor *t,
                              float **weights);

#endif
