/* mul_mat.cuh - the pieces op_mul_mat.cu and op_get_rows.cu put together: row conversion and
 * dequantization (dequantize.cu), activation quantization (quantize_act.cu), the small-batch
 * products (mmvq.cu) and the cuBLAS products (mul_mat_cublas.cu). Every function enqueues its
 * kernels on ctx->stream and returns without waiting.
 *
 * The product is dst[m, n] = dot(row m of src0, row n of src1) per batch (i2, i3) of dst, with
 * src0's batch (i2 / r2, i3 / r3), r2 = ne12 / ne02, r3 = ne13 / ne03 (grouped-query broadcast),
 * as the CPU backend computes it (op_mul_mat.c). */
#ifndef INF_CUDA_MUL_MAT_CUH
#define INF_CUDA_MUL_MAT_CUH

#include "cuda_internal.cuh"
#include "dequantize.cuh"

/* Batches of n up to this many columns take the matrix-vector kernels (mmvq.cu); larger ones
 * cuBLAS (token generation vs prompt processing). */
#define CUDA_MMV_MAX_COLS 8

/* A strided 4-d array of rows on the device: ne[0] elements per row, rows indexed by
 * (i1, i2, i3) at data + i1 * nb[1] + i2 * nb[2] + i3 * nb[3]. For block types nb[0] is the
 * block size in bytes and rows are contiguous; float rows may have any nb[0]. */
typedef struct cuda_rows {
    const char *data;
    ggtk_tensor_type type;
    int64_t ne[4];
    size_t nb[4];
} cuda_rows;

/* The rows of a tensor (its data pointer is device memory). */
cuda_rows cuda_rows_of(const inf_tensor *t);

/* dequantize.cu: every row of `src` (any decodable type) into contiguous `dst` of dst_type
 * (F32, F16 or BF16), rows in (i1, i2, i3) order. */
ggtk_status cuda_convert_rows(cuda_ctx *ctx, const cuda_rows *src, ggtk_tensor_type dst_type,
                              void *dst, ggtk_error *err);

/* Activations quantized for an integer dot product (quantize_act.cu), on the device: row r of
 * the flattened [batch][n] rows has K codes at qs + r * K, the scale of its block b of 32 at
 * d[r * K / 32 + b] (Q8_K: its super-block's scale, repeated), and for Q8_1 the block's
 * fp16-rounded s = d * sum(codes) at s[r * K / 32 + b]. */
typedef struct cuda_act {
    cuda_act_kind kind;
    const int8_t *qs;
    const float *d;
    const float *s;
} cuda_act;

/* quantize_act.cu: every row of the F32 activations `src` (any strides) quantized as `kind`
 * says, byte for byte the CPU's quantizer (Q8_0, Q8_1 or Q8_K) so that the integer dot products
 * are the CPU backend's; the codes and scales go to the CUDA_SCRATCH_ACTIVATIONS slot. */
ggtk_status cuda_quantize_act(cuda_ctx *ctx, const cuda_rows *src, cuda_act_kind kind,
                              cuda_act *act, ggtk_error *err);

/* mmvq.cu: node = src0 x src1, one warp per output row and group of CUDA_MMV_MAX_COLS columns.
 * cuda_mmvq: quantized src0 against `act` (src1 quantized by cuda_quantize_act), any ne11;
 * cuda_mmv_float: any other decodable src0 (float types, IQ4_NL, TQ*, FP4 ...) against the
 * F32 src1 read in place, ne11 <= CUDA_MMV_MAX_COLS. */
ggtk_status cuda_mmvq(cuda_ctx *ctx, inf_tensor *node, const cuda_act *act, ggtk_error *err);
ggtk_status cuda_mmv_float(cuda_ctx *ctx, inf_tensor *node, ggtk_error *err);

/* mul_mat_cublas.cu: node = src0 x src1 with cublasGemmEx and F32 accumulation. F32 weights
 * meet F32 activations; F16 and BF16 weights meet activations converted to their type; a
 * quantized weight is dequantized to F16 (CUDA_SCRATCH_WEIGHTS, a slab of rows at a time) and
 * meets F16 activations. */
ggtk_status cuda_mul_mat_cublas(cuda_ctx *ctx, inf_tensor *node, ggtk_error *err);

#endif
