/* graph_alloc.c - the public graph allocator: keeps the last plan, re-plans when a graph differs
 * in shape, wiring or placement, owns the compute buffers (one per backend) and points tensors
 * into them. */
#include <stdlib.h>
#include <string.h>

#include "graph_plan.h"
#include "engine/backend/backend_internal.h"
#include <ggtk/inf_alloc.h>
#include "engine/tensor/tensor_internal.h"

struct inf_graph_allocator {
    inf_backend *backends[INF_ALLOC_MAX_BUFFERS];
    inf_buffer *buffers[INF_ALLOC_MAX_BUFFERS];
    plan_layout layout;
    graph_plan plan;
    bool planned;
    int n_replans;
    const inf_graph *allocated; /* graph the data pointers were last set for */
};

inf_graph_allocator *inf_graph_allocator_new_multi(inf_backend *const *backends, int n_backends,
                                                   inf_alloc_placement placement, void *user)
{
    if (n_backends < 1 || n_backends > INF_ALLOC_MAX_BUFFERS)
        return NULL;
    inf_graph_allocator *alloc = calloc(1, sizeof *alloc);
    if (!alloc)
        return NULL;
    alloc->layout = (plan_layout){.n_buffers = n_backends, .placement = placement, .user = user};
    for (int b = 0; b < n_backends; b++) {
        alloc->backends[b] = backends[b];
        alloc->layout.alignment[b] = inf_backend_alignment(backends[b]);
    }
    return alloc;
}

inf_graph_allocator *inf_graph_allocator_new(inf_backend *backend)
{
    return inf_graph_allocator_new_multi(&backend, 1, NULL, NULL);
}

void inf_graph_allocator_free(inf_graph_allocator *alloc)
{
    if (!alloc)
        return;
    plan_free(&alloc->plan);
    for (int b = 0; b < alloc->layout.n_buffers; b++)
        inf_buffer_free(alloc->buffers[b]);
    free(alloc);
}

ggtk_status inf_graph_allocator_reserve(inf_graph_allocator *alloc, const inf_graph *graph,
                                        ggtk_error *err)
{
    ggtk_status st = plan_graph(graph, &alloc->layout, &alloc->plan);
    alloc->planned = st == GGTK_OK;
    alloc->allocated = NULL;
    if (st == GGTK_ERR_INVALID)
        return ggtk_error_set(err, st, GGTK_NO_OFFSET,
                              "graph allocator: a view's source has no memory and is not in the "
                              "graph");
    if (st == GGTK_ERR_USAGE)
        return ggtk_error_set(err, st, GGTK_NO_OFFSET,
                              "graph allocator: tensor '%s' is placed outside the %d compute "
                              "buffers", alloc->plan.misplaced->name, alloc->layout.n_buffers);
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

/* Make every compute buffer at least as large as the plan needs. A single allocator always has
 * its buffer (callers read it), a buffer of a multi-backend allocator only when it is used. */
static ggtk_status grow_buffers(inf_graph_allocator *alloc, ggtk_error *err)
{
    for (int b = 0; b < alloc->layout.n_buffers; b++) {
        const size_t need = alloc->plan.buffer_sizes[b];
        inf_buffer *have = alloc->buffers[b];
        if ((have && have->size >= need) || (!have && need == 0 && alloc->layout.n_buffers > 1))
            continue;
        inf_buffer_free(have);
        ggtk_error reason;
        alloc->buffers[b] = inf_backend_alloc_buffer_checked(alloc->backends[b], need, &reason);
        if (!alloc->buffers[b])
            return ggtk_error_set(err, reason.status, GGTK_NO_OFFSET, "%s", reason.message);
    }
    return GGTK_OK;
}

ggtk_status inf_graph_allocator_alloc(inf_graph_allocator *alloc, inf_graph *graph, ggtk_error *err)
{
    if (!alloc->planned || !plan_matches(&alloc->plan, graph, &alloc->layout)) {
        ggtk_status st = inf_graph_allocator_reserve(alloc, graph, err);
        if (st != GGTK_OK)
            return st;
        alloc->n_replans++;
    }
    ggtk_status st = grow_buffers(alloc, err);
    if (st != GGTK_OK)
        return st;
    const int n_leaves = inf_graph_n_leaves(graph);
    const int count = n_leaves + inf_graph_n_nodes(graph);
    for (int i = 0; i < count; i++) {
        inf_tensor *t = tensor_at(graph, n_leaves, i);
        if (alloc->plan.offsets[i] != PLAN_NONE) {
            inf_buffer *buffer = alloc->buffers[alloc->plan.buffers[i]];
            t->data = (char *)buffer->base + alloc->plan.offsets[i];
            t->buffer = buffer;
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
    return alloc->buffers[0];
}

inf_buffer *inf_graph_allocator_buffer_at(const inf_graph_allocator *alloc, int index)
{
    return index >= 0 && index < alloc->layout.n_buffers ? alloc->buffers[index] : NULL;
}

size_t inf_graph_allocator_buffer_size(const inf_graph_allocator *alloc, int index)
{
    return alloc->planned && index >= 0 && index < alloc->layout.n_buffers
               ? alloc->plan.buffer_sizes[index]
               : 0;
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
        inf_buffer *buffer = alloc->buffers[rel->buffer];
        buffer->ops->fill(buffer, (char *)buffer->base + rel->offset, pattern, rel->size);
    }
    return GGTK_OK;
}
