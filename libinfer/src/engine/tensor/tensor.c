/* tensor.c - creating tensors and describing their shape, type and memory layout. */
#include <stdarg.h>
#include <stdio.h>

#include "tensor_internal.h"

static const char *const op_names[INF_OP_COUNT] = {
    [INF_OP_NONE] = "NONE",         [INF_OP_VIEW] = "VIEW",         [INF_OP_CONT] = "CONT",
    [INF_OP_CPY] = "CPY",           [INF_OP_SET_ROWS] = "SET_ROWS", [INF_OP_GET_ROWS] = "GET_ROWS",
    [INF_OP_ADD] = "ADD",           [INF_OP_MUL] = "MUL",           [INF_OP_SCALE] = "SCALE",
    [INF_OP_SILU] = "SILU",         [INF_OP_SWIGLU] = "SWIGLU",     [INF_OP_GELU] = "GELU",
    [INF_OP_GEGLU] = "GEGLU",       [INF_OP_SOFTCAP] = "SOFTCAP",   [INF_OP_RMS_NORM] = "RMS_NORM",
    [INF_OP_ROPE] = "ROPE",         [INF_OP_SOFT_MAX] = "SOFT_MAX", [INF_OP_MUL_MAT] = "MUL_MAT",
    [INF_OP_FLASH_ATTN] = "FLASH_ATTN",
};

const char *inf_op_name(inf_op op)
{
    return (unsigned)op < INF_OP_COUNT ? op_names[op] : "UNKNOWN";
}

size_t inf_type_block_bytes(ggtk_tensor_type type)
{
    const ggtk_tensor_type_info *info = ggtk_tensor_type_info_get(type);
    return info ? info->block_bytes : 0;
}

int64_t inf_type_block_elements(ggtk_tensor_type type)
{
    const ggtk_tensor_type_info *info = ggtk_tensor_type_info_get(type);
    return info ? info->block_size : 0;
}

const char *inf_type_name(ggtk_tensor_type type)
{
    const ggtk_tensor_type_info *info = ggtk_tensor_type_info_get(type);
    return info ? info->name : "?";
}

size_t inf_type_row_size(ggtk_tensor_type type, int64_t ne0)
{
    int64_t block = inf_type_block_elements(type);
    if (block <= 0 || ne0 < 0 || ne0 % block != 0)
        return 0;
    return (size_t)(ne0 / block) * inf_type_block_bytes(type);
}

/* Contiguous strides for `ne`; false when the sizes overflow. */
static bool set_contiguous_strides(inf_tensor *t)
{
    t->nb[0] = inf_type_block_bytes(t->type);
    t->nb[1] = inf_type_row_size(t->type, t->ne[0]);
    for (int i = 2; i < INF_MAX_DIMS; i++) {
        if (t->nb[i - 1] != 0 && (size_t)t->ne[i - 1] > SIZE_MAX / t->nb[i - 1])
            return false;
        t->nb[i] = t->nb[i - 1] * (size_t)t->ne[i - 1];
    }
    return (size_t)t->ne[3] <= SIZE_MAX / (t->nb[3] ? t->nb[3] : 1);
}

inf_tensor *inf_tensor_make(inf_context *ctx, ggtk_tensor_type type, int n_dims, const int64_t *ne,
                            inf_tensor *view_of, size_t view_offset)
{
    if (n_dims < 1 || n_dims > INF_MAX_DIMS || !ne) {
        inf_context_fail(ctx, "tensor: %d dimensions (expected 1..%d)", n_dims, INF_MAX_DIMS);
        return NULL;
    }
    int64_t block = inf_type_block_elements(type);
    if (block <= 0) {
        inf_context_fail(ctx, "tensor: unknown type code %d", (int)type);
        return NULL;
    }
    int64_t shape[INF_MAX_DIMS] = {1, 1, 1, 1};
    for (int i = 0; i < n_dims; i++) {
        if (ne[i] < 1) {
            inf_context_fail(ctx, "tensor: ne[%d] = %lld (expected >= 1)", i, (long long)ne[i]);
            return NULL;
        }
        shape[i] = ne[i];
    }
    if (shape[0] % block != 0) {
        inf_context_fail(ctx, "tensor: ne[0] = %lld is not a multiple of %s's block of %lld",
                         (long long)shape[0], inf_type_name(type), (long long)block);
        return NULL;
    }
    inf_tensor *t = inf_context_new_record(ctx);
    if (!t)
        return NULL;
    t->type = type;
    memcpy(t->ne, shape, sizeof shape);
    if (!set_contiguous_strides(t)) {
        inf_context_fail(ctx, "tensor: size of %lldx%lldx%lldx%lld %s overflows", (long long)shape[0],
                         (long long)shape[1], (long long)shape[2], (long long)shape[3],
                         inf_type_name(type));
        return NULL;
    }
    if (view_of) {
        t->op = INF_OP_VIEW;
        t->src[0] = view_of;
        t->view_src = view_of->view_src ? view_of->view_src : view_of;
        t->view_offset = view_of->view_offset + view_offset;
        t->buffer = t->view_src->buffer;
        if (t->view_src->data)
            t->data = (char *)t->view_src->data + t->view_offset;
    } else if (!inf_context_no_data(ctx)) {
        t->data = inf_context_alloc(ctx, inf_tensor_nbytes(t), INF_DATA_ALIGNMENT, "tensor data");
        if (!t->data)
            return NULL;
    }
    return t;
}

inf_tensor *inf_tensor_new(inf_context *ctx, ggtk_tensor_type type, int n_dims, const int64_t *ne)
{
    return inf_tensor_make(ctx, type, n_dims, ne, NULL, 0);
}

inf_tensor *inf_tensor_new_1d(inf_context *ctx, ggtk_tensor_type type, int64_t ne0)
{
    return inf_tensor_make(ctx, type, 1, (int64_t[]){ne0}, NULL, 0);
}

inf_tensor *inf_tensor_new_2d(inf_context *ctx, ggtk_tensor_type type, int64_t ne0, int64_t ne1)
{
    return inf_tensor_make(ctx, type, 2, (int64_t[]){ne0, ne1}, NULL, 0);
}

inf_tensor *inf_tensor_new_3d(inf_context *ctx, ggtk_tensor_type type, int64_t ne0, int64_t ne1,
                              int64_t ne2)
{
    return inf_tensor_make(ctx, type, 3, (int64_t[]){ne0, ne1, ne2}, NULL, 0);
}

inf_tensor *inf_tensor_new_4d(inf_context *ctx, ggtk_tensor_type type, int64_t ne0, int64_t ne1,
                              int64_t ne2, int64_t ne3)
{
    return inf_tensor_make(ctx, type, 4, (int64_t[]){ne0, ne1, ne2, ne3}, NULL, 0);
}

inf_tensor *inf_tensor_set_name(inf_tensor *tensor, const char *fmt, ...)
{
    if (!tensor)
        return NULL;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(tensor->name, sizeof tensor->name, fmt, ap);
    va_end(ap);
    return tensor;
}

void inf_tensor_set_input(inf_tensor *tensor)
{
    tensor->flags |= INF_TENSOR_INPUT;
}

void inf_tensor_set_output(inf_tensor *tensor)
{
    tensor->flags |= INF_TENSOR_OUTPUT;
}

int64_t inf_tensor_nelements(const inf_tensor *tensor)
{
    return tensor->ne[0] * tensor->ne[1] * tensor->ne[2] * tensor->ne[3];
}

int64_t inf_tensor_nrows(const inf_tensor *tensor)
{
    return tensor->ne[1] * tensor->ne[2] * tensor->ne[3];
}

size_t inf_tensor_nbytes(const inf_tensor *tensor)
{
    size_t bytes = inf_type_row_size(tensor->type, tensor->ne[0]);
    if (inf_type_block_elements(tensor->type) == 1)
        bytes = tensor->nb[0] * (size_t)(tensor->ne[0] - 1) + inf_type_block_bytes(tensor->type);
    for (int i = 1; i < INF_MAX_DIMS; i++)
        bytes += (size_t)(tensor->ne[i] - 1) * tensor->nb[i];
    return bytes;
}

bool inf_tensor_rows_contiguous(const inf_tensor *tensor)
{
    return tensor->ne[0] == inf_type_block_elements(tensor->type) ||
           tensor->nb[0] == inf_type_block_bytes(tensor->type);
}

bool inf_tensor_is_contiguous(const inf_tensor *tensor)
{
    if (!inf_tensor_rows_contiguous(tensor))
        return false;
    /* Dimensions of size 1 are never stepped over, so their stride does not matter. */
    size_t expected = inf_type_row_size(tensor->type, tensor->ne[0]);
    for (int i = 1; i < INF_MAX_DIMS; i++) {
        if (tensor->ne[i] == 1)
            continue;
        if (tensor->nb[i] != expected)
            return false;
        expected *= (size_t)tensor->ne[i];
    }
    return true;
}

bool inf_tensor_same_shape(const inf_tensor *a, const inf_tensor *b)
{
    return a->ne[0] == b->ne[0] && a->ne[1] == b->ne[1] && a->ne[2] == b->ne[2] &&
           a->ne[3] == b->ne[3];
}
