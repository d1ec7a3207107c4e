/* inf_alloc.h - the graph allocator: plans and assigns the memory of a graph's intermediate
 * tensors in one compute buffer of the smallest size the plan can reach - or, for a graph split
 * across backends (<ggtk/inf_sched.h>), in one compute buffer per backend, planned in the same
 * walk with a free list per buffer.
 *
 * Planning walks the nodes in execution order. A tensor gets memory when it is produced and
 * gives it back when its last consumer has run (a view keeps the memory of its view_src alive
 * until the view's own last consumer has run); given-back blocks are merged with free neighbours
 * and reused best-fit. An element-wise operation (add, mul, scale, silu, swiglu, rms_norm, rope,
 * soft_max) writes in place into a source of the same type and layout whose last use it is.
 * Tensors that already have memory (weights, caches) are left alone; views never own memory.
 * Tensors flagged INF_TENSOR_INPUT or INF_TENSOR_OUTPUT, and leaves without memory, keep theirs
 * for the whole graph.
 *
 * Use: inf_graph_allocator_reserve() once with the largest graph (measure pass, no memory is
 * touched), then inf_graph_allocator_alloc() for every graph to compute. alloc() plans again only
 * when the graph's shape differs from the planned one, and allocates a buffer of exactly the
 * planned size when the current one is smaller.
 *
 * Errors: see <ggtk/error.h>; offsets are GGTK_NO_OFFSET.
 *
 * Thread-safety: one thread at a time per allocator.
 */
#ifndef INF_ALLOC_H
#define INF_ALLOC_H

#include <ggtk/export.h>

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <ggtk/inf_backend.h>
#include <ggtk/inf_graph.h>
#include <ggtk/error.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct inf_graph_allocator inf_graph_allocator;

enum {
    INF_ALLOC_MAX_BUFFERS = 8, /* compute buffers (backends) of one allocator */
};

/* An allocator whose compute buffers come from `backend` (which must outlive it), aligned to
 * inf_backend_alignment(). NULL when out of memory. */
GGTK_API inf_graph_allocator *inf_graph_allocator_new(inf_backend *backend);

/* Which compute buffer (0 .. n_backends - 1) tensor `tensor` goes to. Called while planning for
 * every tensor the plan places (no memory, not a view); must answer the same for the same tensor
 * each time. */
typedef int (*inf_alloc_placement)(const inf_tensor *tensor, void *user);

/* An allocator with one compute buffer per backend of `backends` (1..INF_ALLOC_MAX_BUFFERS; they
 * must outlive it), each aligned to its backend's alignment; `placement` says where each tensor
 * goes (NULL: all in buffer 0; `user` is passed to it). In place reuse happens only within one
 * buffer. With one backend and no placement it is inf_graph_allocator_new(). NULL when out of
 * memory or n_backends is out of range. A buffer no tensor is placed in is never allocated. */
GGTK_API inf_graph_allocator *inf_graph_allocator_new_multi(inf_backend *const *backends,
                                                            int n_backends,
                                                            inf_alloc_placement placement,
                                                            void *user);

/* Free the allocator and its compute buffer (tensors placed in it keep dangling pointers). */
GGTK_API void inf_graph_allocator_free(inf_graph_allocator *alloc);

/* Measure pass: plan `graph` and remember the plan and its buffer size, without allocating the
 * buffer or touching any tensor. GGTK_ERR_INVALID for a graph with a view whose source has no
 * memory and is not in the graph; GGTK_ERR_USAGE when a placement answers a buffer outside
 * 0 .. n_backends - 1 (naming the tensor); GGTK_ERR_NOMEM when out of memory. */
GGTK_API ggtk_status inf_graph_allocator_reserve(inf_graph_allocator *alloc, const inf_graph *graph,
                                                 ggtk_error *err);

/* Give every tensor of `graph` that needs memory its place: plan again when the graph's shape
 * differs from the last plan, (re)allocate the compute buffer when it is smaller than the plan,
 * then set data pointers (views from their sources). Errors as for reserve(), plus GGTK_ERR_NOMEM
 * when the buffer cannot be allocated. */
GGTK_API ggtk_status inf_graph_allocator_alloc(inf_graph_allocator *alloc, inf_graph *graph,
                                               ggtk_error *err);

/* Facts about the last plan. */
typedef struct inf_alloc_stats {
    size_t buffer_size;    /* bytes of the compute buffer the plan needs (its peak); with several
                              buffers the sum of their peaks (inf_graph_allocator_buffer_size) */
    size_t tensor_bytes;   /* bytes the planned tensors would take with no reuse at all */
    int n_allocated;       /* tensors given memory by the plan */
    int n_in_place;        /* of those, tensors that took over the memory of a source */
    int n_replans;         /* times alloc() had to plan again (reserve() not counted) */
} inf_alloc_stats;

/* Statistics of the last plan; all zero before the first. The reuse ratio is
 * tensor_bytes / buffer_size. */
GGTK_API inf_alloc_stats inf_graph_allocator_stats(const inf_graph_allocator *alloc);

/* The compute buffer (NULL before the first alloc()). Owned by the allocator. With several
 * buffers, buffer 0. */
GGTK_API inf_buffer *inf_graph_allocator_buffer(const inf_graph_allocator *alloc);

/* Compute buffer `index` (of the backends given to inf_graph_allocator_new_multi(); NULL before
 * the first alloc(), when no tensor is placed in it, or for an index out of range). */
GGTK_API inf_buffer *inf_graph_allocator_buffer_at(const inf_graph_allocator *alloc, int index);

/* Bytes the last plan needs in compute buffer `index` (its peak); 0 before the first plan or for
 * an index out of range. */
GGTK_API size_t inf_graph_allocator_buffer_size(const inf_graph_allocator *alloc, int index);

/* Debugging: fill with `pattern` every byte of the compute buffers that the plan gives back after
 * node `node_index` of the allocated graph has run. Called from an inf_node_observer, it proves no
 * live tensor is overwritten: a wrong plan then corrupts a result. GGTK_ERR_USAGE when `graph` is
 * not the graph last allocated or the index is out of range. */
GGTK_API ggtk_status inf_graph_allocator_poison_released(const inf_graph_allocator *alloc,
                                                         const inf_graph *graph, int node_index,
                                                         uint8_t pattern, ggtk_error *err);

#ifdef __cplusplus
}
#endif

#endif /* INF_ALLOC_H */
