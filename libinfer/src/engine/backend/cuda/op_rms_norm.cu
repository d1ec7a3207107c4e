/* op_rms_norm.cu - RMS norm of F32 rows as the CPU backend computes it (cpu/op_elementwise.c):
 * the squares, rounded to float, are summed in double, the mean is rounded to float before eps
 * is added, and every element is multiplied by 1 / sqrt of that. The double sum is what makes
 * the result equal the CPU's: its order differs (a block's threads, then a tree), but a double
 * sum of float squares is exact enough that the float mean is nearly always the same bits.
 *
 * One block per row; the source may have any strides (and broadcasts like the CPU's row_of()),
 * the result is contiguous and may be the source's memory. */
#include "op_common.cuh"
#include "block_reduce.cuh"
#include "float_ops.cuh"

static __global__ void rms_norm_kernel(cuda_view dst, cuda_view a, float eps)
{
    __shared__ double partial[CUDA_ROW_THREADS_MAX];
    const int64_t ne0 = dst.ne[0];
    float *d = (float *)cuda_row(&dst, dst.ne, blockIdx.x);
    const char *x = cuda_row(&a, dst.ne, blockIdx.x);
    double sum = 0.0;
    for (int64_t i = threadIdx.x; i < ne0; i += blockDim.x) {
        const float v = *(const float *)(x + i * a.nb[0]);
        sum += (double)cuda_mul(v, v);
    }
    sum = cuda_block_sum(sum, partial);
    const float mean = (float)(sum / (double)ne0);
    const float scale = cuda_div(1.0f, cuda_sqrt(cuda_add(mean, eps)));
    for (int64_t i = threadIdx.x; i < ne0; i += blockDim.x)
        d[i] = cuda_mul(*(const float *)(x + i * a.nb[0]), scale);
}

bool cuda_rms_norm_supports(const inf_tensor *node)
{
    const inf_tensor *a = node->src[0];
    return node->type == GGTK_TENSOR_F32 && a->type == GGTK_TENSOR_F32 &&
           inf_tensor_is_contiguous(node) && cuda_aligned(node) && cuda_aligned(a) &&
           cuda_grid_fits(cuda_rows(node));
}

ggtk_status cuda_rms_norm_compute(cuda_ctx *ctx, inf_tensor *node, ggtk_error *err)
{
    if (cuda_elements(node) == 0)
        return GGTK_OK;
    const unsigned threads = cuda_row_threads(node->ne[0], 512);
    CUDA_LAUNCH(rms_norm_kernel, (unsigned)cuda_rows(node), threads, 0, ctx->stream,
                cuda_view_of(node), cuda_view_of(node->src[0]), inf_op_param_f32(node, 0));
    CUDA_TRY_LAUNCH(err);
    return GGTK_OK;
}
