/* backend_internal.h - what a backend implements behind the public inf_backend_* calls. */
#ifndef INF_BACKEND_INTERNAL_H
#define INF_BACKEND_INTERNAL_H

#include <ggtk/inf_backend.h>

typedef struct inf_backend_ops {
    const char *name;
    size_t alignment;
    void (*release)(inf_backend *backend);
    /* NULL on failure with `err` (may be NULL) naming the backend, the size and the reason. */
    inf_buffer *(*alloc_buffer)(inf_backend *backend, size_t size, ggtk_error *err);
    bool (*supports)(const inf_backend *backend, const inf_tensor *node);
    /* Runs the graph, calling `observer` after the nodes `filter` accepts (NULL: all; NULL
     * observer: none); on failure fills `err` (which may be NULL). */
    ggtk_status (*compute)(inf_backend *backend, const inf_graph *graph, inf_node_filter filter,
                           inf_node_observer observer, void *user, ggtk_error *err);
} inf_backend_ops;

struct inf_backend {
    const inf_backend_ops *ops;
    void *impl;
};

/* Who watches a graph's nodes, and which: a compute call's filter, observer and user. */
typedef struct inf_node_watch {
    inf_node_filter filter;
    inf_node_observer observer;
    void *user;
} inf_node_watch;

/* Whether the observer is to be called after `node`. */
static inline bool inf_node_watched(const inf_node_watch *watch, const inf_tensor *node)
{
    return watch->observer && (!watch->filter || watch->filter(node, watch->user));
}

/* inf_backend_alloc_buffer() with the backend's reason for a failure (a device's free memory). */
inf_buffer *inf_backend_alloc_buffer_checked(inf_backend *backend, size_t size, ggtk_error *err);

#endif
