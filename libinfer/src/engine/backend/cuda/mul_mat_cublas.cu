/* mul_mat_cublas.cu - matrix products with many activation columns (prompt batches) through
 * cublasGemmEx with F32 accumulation. cuBLAS is column-major: the weights' rows (K contiguous
 * elements, lda = row stride) are the columns of A, used transposed; the activations, gathered
 * into contiguous rows of K, are the columns of B; dst row n is column n of C (ldc = dst row
 * stride). So C = A^T B is dst[m, n] = dot(weight row m, activation row n).
 *
 * Types meet as cuBLAS allows (A and B of one type): F32 weights with F32 activations (exact
 * float products), F16 and BF16 weights with activations rounded to their type, a quantized
 * weight dequantized to F16 a slab of rows at a time (CUDA_SCRATCH_WEIGHTS, at most
 * SLAB_BYTES) with F16 activations. */
#include "mul_mat.cuh"

#define SLAB_BYTES ((size_t)64 << 20)

static cudaDataType_t cuda_type(ggtk_tensor_type type)
{
    return type == GGTK_TENSOR_F32 ? CUDA_R_32F : type == GGTK_TENSOR_BF16 ? CUDA_R_16BF : CUDA_R_16F;
}

/* dst rows [m0, m0 + rows) of dst batch (i2, i3) = A (rows x K, lda elements apart) x the
 * batch's activations. */
static ggtk_status gemm(cuda_ctx *ctx, inf_tensor *node, ggtk_tensor_type type, const void *a, size_t lda,
                        int64_t rows, int64_t m0, const char *act, int64_t i2, int64_t i3, ggtk_error *err)
{
    const inf_tensor *x = node->src[1];
    const int64_t K = x->ne[0], N = x->ne[1];
    const size_t elem = type == GGTK_TENSOR_F32 ? 4 : 2;
    const char *b = act + (size_t)((i3 * x->ne[2] + i2) * N * K) * elem;
    char *c = (char *)node->data + m0 * sizeof(float) + i2 * node->nb[2] + i3 * node->nb[3];
    const float one = 1.0f, zero = 0.0f;
    CUBLAS_TRY(cublasGemmEx(ctx->cublas, CUBLAS_OP_T, CUBLAS_OP_N, (int)rows, (int)N, (int)K, &one, a,
                            cuda_type(type), (int)lda, b, cuda_type(type), (int)K, &zero, c, CUDA_R_32F,
                            (int)(node->nb[1] / sizeof(float)), CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT),
               err);
    return GGTK_OK;
}

/* Float weights straight from their tensor, one product per dst batch. */
static ggtk_status float_weights(cuda_ctx *ctx, inf_tensor *node, const char *act, ggtk_error *err)
{
    const inf_tensor *w = node->src[0], *x = node->src[1];
    const size_t elem = w->type == GGTK_TENSOR_F32 ? 4 : 2;
    const int64_t r2 = x->ne[2] / w->ne[2], r3 = x->ne[3] / w->ne[3];
    for (int64_t i3 = 0; i3 < x->ne[3]; i3++) {
        for (int64_t i2 = 0; i2 < x->ne[2]; i2++) {
            const char *a = (const char *)w->data + i2 / r2 * w->nb[2] + i3 / r3 * w->nb[3];
            ggtk_status st = gemm(ctx, node, w->type, a, w->nb[1] / elem, w->ne[1], 0, act, i2, i3, err);
            if (st != GGTK_OK)
                return st;
        }
    }
    return GGTK_OK;
}

/* Quantized weights: each weight matrix is dequantized a slab of rows at a time and the slab
 * multiplied with every dst batch that uses the matrix (the stream orders slab reuse). */
static ggtk_status quantized_weights(cuda_ctx *ctx, inf_tensor *node, const char *act, ggtk_error *err)
{
    const inf_tensor *w = node->src[0], *x = node->src[1];
    const int64_t K = w->ne[0], M = w->ne[1];
    const int64_t r2 = x->ne[2] / w->ne[2], r3 = x->ne[3] / w->ne[3];
    int64_t slab = (int64_t)(SLAB_BYTES / ((size_t)K * 2));
    slab = slab < 1 ? 1 : slab > M ? M : slab;
    void *f16 = cuda_scratch(ctx, CUDA_SCRATCH_WEIGHTS, (size_t)slab * K * 2, err);
    if (!f16)
        return err ? err->status : GGTK_ERR_NOMEM;
    for (int64_t j3 = 0; j3 < w->ne[3]; j3++) {
        for (int64_t j2 = 0; j2 < w->ne[2]; j2++) {
            for (int64_t m0 = 0; m0 < M; m0 += slab) {
                cuda_rows rows = cuda_rows_of(w);
                rows.data += m0 * w->nb[1] + j2 * w->nb[2] + j3 * w->nb[3];
                rows.ne[1] = M - m0 < slab ? M - m0 : slab;
                rows.ne[2] = rows.ne[3] = 1;
                ggtk_status st = cuda_convert_rows(ctx, &rows, GGTK_TENSOR_F16, f16, err);
                for (int64_t i3 = j3 * r3; st == GGTK_OK && i3 < (j3 + 1) * r3; i3++)
                    for (int64_t i2 = j2 * r2; st == GGTK_OK && i2 < (j2 + 1) * r2; i2++)
                        st = gemm(ctx, node, GGTK_TENSOR_F16, f16, (size_t)K, rows.ne[1], m0, act, i2, i3, err);
                if (st != GGTK_OK)
                    return st;
            }
        }
    }
    return GGTK_OK;
}

ggtk_status cuda_mul_mat_cublas(cuda_ctx *ctx, inf_tensor *node, ggtk_error *err)
{
    const inf_tensor *w = node->src[0], *x = node->src[1];
    const bool float_type = w->type == GGTK_TENSOR_F32 || w->type == GGTK_TENSOR_F16 || w->type == GGTK_TENSOR_BF16;
    const ggtk_tensor_type act_type = float_type ? w->type : GGTK_TENSOR_F16;
    const size_t elem = act_type == GGTK_TENSOR_F32 ? 4 : 2;
    const size_t rows = (size_t)(x->ne[1] * x->ne[2] * x->ne[3]);
    void *act = cuda_scratch(ctx, CUDA_SCRATCH_ACTIVATIONS, rows * (size_t)x->ne[0] * elem, err);
    if (!act)
        return err ? err->status : GGTK_ERR_NOMEM;
    const cuda_rows xr = cuda_rows_of(x);
    ggtk_status st = cuda_convert_rows(ctx, &xr, act_type, act, err);
    if (st != GGTK_OK)
        return st;
    return float_type ? float_weights(ctx, node, (const char *)act, err)
                      : quantized_weights(ctx, node, (const char *)act, err);
}
