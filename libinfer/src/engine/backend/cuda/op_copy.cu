/* op_copy.cu - CONT and CPY between F32, F16 and BF16 as the CPU backend computes them
 * (cpu/op_copy.c): element k of the source in row-major order becomes element k of the result,
 * whatever the two shapes and strides (a permuted source, a view into a KV cache), converted with
 * the CPU's round-to-nearest-even conversions. Where the CPU copies bytes (same type, and same
 * shape with contiguous rows, or F32) the kernel copies bits too, so even NaN payloads agree.
 *
 * A block takes a slice of one source row. When source rows lie within destination rows (the
 * same shape; a KV-cache write of [head_dim, n_head, n] into [n_embd, n]) a thread finds where
 * its row starts in the destination once; otherwise it maps every element's linear index. */
#include "op_common.cuh"
#include "float_access.cuh"

static __global__ void copy_kernel(cuda_view dst, cuda_view src, int dst_type, int src_type,
                                   bool raw, bool rows_nest, unsigned blocks_per_row)
{
    const int64_t row = blockIdx.x / blocks_per_row, ne0 = src.ne[0], first = row * ne0;
    const char *from = cuda_row(&src, src.ne, row);
    char *to_row = NULL;
    if (rows_nest)
        to_row = cuda_row(&dst, dst.ne, first / dst.ne[0]) + first % dst.ne[0] * dst.nb[0];
    const int64_t step = (int64_t)blocks_per_row * blockDim.x;
    for (int64_t i = (int64_t)(blockIdx.x % blocks_per_row) * blockDim.x + threadIdx.x; i < ne0;
         i += step) {
        char *to;
        if (rows_nest) {
            to = to_row + i * dst.nb[0];
        } else {
            const int64_t k = first + i, r = k / dst.ne[0];
            to = dst.data + (k % dst.ne[0]) * dst.nb[0] + (r % dst.ne[1]) * dst.nb[1] +
                 (r / dst.ne[1] % dst.ne[2]) * dst.nb[2] + (r / (dst.ne[1] * dst.ne[2])) * dst.nb[3];
        }
        const char *at = from + i * src.nb[0];
        if (raw && src_type == GGTK_TENSOR_F32)
            *(uint32_t *)to = *(const uint32_t *)at;
        else if (raw)
            *(uint16_t *)to = *(const uint16_t *)at;
        else
            cuda_store_float(dst_type, to, cuda_load_float(src_type, at));
    }
}

static bool is_float_type(ggtk_tensor_type type)
{
    return type == GGTK_TENSOR_F32 || type == GGTK_TENSOR_F16 || type == GGTK_TENSOR_BF16;
}

bool cuda_copy_supports(const inf_tensor *node)
{
    const inf_tensor *src = node->src[0];
    return is_float_type(src->type) && is_float_type(node->type) && cuda_aligned(src) &&
           cuda_aligned(node) && cuda_elements(src) == cuda_elements(node) &&
           cuda_grid_fits(cuda_rows(src));
}

ggtk_status cuda_copy_compute(cuda_ctx *ctx, inf_tensor *node, ggtk_error *err)
{
    const inf_tensor *src = node->src[0];
    if (cuda_elements(src) == 0)
        return GGTK_OK;
    const size_t size = cuda_element_size(src->type);
    const bool same_shape = inf_tensor_same_shape(src, node);
    /* The CPU copies bytes for one type when rows are contiguous and shapes agree; F32's
     * element-wise path is a byte copy too. Otherwise it converts through float. */
    const bool same_rows = same_shape && src->nb[0] == size && node->nb[0] == size;
    const bool raw = src->type == node->type && (same_rows || src->type == GGTK_TENSOR_F32);
    const int64_t rows = cuda_rows(src);
    const unsigned threads = cuda_row_threads(src->ne[0], 256);
    const unsigned per_row = cuda_blocks_per_row(src->ne[0], threads, rows);
    const bool rows_nest = node->ne[0] % src->ne[0] == 0;
    CUDA_LAUNCH(copy_kernel, (unsigned)rows * per_row, threads, 0, ctx->stream,
                cuda_view_of(node), cuda_view_of(src), (int)node->type, (int)src->type, raw,
                rows_nest, per_row);
    CUDA_TRY_LAUNCH(err);
    return GGTK_OK;
}
