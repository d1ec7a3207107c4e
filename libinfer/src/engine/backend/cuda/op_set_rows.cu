/* op_set_rows.cu - a KV-cache write as the CPU backend computes it (cpu/op_copy.c): row i of
 * src[1] (F32, any strides) goes to row ids[i] of the cache (the result, a view of src[0]; F32,
 * F16 or BF16 with contiguous rows) in every slice of dimensions 2 and 3, converted with the
 * CPU's round-to-nearest-even conversions.
 *
 * The indices live on the device, so the kernel checks them: a block whose index is outside
 * [0, rows) writes nothing and records the index in a device word. compute() reads that word
 * back after the kernel and fails the node with GGTK_ERR_INVALID, as the CPU fails it: the one
 * operation of this file that waits for the stream (a 4-byte copy after the kernel), the price of
 * never writing outside the cache and of reporting a bad index as the CPU does. */
#include "op_common.cuh"
#include "float_access.cuh"

/* What the kernel reports: how many rows had a bad index, and one such index. */
typedef struct set_rows_report {
    int bad_rows;
    int32_t bad_index;
} set_rows_report;

static __global__ void set_rows_kernel(cuda_view dst, cuda_view rows, const char *ids,
                                       int64_t id_stride, int dst_type, unsigned blocks_per_row,
                                       set_rows_report *report)
{
    const int64_t row = blockIdx.x / blocks_per_row;
    uint32_t c[3]; /* row c[0] of slice (c[1], c[2]) */
    cuda_row_coords(rows.ne, row, c);
    const int32_t id = *(const int32_t *)(ids + c[0] * id_stride);
    if (id < 0 || id >= dst.ne[1]) {
        if (threadIdx.x == 0 && blockIdx.x % blocks_per_row == 0) {
            atomicAdd(&report->bad_rows, 1);
            report->bad_index = id; /* any one of them will do for the message */
        }
        return;
    }
    const char *from = cuda_row(&rows, rows.ne, row);
    char *to = dst.data + id * dst.nb[1] + c[1] * dst.nb[2] + c[2] * dst.nb[3];
    const int64_t step = (int64_t)blocks_per_row * blockDim.x;
    for (int64_t k = (int64_t)(blockIdx.x % blocks_per_row) * blockDim.x + threadIdx.x;
         k < rows.ne[0]; k += step)
        cuda_store_float(dst_type, to + k * dst.nb[0], *(const float *)(from + k * rows.nb[0]));
}

bool cuda_set_rows_supports(const inf_tensor *node)
{
    const inf_tensor *rows = node->src[1], *ids = node->src[2];
    const bool float_cache = node->type == GGTK_TENSOR_F32 || node->type == GGTK_TENSOR_F16 ||
                             node->type == GGTK_TENSOR_BF16;
    return float_cache && node->nb[0] == cuda_element_size(node->type) && cuda_aligned(node) &&
           rows->type == GGTK_TENSOR_F32 && cuda_aligned(rows) && ids->type == GGTK_TENSOR_I32 &&
           cuda_aligned(ids) && cuda_grid_fits(cuda_rows(rows));
}

ggtk_status cuda_set_rows_compute(cuda_ctx *ctx, inf_tensor *node, ggtk_error *err)
{
    const inf_tensor *rows = node->src[1], *ids = node->src[2];
    const int64_t n_rows = cuda_rows(rows);
    if (cuda_elements(rows) == 0)
        return GGTK_OK;
    set_rows_report *report = (set_rows_report *)cuda_scratch(ctx, CUDA_SCRATCH_OUTPUT,
                                                              sizeof(set_rows_report), err);
    if (!report)
        return GGTK_ERR_NOMEM;
    CUDA_TRY(cudaMemsetAsync(report, 0, sizeof *report, ctx->stream), err);
    const unsigned threads = cuda_row_threads(rows->ne[0], 256);
    const unsigned per_row = cuda_blocks_per_row(rows->ne[0], threads, n_rows);
    CUDA_LAUNCH(set_rows_kernel, (unsigned)n_rows * per_row, threads, 0, ctx->stream,
                cuda_view_of(node), cuda_view_of(rows), (const char *)ids->data,
                (int64_t)ids->nb[0], (int)node->type, per_row, report);
    CUDA_TRY_LAUNCH(err);
    set_rows_report seen;
    CUDA_TRY(cudaMemcpyAsync(&seen, report, sizeof seen, cudaMemcpyDeviceToHost, ctx->stream),
             err);
    CUDA_TRY(cudaStreamSynchronize(ctx->stream), err);
    if (seen.bad_rows > 0)
        return ggtk_error_set(err, GGTK_ERR_INVALID, GGTK_NO_OFFSET,
                              "cuda: %s: row index %d outside [0, %lld) (%d rows not written)",
                              node->name, seen.bad_index, (long long)node->ne[1], seen.bad_rows);
    return GGTK_OK;
}
