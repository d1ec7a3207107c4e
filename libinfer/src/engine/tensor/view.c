/* view.c - reshape, view, permute and transpose: tensors that share the memory of another. */
#include "tensor_internal.h"

static inf_tensor *reshape(inf_context *ctx, inf_tensor *a, int n_dims, const int64_t *ne)
{
    if (inf_source_missing(ctx, a, "reshape"))
        return NULL;
    int64_t count = 1;
    for (int i = 0; i < n_dims; i++)
        count *= ne[i];
    if (!inf_tensor_is_contiguous(a)) {
        inf_context_fail(ctx, "reshape of '%s': source is not contiguous (use inf_cont first)",
                         a->name);
        return NULL;
    }
    if (count != inf_tensor_nelements(a)) {
        inf_context_fail(ctx, "reshape of '%s': %lld elements into a shape of %lld", a->name,
                         (long long)inf_tensor_nelements(a), (long long)count);
        return NULL;
    }
    inf_tensor *t = inf_tensor_make(ctx, a->type, n_dims, ne, a, 0);
    return inf_tensor_set_name(t, "%.50s (reshaped)", a->name);
}

inf_tensor *inf_reshape_1d(inf_context *ctx, inf_tensor *a, int64_t ne0)
{
    return reshape(ctx, a, 1, (int64_t[]){ne0});
}

inf_tensor *inf_reshape_2d(inf_context *ctx, inf_tensor *a, int64_t ne0, int64_t ne1)
{
    return reshape(ctx, a, 2, (int64_t[]){ne0, ne1});
}

inf_tensor *inf_reshape_3d(inf_context *ctx, inf_tensor *a, int64_t ne0, int64_t ne1, int64_t ne2)
{
    return reshape(ctx, a, 3, (int64_t[]){ne0, ne1, ne2});
}

inf_tensor *inf_reshape_4d(inf_context *ctx, inf_tensor *a, int64_t ne0, int64_t ne1, int64_t ne2,
                           int64_t ne3)
{
    return reshape(ctx, a, 4, (int64_t[]){ne0, ne1, ne2, ne3});
}

/* A view with explicit strides nb[1..n_dims-1]; it must stay inside a's memory. */
static inf_tensor *view(inf_context *ctx, inf_tensor *a, int n_dims, const int64_t *ne,
                        const size_t *nb, size_t offset)
{
    if (inf_source_missing(ctx, a, "view"))
        return NULL;
    inf_tensor *t = inf_tensor_make(ctx, a->type, n_dims, ne, a, offset);
    if (!t)
        return NULL;
    for (int i = 1; i < n_dims; i++)
        t->nb[i] = nb[i - 1];
    for (int i = n_dims; i < INF_MAX_DIMS; i++)
        t->nb[i] = t->nb[i - 1] * (size_t)t->ne[i - 1];
    size_t limit = inf_tensor_nbytes(a);
    if (offset > limit || inf_tensor_nbytes(t) > limit - offset) {
        inf_context_fail(ctx, "view of '%s': %zu bytes at offset %zu exceed its %zu bytes",
                         a->name, inf_tensor_nbytes(t), offset, limit);
        return NULL;
    }
    return inf_tensor_set_name(t, "%.54s (view)", a->name);
}

inf_tensor *inf_view_1d(inf_context *ctx, inf_tensor *a, int64_t ne0, size_t offset)
{
    return view(ctx, a, 1, (int64_t[]){ne0}, NULL, offset);
}

inf_tensor *inf_view_2d(inf_context *ctx, inf_tensor *a, int64_t ne0, int64_t ne1, size_t nb1,
                        size_t offset)
{
    return view(ctx, a, 2, (int64_t[]){ne0, ne1}, (size_t[]){nb1}, offset);
}

inf_tensor *inf_view_3d(inf_context *ctx, inf_tensor *a, int64_t ne0, int64_t ne1, int64_t ne2,
                        size_t nb1, size_t nb2, size_t offset)
{
    return view(ctx, a, 3, (int64_t[]){ne0, ne1, ne2}, (size_t[]){nb1, nb2}, offset);
}

inf_tensor *inf_view_4d(inf_context *ctx, inf_tensor *a, int64_t ne0, int64_t ne1, int64_t ne2,
                        int64_t ne3, size_t nb1, size_t nb2, size_t nb3, size_t offset)
{
    return view(ctx, a, 4, (int64_t[]){ne0, ne1, ne2, ne3}, (size_t[]){nb1, nb2, nb3}, offset);
}

inf_tensor *inf_permute(inf_context *ctx, inf_tensor *a, int axis0, int axis1, int axis2,
                        int axis3)
{
    if (inf_source_missing(ctx, a, "permute"))
        return NULL;
    const int axes[INF_MAX_DIMS] = {axis0, axis1, axis2, axis3};
    int seen = 0;
    for (int i = 0; i < INF_MAX_DIMS; i++) {
        if (axes[i] >= 0 && axes[i] < INF_MAX_DIMS)
            seen |= 1 << axes[i];
    }
    if (seen != 0xf) {
        inf_context_fail(ctx, "permute of '%s': axes (%d %d %d %d) are not a permutation of 0..3",
                         a->name, axis0, axis1, axis2, axis3);
        return NULL;
    }
    if (inf_type_block_elements(a->type) != 1 && axis0 != 0) {
        inf_context_fail(ctx, "permute of '%s': a block-quantized dimension 0 cannot move",
                         a->name);
        return NULL;
    }
    inf_tensor *t = inf_tensor_make(ctx, a->type, INF_MAX_DIMS, a->ne, a, 0);
    if (!t)
        return NULL;
    for (int i = 0; i < INF_MAX_DIMS; i++) {
        t->ne[axes[i]] = a->ne[i];
        t->nb[axes[i]] = a->nb[i];
    }
    return inf_tensor_set_name(t, "%.50s (permuted)", a->name);
}

inf_tensor *inf_transpose(inf_context *ctx, inf_tensor *a)
{
    inf_tensor *t = inf_permute(ctx, a, 1, 0, 2, 3);
    if (t)
        inf_tensor_set_name(t, "%.46s (transposed)", a->name);
    return t;
}
