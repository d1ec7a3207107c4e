/* cuda_ops.cuh - the functions the operation table (cuda_op_table.cu) points at, one group per
 * source file. Each supports() answers from the node alone; each compute() enqueues the node's
 * kernels on ctx->stream and returns without waiting. */
#ifndef INF_CUDA_OPS_CUH
#define INF_CUDA_OPS_CUH

#include "cuda_internal.cuh"

/* op_copy.cu: CONT and CPY between F32, F16 and BF16, any strides. */
bool cuda_copy_supports(const inf_tensor *node);
ggtk_status cuda_copy_compute(cuda_ctx *ctx, inf_tensor *node, ggtk_error *err);

/* op_set_rows.cu: F32 rows written as F32/F16 rows of a cache at I64/I32 indices. */
bool cuda_set_rows_supports(const inf_tensor *node);
ggtk_status cuda_set_rows_compute(cuda_ctx *ctx, inf_tensor *node, ggtk_error *err);

/* op_get_rows.cu: rows of any type the CPU dequantizes, picked by I32 indices, as F32. */
bool cuda_get_rows_supports(const inf_tensor *node);
ggtk_status cuda_get_rows_compute(cuda_ctx *ctx, inf_tensor *node, ggtk_error *err);

/* op_elementwise.cu: F32 element-wise operations, src[1] broadcast for the binary ones. */
bool cuda_unary_supports(const inf_tensor *node);
bool cuda_binary_supports(const inf_tensor *node);
ggtk_status cuda_add_compute(cuda_ctx *ctx, inf_tensor *node, ggtk_error *err);
ggtk_status cuda_mul_compute(cuda_ctx *ctx, inf_tensor *node, ggtk_error *err);
ggtk_status cuda_scale_compute(cuda_ctx *ctx, inf_tensor *node, ggtk_error *err);
ggtk_status cuda_silu_compute(cuda_ctx *ctx, inf_tensor *node, ggtk_error *err);
ggtk_status cuda_swiglu_compute(cuda_ctx *ctx, inf_tensor *node, ggtk_error *err);
ggtk_status cuda_gelu_compute(cuda_ctx *ctx, inf_tensor *node, ggtk_error *err);
ggtk_status cuda_geglu_compute(cuda_ctx *ctx, inf_tensor *node, ggtk_error *err);
ggtk_status cuda_softcap_compute(cuda_ctx *ctx, inf_tensor *node, ggtk_error *err);

/* op_rms_norm.cu: RMS norm of F32 rows. */
bool cuda_rms_norm_supports(const inf_tensor *node);
ggtk_status cuda_rms_norm_compute(cuda_ctx *ctx, inf_tensor *node, ggtk_error *err);

/* op_rope.cu: rotary embedding (normal and NeoX pairing, frequency factors, YaRN). */
bool cuda_rope_supports(const inf_tensor *node);
ggtk_status cuda_rope_compute(cuda_ctx *ctx, inf_tensor *node, ggtk_error *err);

/* op_soft_max.cu: scaled softmax with a mask tensor or the (windowed) causal mask. */
bool cuda_soft_max_supports(const inf_tensor *node);
ggtk_status cuda_soft_max_compute(cuda_ctx *ctx, inf_tensor *node, ggtk_error *err);

/* op_mul_mat.cu: matrix products, F32/F16/BF16 through cuBLAS and every quantized type the CPU
 * backend computes. */
bool cuda_mul_mat_supports(const inf_tensor *node);
ggtk_status cuda_mul_mat_compute(cuda_ctx *ctx, inf_tensor *node, ggtk_error *err);

/* op_flash_attn.cu: fused attention (F32 queries, F32/F16 K and V, head sizes 32..256 by 32). */
bool cuda_flash_attn_supports(const inf_tensor *node);
ggtk_status cuda_flash_attn_compute(cuda_ctx *ctx, inf_tensor *node, ggtk_error *err);

#endif
