/* quant_imatrix.c - inf_quantize_rows_imatrix, the counterpart of ggml_quantize_chunk: rows
 * quantized one at a time with the importance-weighted kernel when the type has one. */
#include "quant_internal.h"

int64_t inf_quantize_rows_imatrix(ggtk_tensor_type type, const float *src, void *dst,
                                  int64_t nrows, int64_t n_per_row, const float *imatrix)
{
    const inf_quant_kernels *k = inf_quant_kernels_get(type);
    const ggtk_tensor_type_info *info = ggtk_tensor_type_info_get(type);
    int64_t n;
    if (!k->from_float || !info || nrows < 0 || n_per_row < 0 ||
        n_per_row % info->block_size != 0 || __builtin_mul_overflow(nrows, n_per_row, &n))
        return -1;
    if (!imatrix || !k->from_float_imatrix) {
        k->from_float(src, dst, n);
        return 0;
    }
    const int64_t row_bytes = n_per_row / info->block_size * (int64_t)info->block_bytes;
    int64_t fallbacks = 0;
    for (int64_t r = 0; r < nrows; r++)
        fallbacks += k->from_float_imatrix(src + r * n_per_row, (uint8_t *)dst + r * row_bytes,
                                           n_per_row, imatrix);
    return fallbacks;
}
