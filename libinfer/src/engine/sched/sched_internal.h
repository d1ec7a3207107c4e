/* sched_internal.h - the scheduler's state, shared by its files: assignment of tensors to
 * backends (sched_assign.c), splits and copies (sched_split.c), compute (sched_compute.c) and
 * the public calls (sched.c). */
#ifndef INF_SCHED_INTERNAL_H
#define INF_SCHED_INTERNAL_H

#include <ggtk/inf_sched.h>

#include "tensor_map.h"

/* A tensor of another backend's memory a split reads, and its stand-in in the split's backend:
 * for a memory owner, a new tensor (op CONT, src[0] the owner) the bytes are copied into at the
 * split start; for a view, a view of the same shape over the owner's copy (nothing to copy). */
typedef struct sched_copy {
    inf_tensor *original;
    inf_tensor *copy;
} sched_copy;

/* One source of a node that reads a copy while the graph is allocated and computed. */
typedef struct sched_rewire {
    inf_tensor *node;
    int src;
    inf_tensor *original;
    inf_tensor *copy;
} sched_rewire;

typedef struct sched_split {
    int backend;
    int first_node, n_nodes;  /* range of the caller's graph */
    int first_copy, n_copies; /* range of sched->copies (owners and recreated views) */
    int n_transfers;          /* of those, owners whose bytes are copied */
    size_t copy_bytes;
    int plan_first;           /* position of its first copy in the planning graph's nodes */
    inf_graph *graph;         /* its nodes, for its backend, less the views into the memory of
                                 other backends (no work, and a device backend refuses them) */
    int *node_index;          /* [graph's nodes]: each one's index in the caller's graph */
} sched_split;

/* A buffer declared to be a backend's memory. */
typedef struct sched_owner {
    const inf_buffer *buffer;
    int backend;
} sched_owner;

/* A dynamic array of T: items, count, capacity. */
#define SCHED_ARRAY(T) struct { T *items; int count; int capacity; }

struct inf_sched {
    inf_backend *backends[INF_SCHED_MAX_BACKENDS];
    int n_backends;
    SCHED_ARRAY(sched_owner) owners;
    inf_graph_allocator *alloc;
    tensor_map backend_of;      /* every leaf, node and copy of the scheduled graph */
    inf_graph *graph;           /* the caller's graph last scheduled */
    bool allocated;             /* ... and given memory by inf_sched_alloc_graph() */
    inf_context *ctx;           /* copies, recreated views, split and planning graphs */
    inf_graph *plan_graph;      /* leaves, then per split its copies and nodes */
    SCHED_ARRAY(sched_split) splits;
    SCHED_ARRAY(sched_copy) copies;
    SCHED_ARRAY(sched_rewire) rewires;
    char *staging;              /* host memory for copies between two device buffers */
    size_t staging_size;
    int poison;                 /* -1: off */
};

/* Grow a SCHED_ARRAY to hold one more item; false when out of memory. */
#define SCHED_ARRAY_RESERVE(a) sched_array_reserve((void **)&(a).items, &(a).capacity, (a).count, sizeof *(a).items)
bool sched_array_reserve(void **items, int *capacity, int count, size_t item_size);

/* The backend whose memory `t` (or, for a view, its memory owner) is in; -1 when it has no
 * memory, -2 when it is a device buffer of no backend of the scheduler. */
int sched_memory_backend(const inf_sched *sched, const inf_tensor *t);

/* Assign every leaf and node of `graph` to a backend (sched->backend_of). GGTK_ERR_UNSUPPORTED
 * / GGTK_ERR_USAGE / GGTK_ERR_NOMEM with `err` naming the tensor. */
ggtk_status sched_assign(inf_sched *sched, const inf_graph *graph, ggtk_error *err);

/* Cut the assigned graph into splits, make each split's copies and the planning graph (in a new
 * sched->ctx). GGTK_ERR_NOMEM. */
ggtk_status sched_split_graph(inf_sched *sched, inf_graph *graph, ggtk_error *err);

/* Point the rewired sources at their copies / back at the originals. */
void sched_rewire_apply(inf_sched *sched);
void sched_rewire_restore(inf_sched *sched);

/* Run the splits of the allocated graph (sched_compute.c). */
ggtk_status sched_run(inf_sched *sched, inf_graph *graph, inf_node_filter filter,
                      inf_node_observer observer, void *user, ggtk_error *err);

#endif
