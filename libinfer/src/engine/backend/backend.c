/* backend.c - the public backend calls, dispatched to the backend's own operations, and placing
 * a whole context's tensors in one buffer. */

#include "backend_internal.h"
#include "engine/tensor/tensor_internal.h"

void inf_backend_free(inf_backend *backend)
{
    if (backend)
        backend->ops->release(backend);
}

const char *inf_backend_name(const inf_backend *backend)
{
    return backend->ops->name;
}

size_t inf_backend_alignment(const inf_backend *backend)
{
    return backend->ops->alignment;
}

inf_buffer *inf_backend_alloc_buffer(inf_backend *backend, size_t size)
{
    return backend->ops->alloc_buffer(backend, size, NULL);
}

inf_buffer *inf_backend_alloc_buffer_checked(inf_backend *backend, size_t size, ggtk_error *err)
{
    return backend->ops->alloc_buffer(backend, size, err);
}

bool inf_backend_supports(const inf_backend *backend, const inf_tensor *node)
{
    return backend->ops->supports(backend, node);
}

ggtk_status inf_backend_compute(inf_backend *backend, const inf_graph *graph, ggtk_error *err)
{
    return inf_backend_compute_observed(backend, graph, NULL, NULL, err);
}

ggtk_status inf_backend_compute_observed(inf_backend *backend, const inf_graph *graph,
                                         inf_node_observer observer, void *user, ggtk_error *err)
{
    return backend->ops->compute(backend, graph, NULL, observer, user, err);
}

ggtk_status inf_backend_compute_filtered(inf_backend *backend, const inf_graph *graph,
                                         inf_node_filter filter, inf_node_observer observer,
                                         void *user, ggtk_error *err)
{
    return backend->ops->compute(backend, graph, filter, observer, user, err);
}

static bool needs_memory(const inf_tensor *t)
{
    return !t->data && !t->view_src;
}

static size_t align_up(size_t n, size_t alignment)
{
    return (n + alignment - 1) / alignment * alignment;
}

inf_buffer *inf_backend_alloc_context_tensors(inf_backend *backend, inf_context *ctx,
                                              ggtk_error *err)
{
    size_t alignment = inf_backend_alignment(backend);
    size_t total = 0;
    for (inf_tensor *t = inf_context_next_tensor(ctx, NULL); t; t = inf_context_next_tensor(ctx, t)) {
        if (needs_memory(t))
            total = align_up(total, alignment) + inf_tensor_nbytes(t);
    }
    inf_buffer *buffer = inf_backend_alloc_buffer_checked(backend, total, err);
    if (!buffer)
        return NULL;
    size_t offset = 0;
    for (inf_tensor *t = inf_context_next_tensor(ctx, NULL); t; t = inf_context_next_tensor(ctx, t)) {
        if (!needs_memory(t))
            continue;
        offset = align_up(offset, alignment);
        inf_buffer_place_tensor(buffer, t, offset, NULL); /* fits: the buffer was sized for it */
        offset += inf_tensor_nbytes(t);
    }
    /* Views made before their source had memory take it now. */
    for (inf_tensor *t = inf_context_next_tensor(ctx, NULL); t; t = inf_context_next_tensor(ctx, t)) {
        if (t->view_src && !t->data && t->view_src->data) {
            t->data = (char *)t->view_src->data + t->view_offset;
            t->buffer = t->view_src->buffer;
        }
    }
    return buffer;
}
