/* graph_alloc.c - the public graph allocator: keeps the last plan, re-plans when a graph differs
 * in shape or wiring, owns the compute buffer and points tensors into it. */
#include <stdlib.h>
#include <string.h>

#include "graph_plan.h"
#include "engine/backend/backend_internal.h"
#include <ggtk/inf_alloc.h>
#include "engine/tensor/tensor_internal.h"

struct inf_graph_allocator {
    inf_backend *backend;
    inf_buffer *buffer;
    graph_plan plan;
    bool planned;
    int n_replans;
    const inf_graph *allocated; /* graph the data pointers were last set for */
};

inf_graph_allocator *inf_graph_allocator_new(inf_backend *backend)
{
    inf_graph_allocator *alloc = calloc(1, sizeof *alloc);
    if (alloc)
        alloc->backend = backend;
    return alloc;
}

void inf_graph_allocator_free(inf_graph_allocator *alloc)
{
    if (!alloc)
        return;
    plan_free(&alloc->plan);
    inf_buffer_free(alloc->buffer);
    free(alloc);
}

ggtk_status inf_graph_allocator_reserve(inf_graph_allocator *alloc, const inf_graph *graph,
                                        ggtk_error *err)
{
    ggtk_status st = plan_graph(graph, inf_backend_alignment(alloc->backend), &alloc->plan);
    alloc->planned = st == GGTK_OK;
    alloc->allocated = NULL;
    if (st == GGTK_ERR_INVALID)
        return ggtk_error_set(err, st, GGTK_NO_OFFSET,
                              "graph allocator: a view's source has no memory and is not in the "
                              "graph");
    if (st != GGTK_OK)
        return ggtk_error_set(err, st, GGTK_NO_OFFSET,
                              "graph allocator: out of memory planning a graph of %d nodes",
                              inf_graph_n_nodes(graph));
    return GGTK_OK;
}

static inf_tensor *tensor_at(const inf_graph *graph, int n_leaves, int index)
{
    return index < n_leaves ? inf_graph_leaf(graph, index) : inf_graph_node(graph, index - n_leaves);
}

ggtk_status inf_graph_allocator_alloc(inf_graph_allocator *alloc, inf_graph *graph, ggtk_error *err)
{
    if (!alloc->planned || !plan_matches(&alloc->plan, graph)) {
        ggtk_status st = inf_graph_allocator_reserve(alloc, graph, err);
        if (st != GGTK_OK)
            return st;
        alloc->n_replans++;
    }
    const size_t need = alloc->plan.stats.buffer_size;
    if (!alloc->buffer || alloc->buffer->size < need) {
        inf_buffer_free(alloc->buffer);
        ggtk_error reason;
        alloc->buffer = inf_backend_alloc_buffer_checked(alloc->backend, need, &reason);
        if (!alloc->buffer)
            return ggtk_error_set(err, reason.status, GGTK_NO_OFFSET, "%s", reason.message);
    }
    const int n_leaves = inf_graph_n_leaves(graph);
    const int count = n_leaves + inf_graph_n_nodes(graph);
    for (int i = 0; i < count; i++) {
        inf_tensor *t = tensor_at(graph, n_leaves, i);
        if (alloc->plan.offsets[i] != PLAN_NONE) {
            t->data = (char *)alloc->buffer->base + alloc->plan.offsets[i];
            t->buffer = alloc->buffer;
        }
    }
    /* Views after their sources: graph order puts a view's source first. */
    for (int i = 0; i < count; i++) {
        inf_tensor *t = tensor_at(graph, n_leaves, i);
        if (t->view_src && t->view_src->data) {
            t->data = (char *)t->view_src->data + t->view_offset;
            t->buffer = t->view_src->buffer;
        }
    }
    alloc->allocated = graph;
    return GGTK_OK;
}

inf_alloc_stats inf_graph_allocator_stats(const inf_graph_allocator *alloc)
{
    inf_alloc_stats stats = alloc->planned ? alloc->plan.stats : (inf_alloc_stats){0};
    stats.n_replans = alloc->n_replans;
    return stats;
}

inf_buffer *inf_graph_allocator_buffer(const inf_graph_allocator *alloc)
{
    return alloc->buffer;
}

ggtk_status inf_graph_allocator_poison_released(const inf_graph_allocator *alloc,
                                                const inf_graph *graph, int node_index,
                                                uint8_t pattern, ggtk_error *err)
{
    if (graph != alloc->allocated)
        return ggtk_error_set(err, GGTK_ERR_USAGE, GGTK_NO_OFFSET,
                              "graph allocator: poisoning a graph that is not the one last allocated");
    if (node_index < 0 || node_index >= alloc->plan.n_nodes)
        return ggtk_error_set(err, GGTK_ERR_USAGE, GGTK_NO_OFFSET,
                              "graph allocator: node %d is outside the plan's %d nodes", node_index,
                              alloc->plan.n_nodes);
    for (int r = alloc->plan.release_start[node_index]; r < alloc->plan.release_start[node_index + 1];
         r++) {
        const plan_release *rel = &alloc->plan.releases[r];
        alloc->buffer->ops->fill(alloc->buffer, (char *)alloc->buffer->base + rel->offset, pattern,
                                 rel->size);
    }
    return GGTK_OK;
}
