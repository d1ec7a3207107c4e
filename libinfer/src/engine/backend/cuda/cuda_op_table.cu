/* cuda_op_table.cu - which kernels compute each operation on a CUDA device. */
#include "cuda_ops.cuh"

static bool always(const inf_tensor *node)
{
    (void)node;
    return true;
}

/* Rows are listed in enum order: C++ has no designated array initialisers. NONE and VIEW need no
 * work (a view's memory is its source's). */
const cuda_op cuda_ops[INF_OP_COUNT] = {
    /* NONE */ {always, NULL},
    /* VIEW */ {always, NULL},
    /* CONT */ {cuda_copy_supports, cuda_copy_compute},
    /* CPY */ {cuda_copy_supports, cuda_copy_compute},
    /* SET_ROWS */ {cuda_set_rows_supports, cuda_set_rows_compute},
    /* GET_ROWS */ {cuda_get_rows_supports, cuda_get_rows_compute},
    /* ADD */ {cuda_binary_supports, cuda_add_compute},
    /* MUL */ {cuda_binary_supports, cuda_mul_compute},
    /* SCALE */ {cuda_unary_supports, cuda_scale_compute},
    /* SILU */ {cuda_unary_supports, cuda_silu_compute},
    /* SWIGLU */ {cuda_binary_supports, cuda_swiglu_compute},
    /* GELU */ {cuda_unary_supports, cuda_gelu_compute},
    /* GEGLU */ {cuda_binary_supports, cuda_geglu_compute},
    /* SOFTCAP */ {cuda_unary_supports, cuda_softcap_compute},
    /* RMS_NORM */ {cuda_rms_norm_supports, cuda_rms_norm_compute},
    /* ROPE */ {cuda_rope_supports, cuda_rope_compute},
    /* SOFT_MAX */ {cuda_soft_max_supports, cuda_soft_max_compute},
    /* MUL_MAT */ {cuda_mul_mat_supports, cuda_mul_mat_compute},
    /* FLASH_ATTN */ {cuda_flash_attn_supports, cuda_flash_attn_compute},
};

/* A new operation must get a row here. */
static_assert(INF_OP_FLASH_ATTN + 1 == INF_OP_COUNT, "cuda_ops[] lists every operation");
