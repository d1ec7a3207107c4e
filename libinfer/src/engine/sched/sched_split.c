/* sched_split.c - cutting an assigned graph into splits, the copies each split reads, and the
 * planning graph that the one graph allocator plans for every backend at once: the caller's
 * leaves, then for each split its copies followed by its nodes. */
#include <stdio.h>
#include <stdlib.h>

#include "sched_internal.h"
#include "engine/graph/graph_internal.h"
#include "engine/tensor/tensor_internal.h"

static int backend_of(const inf_sched *sched, const inf_tensor *t)
{
    return tensor_map_get(&sched->backend_of, t, sched->n_backends - 1);
}

static bool add_split(inf_sched *sched, int backend, int first, int end)
{
    if (!SCHED_ARRAY_RESERVE(sched->splits))
        return false;
    sched->splits.items[sched->splits.count++] =
        (sched_split){.backend = backend, .first_node = first, .n_nodes = end - first};
    return true;
}

/* Runs of consecutive nodes on one backend. A pure view does no work, so it never starts a new
 * split: it joins the one in progress. */
static bool cut_splits(inf_sched *sched, const inf_graph *graph)
{
    const int n = inf_graph_n_nodes(graph);
    int start = 0, current = -1;
    for (int i = 0; i < n; i++) {
        const inf_tensor *node = inf_graph_node(graph, i);
        if (node->op == INF_OP_VIEW)
            continue;
        const int b = backend_of(sched, node);
        if (current >= 0 && b != current) {
            if (!add_split(sched, current, start, i))
                return false;
            start = i;
        }
        current = b;
    }
    return n == 0 || add_split(sched, current >= 0 ? current : sched->n_backends - 1, start, n);
}

/* The stand-in of `original` among split's copies so far, or NULL. */
static inf_tensor *find_copy(const inf_sched *sched, const sched_split *split,
                             const inf_tensor *original)
{
    for (int c = split->first_copy; c < sched->copies.count; c++)
        if (sched->copies.items[c].original == original)
            return sched->copies.items[c].copy;
    return NULL;
}

static bool add_copy(inf_sched *sched, sched_split *split, inf_tensor *original, inf_tensor *copy)
{
    if (!copy || !SCHED_ARRAY_RESERVE(sched->copies) ||
        !tensor_map_set(&sched->backend_of, copy, split->backend))
        return false;
    sched->copies.items[sched->copies.count++] = (sched_copy){original, copy};
    split->n_copies++;
    return true;
}

/* The copy, in split's backend, of the memory owner `owner`: a tensor of the same type, shape
 * and strides whose op (CONT of the owner) makes the allocator keep the owner alive until the
 * copy is taken. */
static inf_tensor *owner_copy(inf_sched *sched, sched_split *split, inf_tensor *owner)
{
    inf_tensor *copy = find_copy(sched, split, owner);
    if (copy)
        return copy;
    copy = inf_tensor_make(sched->ctx, owner->type, INF_MAX_DIMS, owner->ne, NULL, 0);
    if (!copy)
        return NULL;
    for (int d = 0; d < INF_MAX_DIMS; d++)
        copy->nb[d] = owner->nb[d];
    copy->op = INF_OP_CONT;
    copy->src[0] = owner;
    inf_tensor_set_name(copy, "%.50s@%d", owner->name, split->backend);
    if (!add_copy(sched, split, owner, copy))
        return NULL;
    split->n_transfers++;
    split->copy_bytes += inf_tensor_nbytes(owner);
    return copy;
}

/* What split reads in place of `t` (of another backend's memory): the owner's copy, or for a
 * view the same view over the owner's copy. */
static inf_tensor *stand_in(inf_sched *sched, sched_split *split, inf_tensor *t)
{
    inf_tensor *owner = owner_copy(sched, split, t->view_src ? t->view_src : t);
    if (!owner || !t->view_src)
        return owner;
    inf_tensor *view = find_copy(sched, split, t);
    if (view)
        return view;
    view = inf_tensor_make(sched->ctx, t->type, INF_MAX_DIMS, t->ne, owner, t->view_offset);
    if (!view)
        return NULL;
    for (int d = 0; d < INF_MAX_DIMS; d++)
        view->nb[d] = t->nb[d];
    inf_tensor_set_name(view, "%.50s@%d", t->name, split->backend);
    return add_copy(sched, split, t, view) ? view : NULL;
}

/* Record a copy for every source of split's nodes that lives in another backend's memory. */
static bool make_copies(inf_sched *sched, sched_split *split, const inf_graph *graph)
{
    split->first_copy = sched->copies.count;
    for (int i = split->first_node; i < split->first_node + split->n_nodes; i++) {
        inf_tensor *node = inf_graph_node(graph, i);
        if (node->op == INF_OP_VIEW) /* reads nothing */
            continue;
        for (int s = 0; s < INF_MAX_SRC; s++) {
            inf_tensor *src = node->src[s];
            if (!src || backend_of(sched, src) == split->backend)
                continue;
            inf_tensor *copy = stand_in(sched, split, src);
            if (!copy || !SCHED_ARRAY_RESERVE(sched->rewires))
                return false;
            sched->rewires.items[sched->rewires.count++] = (sched_rewire){node, s, src, copy};
        }
    }
    return true;
}

/* Context bytes for every copy a graph of n_nodes could need (each source of each node, owner
 * and view), the planning graph and one graph per split. */
static size_t context_size(int n_leaves, int n_nodes, size_t *max_copies)
{
    *max_copies = 2 * INF_MAX_SRC * (size_t)n_nodes;
    return *max_copies * inf_tensor_overhead() +
           inf_graph_overhead((size_t)n_leaves + (size_t)n_nodes + *max_copies) +
           (size_t)n_nodes * (inf_graph_overhead(1) + sizeof(int) + 16) +
           inf_graph_overhead((size_t)n_nodes) + 4096;
}

/* The planning graph and the splits' own graphs. */
static bool build_graphs(inf_sched *sched, const inf_graph *graph, size_t max_copies)
{
    const int n_leaves = inf_graph_n_leaves(graph);
    sched->plan_graph = inf_graph_new(sched->ctx, (size_t)n_leaves + inf_graph_n_nodes(graph) +
                                                      max_copies + 1);
    if (!sched->plan_graph)
        return false;
    for (int i = 0; i < n_leaves; i++)
        if (inf_graph_push(sched->plan_graph, inf_graph_leaf(graph, i)) != GGTK_OK)
            return false;
    for (int s = 0; s < sched->splits.count; s++) {
        sched_split *split = &sched->splits.items[s];
        split->plan_first = inf_graph_n_nodes(sched->plan_graph);
        split->graph = inf_graph_new(sched->ctx, (size_t)split->n_nodes);
        split->node_index = inf_context_alloc(sched->ctx, (size_t)split->n_nodes * sizeof(int),
                                              16, "split node indices");
        if (!split->graph || !split->node_index)
            return false;
        for (int c = split->first_copy; c < split->first_copy + split->n_copies; c++)
            if (inf_graph_push(sched->plan_graph, sched->copies.items[c].copy) != GGTK_OK)
                return false;
        for (int i = split->first_node; i < split->first_node + split->n_nodes; i++) {
            inf_tensor *node = inf_graph_node(graph, i);
            if (inf_graph_push(sched->plan_graph, node) != GGTK_OK)
                return false;
            if (node->op == INF_OP_VIEW && backend_of(sched, node) != split->backend)
                continue; /* the allocator gives it its address; nothing runs it */
            split->node_index[inf_graph_n_nodes(split->graph)] = i;
            if (inf_graph_push(split->graph, node) != GGTK_OK)
                return false;
        }
    }
    return true;
}

ggtk_status sched_split_graph(inf_sched *sched, inf_graph *graph, ggtk_error *err)
{
    sched->splits.count = sched->copies.count = sched->rewires.count = 0;
    sched->plan_graph = NULL;
    inf_context_free(sched->ctx);
    size_t max_copies;
    sched->ctx = inf_context_new(context_size(inf_graph_n_leaves(graph), inf_graph_n_nodes(graph),
                                              &max_copies), true);
    bool ok = sched->ctx && cut_splits(sched, graph);
    for (int s = 0; ok && s < sched->splits.count; s++)
        ok = make_copies(sched, &sched->splits.items[s], graph);
    ok = ok && build_graphs(sched, graph, max_copies);
    if (!ok)
        return ggtk_error_set(err, GGTK_ERR_NOMEM, GGTK_NO_OFFSET,
                              "sched: out of memory splitting a graph of %d nodes",
                              inf_graph_n_nodes(graph));
    return GGTK_OK;
}

void sched_rewire_apply(inf_sched *sched)
{
    for (int r = 0; r < sched->rewires.count; r++)
        sched->rewires.items[r].node->src[sched->rewires.items[r].src] = sched->rewires.items[r].copy;
}

void sched_rewire_restore(inf_sched *sched)
{
    for (int r = 0; r < sched->rewires.count; r++)
        sched->rewires.items[r].node->src[sched->rewires.items[r].src] =
            sched->rewires.items[r].original;
}
