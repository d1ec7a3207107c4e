/* graph_plan.h - the planning half of the graph allocator: where each tensor of a graph lives
 * in the compute buffers, computed from liveness without touching memory. */
#ifndef INF_GRAPH_PLAN_H
#define INF_GRAPH_PLAN_H

#include <stddef.h>
#include <stdint.h>

#include <ggtk/inf_alloc.h>

/* Offset value of a tensor the plan does not place (it has memory, or is a view). */
#define PLAN_NONE SIZE_MAX

/* The compute buffers a plan fills and which one each tensor goes to. */
typedef struct plan_layout {
    int n_buffers;                            /* 1..INF_ALLOC_MAX_BUFFERS */
    size_t alignment[INF_ALLOC_MAX_BUFFERS];  /* per buffer, a power of two */
    inf_alloc_placement placement;            /* NULL: everything in buffer 0 */
    void *user;
} plan_layout;

typedef struct plan_release {
    int buffer;
    size_t offset;
    size_t size;
} plan_release;

typedef struct graph_plan {
    uint64_t signature;    /* hash of everything the plan was computed from */
    int n_leaves;
    int n_nodes;
    size_t *offsets;       /* [n_leaves + n_nodes]: leaves first, then nodes */
    int *buffers;          /* [n_leaves + n_nodes]: the buffer each placed tensor is in */
    int *release_start;    /* [n_nodes + 1]: releases after node i are [start[i], start[i+1]) */
    plan_release *releases;
    size_t buffer_sizes[INF_ALLOC_MAX_BUFFERS]; /* peak of each buffer */
    inf_alloc_stats stats;  /* buffer_size: the sum of buffer_sizes */
    const inf_tensor *misplaced; /* after GGTK_ERR_USAGE: the tensor placed outside the layout */
} graph_plan;

/* Whether `plan` was made for a graph equal to `graph` in everything that decides a plan: per
 * tensor its op, type, shape and strides, flags, whether it has memory, its buffer under
 * `layout`, and the graph positions of its sources and of its view source. Not compared: op
 * parameters and view offsets, which the plan does not read (the allocator applies view offsets
 * from the graph it is given). False as well when memory for the check runs out; planning again
 * then reports it. */
bool plan_matches(const graph_plan *plan, const inf_graph *graph, const plan_layout *layout);

/* Plan `graph` into `plan` (whose old contents are freed), each tensor in the buffer `layout`
 * gives it, offsets aligned to that buffer's alignment. GGTK_ERR_INVALID when a view's source
 * has no memory and is not in the graph; GGTK_ERR_USAGE when the placement names a buffer
 * outside the layout (plan->misplaced says which tensor); GGTK_ERR_NOMEM. */
ggtk_status plan_graph(const inf_graph *graph, const plan_layout *layout, graph_plan *plan);

void plan_free(graph_plan *plan);

#endif
