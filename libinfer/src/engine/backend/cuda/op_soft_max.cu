/* op_soft_max.cu - placeholder for the SOFT_MAX kernels: refuses every node until they are written. */
#include "cuda_ops.cuh"

bool cuda_soft_max_supports(const inf_tensor *node)
{
    (void)node;
    return false;
}

ggtk_status cuda_soft_max_compute(cuda_ctx *ctx, inf_tensor *node, ggtk_error *err)
{
    (void)ctx;
    return ggtk_error_set(err, GGTK_ERR_UNSUPPORTED, GGTK_NO_OFFSET, "cuda: %s is not written yet", node->name);
}
