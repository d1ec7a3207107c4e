/* dequantize.cu - rows of any decodable type (dequantize.cuh) converted into contiguous F32, F16
 * or BF16 rows: a quantized weight dequantized for cuBLAS, activations gathered and converted for
 * it. One thread per element, so reads of a block are broadcasts and writes are coalesced. */
#include "mul_mat.cuh"

enum { CONVERT_THREADS = 256 };

cuda_rows cuda_rows_of(const inf_tensor *t)
{
    cuda_rows rows;
    rows.data = (const char *)t->data;
    rows.type = t->type;
    for (int d = 0; d < 4; d++) {
        rows.ne[d] = t->ne[d];
        rows.nb[d] = t->nb[d];
    }
    return rows;
}

/* Element k of a row: float types at any element stride, block types through their decoder. */
static __device__ float load_element(const cuda_rows *src, const char *row, int64_t k)
{
    switch (src->type) {
    case GGTK_TENSOR_F32:
        return *(const float *)(row + k * src->nb[0]);
    case GGTK_TENSOR_F16:
        return cuda_fp16_to_fp32(*(const uint16_t *)(row + k * src->nb[0]));
    case GGTK_TENSOR_BF16:
        return cuda_bf16_to_fp32(*(const uint16_t *)(row + k * src->nb[0]));
    default:
        return cuda_dq_element(src->type, row, k);
    }
}

/* Grid: x one row each (flat over i1, i2, i3), y the row's elements CONVERT_THREADS at a time. */
static __global__ void convert_rows_kernel(cuda_rows src, ggtk_tensor_type dst_type, void *dst)
{
    const int64_t r = blockIdx.x;
    const int64_t k = (int64_t)blockIdx.y * blockDim.x + threadIdx.x;
    if (k >= src.ne[0])
        return;
    const int64_t i1 = r % src.ne[1], i2 = r / src.ne[1] % src.ne[2], i3 = r / (src.ne[1] * src.ne[2]);
    const char *row = src.data + i1 * src.nb[1] + i2 * src.nb[2] + i3 * src.nb[3];
    const float v = load_element(&src, row, k);
    const int64_t at = r * src.ne[0] + k;
    if (dst_type == GGTK_TENSOR_F32)
        ((float *)dst)[at] = v;
    else if (dst_type == GGTK_TENSOR_F16)
        ((uint16_t *)dst)[at] = cuda_fp32_to_fp16(v);
    else
        ((uint16_t *)dst)[at] = cuda_fp32_to_bf16(v);
}

ggtk_status cuda_convert_rows(cuda_ctx *ctx, const cuda_rows *src, ggtk_tensor_type dst_type,
                              void *dst, ggtk_error *err)
{
    const int64_t rows = src->ne[1] * src->ne[2] * src->ne[3];
    if (rows == 0 || src->ne[0] == 0)
        return GGTK_OK;
    const dim3 grid((unsigned)rows, (unsigned)((src->ne[0] + CONVERT_THREADS - 1) / CONVERT_THREADS));
    CUDA_LAUNCH(convert_rows_kernel, grid, dim3(CONVERT_THREADS), 0, ctx->stream, *src, dst_type, dst);
    CUDA_TRY_LAUNCH(err);
    return GGTK_OK;
}
