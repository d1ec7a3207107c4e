/* sched.c - the public scheduler: backends and buffer owners, scheduling a graph (assign, split,
 * copy, plan), allocating it, computing it, and what it reports. */
#include <stdlib.h>
#include <string.h>

#include "sched_internal.h"

static int placement(const inf_tensor *tensor, void *user)
{
    const inf_sched *sched = user;
    return tensor_map_get(&sched->backend_of, tensor, sched->n_backends - 1);
}

inf_sched *inf_sched_new(inf_backend *const *backends, int n_backends, ggtk_error *err)
{
    if (n_backends < 1 || n_backends > INF_SCHED_MAX_BACKENDS) {
        ggtk_error_set(err, GGTK_ERR_USAGE, GGTK_NO_OFFSET,
                       "sched: %d backends (expected 1..%d)", n_backends, INF_SCHED_MAX_BACKENDS);
        return NULL;
    }
    for (int b = 0; b < n_backends; b++) {
        for (int a = 0; a < b && backends[b]; a++) {
            if (backends[a] == backends[b]) {
                ggtk_error_set(err, GGTK_ERR_USAGE, GGTK_NO_OFFSET,
                               "sched: backend %d is backend %d again", b, a);
                return NULL;
            }
        }
        if (!backends[b]) {
            ggtk_error_set(err, GGTK_ERR_USAGE, GGTK_NO_OFFSET, "sched: backend %d is NULL", b);
            return NULL;
        }
    }
    inf_sched *sched = calloc(1, sizeof *sched);
    if (sched) {
        memcpy(sched->backends, backends, (size_t)n_backends * sizeof *backends);
        sched->n_backends = n_backends;
        sched->poison = -1;
        sched->alloc = inf_graph_allocator_new_multi(backends, n_backends, placement, sched);
    }
    if (!sched || !sched->alloc) {
        free(sched);
        ggtk_error_set(err, GGTK_ERR_NOMEM, GGTK_NO_OFFSET, "sched: out of memory");
        return NULL;
    }
    return sched;
}

void inf_sched_free(inf_sched *sched)
{
    if (!sched)
        return;
    inf_graph_allocator_free(sched->alloc);
    tensor_map_release(&sched->backend_of);
    inf_context_free(sched->ctx);
    free(sched->owners.items);
    free(sched->splits.items);
    free(sched->copies.items);
    free(sched->rewires.items);
    free(sched->staging);
    free(sched);
}

ggtk_status inf_sched_set_buffer_backend(inf_sched *sched, const inf_buffer *buffer,
                                         int backend_index, ggtk_error *err)
{
    if (backend_index < 0 || backend_index >= sched->n_backends || !buffer)
        return ggtk_error_set(err, GGTK_ERR_USAGE, GGTK_NO_OFFSET,
                              "sched: buffer given to backend %d of %d", backend_index,
                              sched->n_backends);
    for (int i = 0; i < sched->owners.count; i++) {
        if (sched->owners.items[i].buffer == buffer) {
            sched->owners.items[i].backend = backend_index;
            return GGTK_OK;
        }
    }
    if (!SCHED_ARRAY_RESERVE(sched->owners))
        return ggtk_error_set(err, GGTK_ERR_NOMEM, GGTK_NO_OFFSET, "sched: out of memory");
    sched->owners.items[sched->owners.count++] = (sched_owner){buffer, backend_index};
    return GGTK_OK;
}

static bool in_compute_buffer(const inf_sched *sched, const inf_buffer *buffer)
{
    for (int b = 0; buffer && b < sched->n_backends; b++)
        if (buffer == inf_graph_allocator_buffer_at(sched->alloc, b))
            return true;
    return false;
}

/* Tensors placed by an earlier alloc of this scheduler are placed again: forget their memory so
 * that they are not taken for weights. */
static void forget_placements(const inf_sched *sched, inf_graph *graph)
{
    const int n_leaves = inf_graph_n_leaves(graph), n_nodes = inf_graph_n_nodes(graph);
    for (int i = 0; i < n_leaves + n_nodes; i++) {
        inf_tensor *t = i < n_leaves ? inf_graph_leaf(graph, i) : inf_graph_node(graph, i - n_leaves);
        if (in_compute_buffer(sched, t->buffer)) {
            t->data = NULL;
            t->buffer = NULL;
        }
    }
}

/* `err` gets the allocator's failure, prefixed. */
static ggtk_status wrap_alloc_error(ggtk_status st, const ggtk_error *inner, ggtk_error *err)
{
    return ggtk_error_set(err, st, GGTK_NO_OFFSET, "sched: %s", inner->message);
}

/* Assign, split, copy, then plan (reserve) or plan and place (alloc). */
static ggtk_status schedule(inf_sched *sched, inf_graph *graph, bool allocate, ggtk_error *err)
{
    sched->graph = NULL;
    sched->allocated = false;
    forget_placements(sched, graph);
    ggtk_status st = sched_assign(sched, graph, err);
    if (st == GGTK_OK)
        st = sched_split_graph(sched, graph, err);
    if (st != GGTK_OK)
        return st;
    ggtk_error inner;
    sched_rewire_apply(sched);
    st = allocate ? inf_graph_allocator_alloc(sched->alloc, sched->plan_graph, &inner)
                  : inf_graph_allocator_reserve(sched->alloc, sched->plan_graph, &inner);
    sched_rewire_restore(sched);
    if (st != GGTK_OK)
        return wrap_alloc_error(st, &inner, err);
    sched->graph = graph;
    sched->allocated = allocate;
    return GGTK_OK;
}

ggtk_status inf_sched_reserve(inf_sched *sched, inf_graph *graph, ggtk_error *err)
{
    return schedule(sched, graph, false, err);
}

ggtk_status inf_sched_alloc_graph(inf_sched *sched, inf_graph *graph, ggtk_error *err)
{
    return schedule(sched, graph, true, err);
}

ggtk_status inf_sched_compute(inf_sched *sched, inf_graph *graph, ggtk_error *err)
{
    return inf_sched_compute_filtered(sched, graph, NULL, NULL, NULL, err);
}

ggtk_status inf_sched_compute_filtered(inf_sched *sched, inf_graph *graph, inf_node_filter filter,
                                       inf_node_observer observer, void *user, ggtk_error *err)
{
    if (!sched->allocated || graph != sched->graph)
        return ggtk_error_set(err, GGTK_ERR_USAGE, GGTK_NO_OFFSET,
                              "sched: computing a graph that is not the one last allocated");
    return sched_run(sched, graph, filter, observer, user, err);
}

int inf_sched_node_backend(const inf_sched *sched, const inf_tensor *tensor)
{
    return sched->graph ? tensor_map_get(&sched->backend_of, tensor, -1) : -1;
}

inf_backend *inf_sched_backend(const inf_sched *sched, int index)
{
    return index >= 0 && index < sched->n_backends ? sched->backends[index] : NULL;
}

inf_sched_stats inf_sched_get_stats(const inf_sched *sched)
{
    inf_sched_stats stats = {.n_backends = sched->n_backends};
    if (!sched->graph)
        return stats;
    stats.n_splits = sched->splits.count;
    for (int s = 0; s < sched->splits.count; s++) {
        const sched_split *split = &sched->splits.items[s];
        stats.n_copies += split->n_transfers;
        stats.copy_bytes += split->copy_bytes;
        stats.n_nodes[split->backend] += split->n_nodes;
    }
    for (int b = 0; b < sched->n_backends; b++)
        stats.buffer_size[b] = inf_graph_allocator_buffer_size(sched->alloc, b);
    return stats;
}

ggtk_status inf_sched_get_split(const inf_sched *sched, int index, inf_sched_split *split,
                                ggtk_error *err)
{
    if (!sched->graph || index < 0 || index >= sched->splits.count)
        return ggtk_error_set(err, GGTK_ERR_USAGE, GGTK_NO_OFFSET,
                              "sched: split %d of %d", index,
                              sched->graph ? sched->splits.count : 0);
    const sched_split *s = &sched->splits.items[index];
    *split = (inf_sched_split){s->backend, s->first_node, s->n_nodes, s->n_transfers,
                               s->copy_bytes};
    return GGTK_OK;
}

void inf_sched_print(const inf_sched *sched, FILE *out)
{
    if (!sched->graph)
        return;
    for (int s = 0; s < sched->splits.count; s++) {
        const sched_split *split = &sched->splits.items[s];
        fprintf(out, "sched: split %d on backend %d (%s): nodes %d..%d ('%.40s' .. '%.40s'), %d "
                "copies in (%zu bytes)\n", s, split->backend,
                inf_backend_name(sched->backends[split->backend]), split->first_node,
                split->first_node + split->n_nodes - 1,
                inf_graph_node(sched->graph, split->first_node)->name,
                inf_graph_node(sched->graph, split->first_node + split->n_nodes - 1)->name,
                split->n_transfers, split->copy_bytes);
    }
    for (int b = 0; b < sched->n_backends; b++)
        fprintf(out, "sched: backend %d (%s): compute buffer %zu bytes (%.2f MiB)\n", b,
                inf_backend_name(sched->backends[b]), inf_graph_allocator_buffer_size(sched->alloc, b),
                (double)inf_graph_allocator_buffer_size(sched->alloc, b) / (1024.0 * 1024.0));
}

void inf_sched_set_poison(inf_sched *sched, int pattern)
{
    sched->poison = pattern >= 0 && pattern <= 255 ? pattern : -1;
}
