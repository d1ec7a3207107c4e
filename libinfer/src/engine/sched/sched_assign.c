/* sched_assign.c - which backend computes each node of a graph.
 *
 * 1. Tensors with memory (weights, caches, nodes writing into a cache) belong to the backend of
 *    that memory.
 * 2. A node reading such a tensor runs on that tensor's backend if it supports the node: the
 *    weights decide where the work is, since moving activations is cheaper than moving weights.
 * 3. The remaining nodes take the backend of their neighbours in the node order: first only the
 *    preferred (non-fallback) backends spread, forward then backward, so that the nodes between
 *    two offloaded layers stay offloaded; then every backend spreads the same way.
 * 4. Anything left goes to the first backend, in order, that supports it.
 * Views are skipped by all of this: a view has no work and lives where its memory owner does.
 * Inputs without memory live where their first (non-view) consumer runs. */
#include <stdlib.h>
#include <string.h>

#include "sched_internal.h"
#include "engine/backend/backend_internal.h"

enum { UNASSIGNED = -1 };

bool sched_array_reserve(void **items, int *capacity, int count, size_t item_size)
{
    if (count < *capacity)
        return true;
    int grown_capacity = *capacity ? 2 * *capacity : 16;
    void *grown = realloc(*items, (size_t)grown_capacity * item_size);
    if (!grown)
        return false;
    *items = grown;
    *capacity = grown_capacity;
    return true;
}

static const inf_tensor *memory_owner(const inf_tensor *t)
{
    return t->view_src ? t->view_src : t;
}

int sched_memory_backend(const inf_sched *sched, const inf_tensor *t)
{
    const inf_tensor *owner = memory_owner(t);
    if (!owner->data)
        return UNASSIGNED;
    const inf_buffer *buffer = owner->buffer;
    for (int i = 0; buffer && i < sched->owners.count; i++)
        if (sched->owners.items[i].buffer == buffer)
            return sched->owners.items[i].backend;
    if (!buffer || buffer->host)
        return sched->n_backends - 1;
    for (int b = 0; b < sched->n_backends; b++)
        if (strcmp(inf_backend_name(sched->backends[b]), buffer->ops->name) == 0)
            return b;
    return -2;
}

/* Views are placed by their memory owner (step 1 or the last step), never by the rules for
 * work. */
static bool is_view(const inf_tensor *t)
{
    return t->view_src != NULL;
}

static int get(const inf_sched *sched, const inf_tensor *t)
{
    return tensor_map_get(&sched->backend_of, t, UNASSIGNED);
}

static bool supports(const inf_sched *sched, int backend, const inf_tensor *node)
{
    return inf_backend_supports(sched->backends[backend], node);
}

/* Step 1: the memory of leaves and of nodes that already have it. */
static ggtk_status assign_memory(inf_sched *sched, const inf_graph *graph, ggtk_error *err)
{
    const int n_leaves = inf_graph_n_leaves(graph), n_nodes = inf_graph_n_nodes(graph);
    for (int i = 0; i < n_leaves + n_nodes; i++) {
        const inf_tensor *t = i < n_leaves ? inf_graph_leaf(graph, i)
                                           : inf_graph_node(graph, i - n_leaves);
        const int b = sched_memory_backend(sched, t);
        if (b == -2)
            return ggtk_error_set(err, GGTK_ERR_USAGE, GGTK_NO_OFFSET,
                                  "sched: tensor '%s' lives in a %s buffer of none of the "
                                  "scheduler's backends", t->name, memory_owner(t)->buffer->ops->name);
        if (b >= 0 && !tensor_map_set(&sched->backend_of, t, b))
            return ggtk_error_set(err, GGTK_ERR_NOMEM, GGTK_NO_OFFSET, "sched: out of memory");
    }
    return GGTK_OK;
}

/* Step 2: a node goes where a source with memory of its own lives, if that backend can run it. */
static bool assign_by_weights(inf_sched *sched, const inf_graph *graph)
{
    for (int i = 0; i < inf_graph_n_nodes(graph); i++) {
        const inf_tensor *node = inf_graph_node(graph, i);
        if (is_view(node) || get(sched, node) != UNASSIGNED)
            continue;
        for (int s = 0; s < INF_MAX_SRC; s++) {
            const inf_tensor *src = node->src[s];
            const int b = src && memory_owner(src)->data ? get(sched, src) : UNASSIGNED;
            if (b >= 0 && supports(sched, b, node)) {
                if (!tensor_map_set(&sched->backend_of, node, b))
                    return false;
                break;
            }
        }
    }
    return true;
}

/* Step 3, one direction: unassigned nodes take the backend of the last assigned node before
 * them (in walk order) when it supports them. With `with_fallback` false the fallback does not
 * spread: a node of it ends the run. */
static bool spread(inf_sched *sched, const inf_graph *graph, bool backward, bool with_fallback)
{
    const int n = inf_graph_n_nodes(graph);
    int current = UNASSIGNED;
    for (int k = 0; k < n; k++) {
        const inf_tensor *node = inf_graph_node(graph, backward ? n - 1 - k : k);
        const int b = get(sched, node);
        /* A pure view does no work; a view that writes (into a cache) has its place already. */
        if (node->op == INF_OP_VIEW || (is_view(node) && b == UNASSIGNED))
            continue;
        if (b != UNASSIGNED) {
            current = !with_fallback && b == sched->n_backends - 1 ? UNASSIGNED : b;
        } else if (current != UNASSIGNED && supports(sched, current, node)) {
            if (!tensor_map_set(&sched->backend_of, node, current))
                return false;
        }
    }
    return true;
}

/* Step 4: the first backend that supports the node; an error naming it when none does. */
static ggtk_status assign_rest(inf_sched *sched, const inf_graph *graph, ggtk_error *err)
{
    for (int i = 0; i < inf_graph_n_nodes(graph); i++) {
        const inf_tensor *node = inf_graph_node(graph, i);
        if (is_view(node) || get(sched, node) != UNASSIGNED)
            continue;
        int b = 0;
        while (b < sched->n_backends && !supports(sched, b, node))
            b++;
        if (b == sched->n_backends)
            return ggtk_error_set(err, GGTK_ERR_UNSUPPORTED, GGTK_NO_OFFSET,
                                  "sched: no backend can compute node %d '%s' (%s of %s)", i,
                                  node->name, inf_op_name(node->op),
                                  node->src[0] ? node->src[0]->name : "no source");
        if (!tensor_map_set(&sched->backend_of, node, b))
            return ggtk_error_set(err, GGTK_ERR_NOMEM, GGTK_NO_OFFSET, "sched: out of memory");
    }
    return GGTK_OK;
}

/* Inputs without memory: where their first non-view consumer (reading them directly or through
 * views) runs; the fallback when only views read them. Then views: where their owner is. */
static bool assign_inputs_and_views(inf_sched *sched, const inf_graph *graph)
{
    for (int i = 0; i < inf_graph_n_nodes(graph); i++) {
        const inf_tensor *node = inf_graph_node(graph, i);
        for (int s = 0; s < INF_MAX_SRC && node->op != INF_OP_VIEW; s++) {
            const inf_tensor *owner = node->src[s] ? memory_owner(node->src[s]) : NULL;
            if (owner && owner->op == INF_OP_NONE && get(sched, owner) == UNASSIGNED &&
                !tensor_map_set(&sched->backend_of, owner, get(sched, node)))
                return false;
        }
    }
    for (int i = 0; i < inf_graph_n_leaves(graph); i++) {
        const inf_tensor *leaf = inf_graph_leaf(graph, i);
        if (get(sched, leaf) == UNASSIGNED &&
            !tensor_map_set(&sched->backend_of, leaf, sched->n_backends - 1))
            return false;
    }
    for (int i = 0; i < inf_graph_n_nodes(graph); i++) {
        const inf_tensor *node = inf_graph_node(graph, i);
        if (is_view(node) && get(sched, node) == UNASSIGNED &&
            !tensor_map_set(&sched->backend_of, node, get(sched, node->view_src)))
            return false;
    }
    return true;
}

/* Every node must be supported where it landed: only a node whose memory was given can land on
 * a backend that refuses it. */
static ggtk_status check_supported(const inf_sched *sched, const inf_graph *graph, ggtk_error *err)
{
    for (int i = 0; i < inf_graph_n_nodes(graph); i++) {
        const inf_tensor *node = inf_graph_node(graph, i);
        const int b = get(sched, node);
        if (!supports(sched, b, node))
            return ggtk_error_set(err, GGTK_ERR_UNSUPPORTED, GGTK_NO_OFFSET,
                                  "sched: node %d '%s' (%s) must run on %s, where its memory is, "
                                  "which cannot compute it", i, node->name, inf_op_name(node->op),
                                  inf_backend_name(sched->backends[b]));
    }
    return GGTK_OK;
}

ggtk_status sched_assign(inf_sched *sched, const inf_graph *graph, ggtk_error *err)
{
    tensor_map_clear(&sched->backend_of);
    ggtk_status st = assign_memory(sched, graph, err);
    if (st != GGTK_OK)
        return st;
    bool ok = assign_by_weights(sched, graph) && spread(sched, graph, false, false) &&
              spread(sched, graph, true, false) && spread(sched, graph, false, true) &&
              spread(sched, graph, true, true);
    if (!ok)
        return ggtk_error_set(err, GGTK_ERR_NOMEM, GGTK_NO_OFFSET, "sched: out of memory");
    st = assign_rest(sched, graph, err);
    if (st != GGTK_OK)
        return st;
    if (!assign_inputs_and_views(sched, graph))
        return ggtk_error_set(err, GGTK_ERR_NOMEM, GGTK_NO_OFFSET, "sched: out of memory");
    return check_supported(sched, graph, err);
}
