/* op_set_rows.cu - placeholder for the SET_ROWS kernels: refuses every node until they are written. */
#include "cuda_ops.cuh"

bool cuda_set_rows_supports(const inf_tensor *node)
{
    (void)node;
    return false;
}

ggtk_status cuda_set_rows_compute(cuda_ctx *ctx, inf_tensor *node, ggtk_error *err)
{
    (void)ctx;
    return ggtk_error_set(err, GGTK_ERR_UNSUPPORTED, GGTK_NO_OFFSET, "cuda: %s is not written yet", node->name);
}
