/* quant_rows.c - multithreaded conversion of whole matrices. Rows are contiguous, so the matrix
 * is one run of blocks; each thread takes an equal contiguous share of the blocks, which keeps
 * every thread busy even for a matrix of one long row, and makes the bytes independent of the
 * thread count. */
#include <omp.h>

#include "quant_internal.h"

/* Blocks, elements per block and bytes per block of an nrows x ncols matrix of `type`, or false
 * when the shape is invalid for it. */
static bool matrix_blocks(gguf_tensor_type type, int64_t nrows, int64_t ncols, int64_t *blocks,
                          int64_t *block_size, int64_t *block_bytes)
{
    const gguf_tensor_type_info *info = gguf_tensor_type_info_get(type);
    int64_t n;
    if (!info || nrows < 0 || ncols < 0 || ncols % info->block_size != 0 ||
        __builtin_mul_overflow(nrows, ncols, &n))
        return false;
    *block_size = info->block_size;
    *block_bytes = info->block_bytes;
    *blocks = n / info->block_size;
    return !__builtin_mul_overflow(*blocks, *block_bytes, &n);
}

/* Share [first, last) of `blocks` for thread `t` of `nt`. */
static void thread_share(int64_t blocks, int t, int nt, int64_t *first, int64_t *last)
{
    *first = blocks * t / nt;
    *last = blocks * (t + 1) / nt;
}

static int thread_count(int nthreads)
{
    return nthreads > 0 ? nthreads : omp_get_max_threads();
}

bool inf_quantize_rows(gguf_tensor_type type, const float *src, void *dst, int64_t nrows,
                       int64_t ncols, int nthreads)
{
    inf_from_float_fn fn = inf_quant_kernels_get(type)->from_float;
    int64_t blocks, bs, bb;
    if (!fn || !matrix_blocks(type, nrows, ncols, &blocks, &bs, &bb))
        return false;
#pragma omp parallel num_threads(thread_count(nthreads))
    {
        int64_t first, last;
        thread_share(blocks, omp_get_thread_num(), omp_get_num_threads(), &first, &last);
        if (last > first)
            fn(src + first * bs, (uint8_t *)dst + first * bb, (last - first) * bs);
    }
    return true;
}

bool inf_dequantize_rows(gguf_tensor_type type, const void *src, float *dst, int64_t nrows,
                         int64_t ncols, int nthreads)
{
    inf_to_float_fn fn = inf_quant_kernels_get(type)->to_float;
    int64_t blocks, bs, bb;
    if (!fn || !matrix_blocks(type, nrows, ncols, &blocks, &bs, &bb))
        return false;
#pragma omp parallel num_threads(thread_count(nthreads))
    {
        int64_t first, last;
        thread_share(blocks, omp_get_thread_num(), omp_get_num_threads(), &first, &last);
        if (last > first)
            fn((const uint8_t *)src + first * bb, dst + first * bs, (last - first) * bs);
    }
    return true;
}
