/* op_mul_mat.cu - MUL_MAT: dst[m, n] = dot(row m of src0, row n of src1) for every dst batch,
 * src0 of any type dequantize.cuh decodes, src1 F32 with any strides, grouped-query broadcast of
 * src0 over dims 2 and 3 (as the CPU backend, op_mul_mat.c). The route:
 *  - the types of the CPU's integer path, any n: one warp per output row and group of
 *    CUDA_MMV_MAX_COLS columns (mmvq.cu), src1 quantized on the device as the CPU quantizes it
 *    (quantize_act.cu), so the integer sums are the CPU's and only the float summation order
 *    differs. With INF_CUDA_MUL_MAT=cublas, prompt batches (n > CUDA_MMV_MAX_COLS) take the
 *    cuBLAS route below instead (F16 weights and activations: faster on tensor cores, further
 *    from the CPU's numbers), for comparing the two on a GPU;
 *  - other types (float types, and IQ4_NL, TQ*, FP4 ... which the CPU multiplies in float):
 *    n <= CUDA_MMV_MAX_COLS one warp per output row with src1 read as it is, larger n cuBLAS
 *    (mul_mat_cublas.cu), a quantized weight dequantized to F16 first. */
#include "cuda_ops.cuh"
#include "mul_mat.cuh"

#include <limits.h>
#include <stdlib.h>
#include <string.h>

/* Whether INF_CUDA_MUL_MAT=cublas sends quantized prompt batches to cuBLAS. */
static bool quantized_batches_by_cublas(void)
{
    const char *route = getenv("INF_CUDA_MUL_MAT");
    return route && strcmp(route, "cublas") == 0;
}

static bool is_float_type(ggtk_tensor_type type)
{
    return type == GGTK_TENSOR_F32 || type == GGTK_TENSOR_F16 || type == GGTK_TENSOR_BF16;
}

static bool strides_multiple_of(const inf_tensor *t, size_t unit)
{
    return t->nb[0] % unit == 0 && t->nb[1] % unit == 0 && t->nb[2] % unit == 0 && t->nb[3] % unit == 0;
}

bool cuda_mul_mat_supports(const inf_tensor *node)
{
    const inf_tensor *w = node->src[0], *x = node->src[1];
    if (node->type != GGTK_TENSOR_F32 || x->type != GGTK_TENSOR_F32 || node->nb[0] != sizeof(float))
        return false;
    if (!cuda_type_decodable(w->type) || !inf_tensor_rows_contiguous(w))
        return false;
    /* float reads of src1 and dst, and cuBLAS leading dimensions in whole elements */
    if (!strides_multiple_of(x, sizeof(float)) || !strides_multiple_of(node, sizeof(float)))
        return false;
    if (is_float_type(w->type) && !strides_multiple_of(w, ggtk_tensor_type_info_get(w->type)->block_bytes))
        return false;
    /* cuBLAS takes int sizes; a grid's y dimension (batches, row chunks) stops at 65535 */
    const int64_t batches = node->ne[2] * node->ne[3];
    return w->ne[0] < INT_MAX && w->ne[1] < INT_MAX && x->ne[1] < INT_MAX && batches <= 65535 &&
           x->ne[1] / CUDA_MMV_MAX_COLS < 65535 && (int64_t)node->nb[1] / 4 < INT_MAX &&
           w->ne[0] / 256 < 65535;
}

ggtk_status cuda_mul_mat_compute(cuda_ctx *ctx, inf_tensor *node, ggtk_error *err)
{
    const inf_tensor *w = node->src[0], *x = node->src[1];
    const bool integer_path = cuda_act_of(w->type) != CUDA_ACT_NONE;
    if (x->ne[1] > CUDA_MMV_MAX_COLS && (!integer_path || quantized_batches_by_cublas()))
        return cuda_mul_mat_cublas(ctx, node, err);
    if (!integer_path)
        return cuda_mmv_float(ctx, node, err);
    const cuda_rows xr = cuda_rows_of(x);
    cuda_act act;
    ggtk_status st = cuda_quantize_act(ctx, &xr, cuda_act_of(w->type), &act, err);
    return st != GGTK_OK ? st : cuda_mmvq(ctx, node, &act, err);
}
