/* tensor_internal.h - what the tensor, graph and op-constructor files share inside libinfer:
 * arena allocation, the context's error slot, tensor construction and op parameter access. */
#ifndef INF_TENSOR_INTERNAL_H
#define INF_TENSOR_INTERNAL_H

#include <string.h>

#include <ggtk/inf_tensor.h>

/* Alignment of tensor data carved from a context (and of CPU buffers): one cache line, the
 * widest vector load. */
#define INF_DATA_ALIGNMENT 64

/* Record `fmt` as the context's error (GGTK_ERR_INVALID) unless one is already kept. */
void inf_context_fail(inf_context *ctx, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* `size` bytes of the context's block aligned to `alignment`, or NULL (error recorded) when the
 * block is full. `what` names the request in the message. */
void *inf_context_alloc(inf_context *ctx, size_t size, size_t alignment, const char *what);

/* A zeroed tensor linked at the end of the context's list, or NULL (error recorded). */
inf_tensor *inf_context_new_record(inf_context *ctx);

/* A new tensor with contiguous strides. With `view_of` non-NULL it becomes a view of `view_of`
 * (the memory owner is resolved) at `view_offset`, strides still contiguous for the caller to
 * change; otherwise data follows the context's mode. NULL on error (recorded). */
inf_tensor *inf_tensor_make(inf_context *ctx, ggtk_tensor_type type, int n_dims, const int64_t *ne,
                            inf_tensor *view_of, size_t view_offset);

/* Bytes of one block of `type` and elements per block; 0 for an unknown type. */
size_t inf_type_block_bytes(ggtk_tensor_type type);
int64_t inf_type_block_elements(ggtk_tensor_type type);
/* Lower-case name of a type ("f32"), "?" when unknown. */
const char *inf_type_name(ggtk_tensor_type type);

/* True (and an error recorded, unless one already is) when a source is NULL - usually because
 * the constructor that should have made it failed. */
static inline bool inf_source_missing(inf_context *ctx, const inf_tensor *t, const char *op)
{
    if (t)
        return false;
    inf_context_fail(ctx, "%s: a source is NULL", op);
    return true;
}

/* Per-operation parameters, stored as 32-bit words. */
static inline float inf_op_param_f32(const inf_tensor *t, int i)
{
    float v;
    memcpy(&v, &t->op_params[i], sizeof v);
    return v;
}

static inline void inf_op_param_set_f32(inf_tensor *t, int i, float v)
{
    memcpy(&t->op_params[i], &v, sizeof v);
}

/* Address of element (i0..i3) of a tensor of a plain type. */
static inline void *inf_tensor_element(const inf_tensor *t, int64_t i0, int64_t i1, int64_t i2,
                                       int64_t i3)
{
    return (char *)t->data + i0 * t->nb[0] + i1 * t->nb[1] + i2 * t->nb[2] + i3 * t->nb[3];
}

#endif
