/* cpu_op_table.c - which kernel computes each operation on the CPU. */
#include "cpu_internal.h"

static bool always(const inf_tensor *node)
{
    (void)node;
    return true;
}

const cpu_op cpu_ops[INF_OP_COUNT] = {
    [INF_OP_NONE] = {always, NULL, NULL},
    [INF_OP_VIEW] = {always, NULL, NULL},
    [INF_OP_CONT] = {cpu_copy_supports, NULL, cpu_copy_compute},
    [INF_OP_CPY] = {cpu_copy_supports, NULL, cpu_copy_compute},
    [INF_OP_SET_ROWS] = {cpu_set_rows_supports, NULL, cpu_set_rows_compute},
    [INF_OP_GET_ROWS] = {cpu_get_rows_supports, NULL, cpu_get_rows_compute},
    [INF_OP_ADD] = {cpu_binary_supports, NULL, cpu_add_compute},
    [INF_OP_MUL] = {cpu_binary_supports, NULL, cpu_mul_compute},
    [INF_OP_SCALE] = {cpu_unary_supports, NULL, cpu_scale_compute},
    [INF_OP_SILU] = {cpu_unary_supports, NULL, cpu_silu_compute},
    [INF_OP_SWIGLU] = {cpu_binary_supports, NULL, cpu_swiglu_compute},
    [INF_OP_GELU] = {cpu_unary_supports, NULL, cpu_gelu_compute},
    [INF_OP_GEGLU] = {cpu_binary_supports, NULL, cpu_geglu_compute},
    [INF_OP_SOFTCAP] = {cpu_unary_supports, NULL, cpu_softcap_compute},
    [INF_OP_RMS_NORM] = {cpu_unary_supports, NULL, cpu_rms_norm_compute},
    [INF_OP_ROPE] = {cpu_rope_supports, cpu_rope_work_size, cpu_rope_compute},
    [INF_OP_SOFT_MAX] = {cpu_soft_max_supports, NULL, cpu_soft_max_compute},
    [INF_OP_MUL_MAT] = {cpu_mul_mat_supports, cpu_mul_mat_work_size, cpu_mul_mat_compute},
    [INF_OP_FLASH_ATTN] = {cpu_flash_attn_supports, cpu_flash_attn_work_size, cpu_flash_attn_compute},
};
