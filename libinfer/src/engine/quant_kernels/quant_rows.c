/* quant_rows.c - multithreaded conversion of whole matrices. Rows are contiguous, so the matrix
 * is one run of blocks; each thread takes an equal contiguous share of the blocks, which keeps
 * every thread busy even for a matrix of one long row, and makes the bytes independent of the
 * thread count. */
#include <omp.h>

#include "quant_internal.h"

/* Blocks, elements per block and bytes per block of an nrows x ncols matrix of `type`, or false
 * when the shape is invalid for it. */
static bool matrix_blocks(ggtk_tensor_type type, int64_t nrows, int64_t ncols, int64_t *blocks,
                          int64_t *block_size, int64_t *block_bytes)
{
    const ggtk_tensor_type_info *info = ggtk_tensor_type_info_get(type);
    int64_t n;
    if (!info || nrows < 0 || ncols < 0 || ncols % info->block_size != 0 ||
        __builtin_mul_overflow(nrows, ncols, &n))
        return false;
    *block_size = info->block_size;
    *block_bytes = info->block_bytes;
    *blocks = n / info->block_size;
    return !__builtin_mul_overflow(*blocks, *block_bytes, &n);
}

static int thread_count(int nthreads)
{
    return nthreads > 0 ? nthreads : omp_get_max_threads();
}

/* Quantize (src floats, dst blocks) or dequantize (src blocks, dst floats) the matrix in one
 * parallel region, each thread converting an equal contiguous share of its blocks. */
static bool convert_matrix(ggtk_tensor_type type, bool quantize, const void *src, void *dst,
                           int64_t nrows, int64_t ncols, int nthreads)
{
    const inf_quant_kernels *k = inf_quant_kernels_get(type);
    int64_t blocks, bs, bb;
    if (!(quantize ? k->from_float != NULL : k->to_float != NULL) ||
        !matrix_blocks(type, nrows, ncols, &blocks, &bs, &bb))
        return false;
    int64_t float_bytes = bs * (int64_t)sizeof(float);
    int64_t src_step = quantize ? float_bytes : bb, dst_step = quantize ? bb : float_bytes;
#pragma omp parallel num_threads(thread_count(nthreads))
    {
        int t = omp_get_thread_num(), nt = omp_get_num_threads();
        int64_t first = blocks * t / nt, last = blocks * (t + 1) / nt;
        const uint8_t *in = (const uint8_t *)src + first * src_step;
        uint8_t *out = (uint8_t *)dst + first * dst_step;
        if (last > first && quantize)
            k->from_float((const float *)in, out, (last - first) * bs);
        else if (last > first)
            k->to_float(in, (float *)out, (last - first) * bs);
    }
    return true;
}

bool inf_quantize_rows(ggtk_tensor_type type, const float *src, void *dst, int64_t nrows,
                       int64_t ncols, int nthreads)
{
    return convert_matrix(type, true, src, dst, nrows, ncols, nthreads);
}

bool inf_dequantize_rows(ggtk_tensor_type type, const void *src, float *dst, int64_t nrows,
                         int64_t ncols, int nthreads)
{
    return convert_matrix(type, false, src, dst, nrows, ncols, nthreads);
}
