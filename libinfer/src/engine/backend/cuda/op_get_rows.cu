/* op_get_rows.cu - GET_ROWS: rows of src0 (any type dequantize.cuh decodes) picked by the I32
 * indices src1[i], dequantized into row i of the contiguous F32 dst - the embedding lookup. As on
 * the CPU (op_copy.c) an index outside [0, rows) fails the node: the kernel records it in a
 * device flag, and compute() reads the flag back (one small copy and a wait, once per lookup). */
#include "cuda_ops.cuh"
#include "mul_mat.cuh"

enum { THREADS = 256 };

/* Grid: x one output row each, y its elements THREADS at a time. bad[0] is set to 1 and bad[1]
 * to an index out of range, if any. */
static __global__ void get_rows_kernel(cuda_rows table, const char *ids, size_t ids_nb0, float *dst, int32_t *bad)
{
    const int64_t i = blockIdx.x;
    const int64_t k = (int64_t)blockIdx.y * blockDim.x + threadIdx.x;
    const int32_t id = *(const int32_t *)(ids + i * ids_nb0);
    if (id < 0 || id >= table.ne[1]) {
        if (k == 0) {
            bad[1] = id;
            bad[0] = 1;
        }
        return;
    }
    if (k < table.ne[0])
        dst[i * table.ne[0] + k] = cuda_dq_element(table.type, table.data + id * table.nb[1], k);
}

bool cuda_get_rows_supports(const inf_tensor *node)
{
    const inf_tensor *table = node->src[0], *ids = node->src[1];
    return cuda_type_decodable(table->type) && inf_tensor_rows_contiguous(table) &&
           ids->type == GGTK_TENSOR_I32 && ids->nb[0] % sizeof(int32_t) == 0 &&
           node->type == GGTK_TENSOR_F32 && inf_tensor_is_contiguous(node) &&
           (table->ne[0] + THREADS - 1) / THREADS <= 65535;
}

ggtk_status cuda_get_rows_compute(cuda_ctx *ctx, inf_tensor *node, ggtk_error *err)
{
    const inf_tensor *table = node->src[0], *ids = node->src[1];
    const int64_t n = ids->ne[0];
    if (n == 0)
        return GGTK_OK;
    int32_t *bad = (int32_t *)cuda_scratch(ctx, CUDA_SCRATCH_OUTPUT, 2 * sizeof(int32_t), err);
    if (!bad)
        return err ? err->status : GGTK_ERR_NOMEM;
    CUDA_TRY(cudaMemsetAsync(bad, 0, 2 * sizeof(int32_t), ctx->stream), err);
    const dim3 grid((unsigned)n, (unsigned)((table->ne[0] + THREADS - 1) / THREADS));
    CUDA_LAUNCH(get_rows_kernel, grid, dim3(THREADS), 0, ctx->stream, cuda_rows_of(table),
                (const char *)ids->data, ids->nb[0], (float *)node->data, bad);
    CUDA_TRY_LAUNCH(err);
    int32_t host[2];
    CUDA_TRY(cudaMemcpyAsync(host, bad, sizeof host, cudaMemcpyDeviceToHost, ctx->stream), err);
    CUDA_TRY(cudaStreamSynchronize(ctx->stream), err);
    if (host[0])
        return ggtk_error_set(err, GGTK_ERR_INVALID, GGTK_NO_OFFSET, "cuda: %s: row index %d outside [0, %lld)",
                              node->name, host[1], (long long)table->ne[1]);
    return GGTK_OK;
}
