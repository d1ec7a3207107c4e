/* op_elementwise.cu - placeholder for the element-wise operations kernels: refuses every node until they are written. */
#include "cuda_ops.cuh"

bool cuda_unary_supports(const inf_tensor *node)
{
    (void)node;
    return false;
}

bool cuda_binary_supports(const inf_tensor *node)
{
    (void)node;
    return false;
}

ggtk_status cuda_add_compute(cuda_ctx *ctx, inf_tensor *node, ggtk_error *err)
{
    (void)ctx;
    return ggtk_error_set(err, GGTK_ERR_UNSUPPORTED, GGTK_NO_OFFSET, "cuda: %s is not written yet", node->name);
}

ggtk_status cuda_mul_compute(cuda_ctx *ctx, inf_tensor *node, ggtk_error *err)
{
    (void)ctx;
    return ggtk_error_set(err, GGTK_ERR_UNSUPPORTED, GGTK_NO_OFFSET, "cuda: %s is not written yet", node->name);
}

ggtk_status cuda_scale_compute(cuda_ctx *ctx, inf_tensor *node, ggtk_error *err)
{
    (void)ctx;
    return ggtk_error_set(err, GGTK_ERR_UNSUPPORTED, GGTK_NO_OFFSET, "cuda: %s is not written yet", node->name);
}

ggtk_status cuda_silu_compute(cuda_ctx *ctx, inf_tensor *node, ggtk_error *err)
{
    (void)ctx;
    return ggtk_error_set(err, GGTK_ERR_UNSUPPORTED, GGTK_NO_OFFSET, "cuda: %s is not written yet", node->name);
}

ggtk_status cuda_swiglu_compute(cuda_ctx *ctx, inf_tensor *node, ggtk_error *err)
{
    (void)ctx;
    return ggtk_error_set(err, GGTK_ERR_UNSUPPORTED, GGTK_NO_OFFSET, "cuda: %s is not written yet", node->name);
}

ggtk_status cuda_gelu_compute(cuda_ctx *ctx, inf_tensor *node, ggtk_error *err)
{
    (void)ctx;
    return ggtk_error_set(err, GGTK_ERR_UNSUPPORTED, GGTK_NO_OFFSET, "cuda: %s is not written yet", node->name);
}

ggtk_status cuda_geglu_compute(cuda_ctx *ctx, inf_tensor *node, ggtk_error *err)
{
    (void)ctx;
    return ggtk_error_set(err, GGTK_ERR_UNSUPPORTED, GGTK_NO_OFFSET, "cuda: %s is not written yet", node->name);
}

ggtk_status cuda_softcap_compute(cuda_ctx *ctx, inf_tensor *node, ggtk_error *err)
{
    (void)ctx;
    return ggtk_error_set(err, GGTK_ERR_UNSUPPORTED, GGTK_NO_OFFSET, "cuda: %s is not written yet", node->name);
}
