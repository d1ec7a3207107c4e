/* graph_plan.h - the planning half of the graph allocator: where each tensor of a graph lives
 * in the compute buffer, computed from liveness without touching memory. */
#ifndef INF_GRAPH_PLAN_H
#define INF_GRAPH_PLAN_H

#include <stddef.h>
#include <stdint.h>

#include <ggtk/inf_alloc.h>

/* Offset value of a tensor the plan does not place (it has memory, or is a view). */
#define PLAN_NONE SIZE_MAX

typedef struct plan_release {
    size_t offset;
    size_t size;
} plan_release;

typedef struct graph_plan {
    uint64_t signature;    /* hash of everything the plan was computed from */
    int n_leaves;
    int n_nodes;
    size_t *offsets;       /* [n_leaves + n_nodes]: leaves first, then nodes */
    int *release_start;    /* [n_nodes + 1]: releases after node i are [start[i], start[i+1]) */
    plan_release *releases;
    inf_alloc_stats stats;
} graph_plan;

/* Whether `plan` was made for a graph equal to `graph` in everything that decides a plan: per
 * tensor its op, type, shape and strides, flags, whether it has memory, and the graph positions
 * of its sources and of its view source. Not compared: op parameters and view offsets, which
 * the plan does not read (the allocator applies view offsets from the graph it is given). False
 * as well when memory for the check runs out; planning again then reports it. */
bool plan_matches(const graph_plan *plan, const inf_graph *graph);

/* Plan `graph` with offsets aligned to `alignment` into `plan` (whose old contents are freed).
 * GGTK_ERR_INVALID when a view's source has no memory and is not in the graph; GGTK_ERR_NOMEM. */
ggtk_status plan_graph(const inf_graph *graph, size_t alignment, graph_plan *plan);

void plan_free(graph_plan *plan);

#endif
