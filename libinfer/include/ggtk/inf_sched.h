/* inf_sched.h - the graph scheduler: one graph computed across several backends (partial
 * offload: some layers on a GPU, the rest on the CPU).
 *
 * The scheduler is given backends in order of preference; the last one is the fallback, which
 * must read host memory and should compute every op (the CPU). For each graph it
 *  1. assigns every node to a backend: a node whose memory is already given (a KV-cache write)
 *     runs where that memory is; otherwise a node goes where a source with memory of its own (a
 *     weight, a cache) lives; the others follow their neighbours in the node order (preferred
 *     backends spread first, forward then backward, then the fallback); a backend whose
 *     inf_backend_supports() refuses a node never gets it - the node falls back to the first
 *     backend, in order, that supports it. Views live where their source's memory is. A graph
 *     input without memory lives on the backend of its first consumer.
 *  2. cuts the node list into splits, runs of consecutive nodes on one backend;
 *  3. gives each split a copy, in its backend's memory, of every tensor it reads that lives in
 *     another backend's memory (a view is recreated over a copy of its source's memory), copied
 *     when the split starts;
 *  4. plans every backend's intermediate tensors, copies included, in that backend's own compute
 *     buffer with one graph allocator (inf_graph_allocator_new_multi).
 *
 * Which backend's memory a buffer is: the buffer's owner declared with
 * inf_sched_set_buffer_backend(); otherwise a host buffer (and context memory) is the fallback's
 * and a device buffer belongs to the first backend whose name equals the buffer kind's name
 * ("cuda"). Weights to be computed on a backend must be in its memory: put them in a buffer of
 * inf_backend_alloc_buffer() (or declare a host buffer as that backend's when it reads host
 * memory).
 *
 * The caller's graph is not changed, except that its tensors get memory: while a split computes,
 * its nodes' sources that cross a boundary point to their copies, and they are restored before
 * inf_sched_compute() returns. Tensors the scheduler placed get new places on every alloc.
 *
 * Use: inf_sched_new(); declare buffers; inf_sched_reserve() with the largest graph (measure
 * pass); then for each graph inf_sched_alloc_graph(), write the inputs (inf_tensor_write),
 * inf_sched_compute(), read the outputs (inf_tensor_read).
 *
 * Errors: see <ggtk/error.h>; offsets are GGTK_NO_OFFSET; messages start with "sched: ".
 * Thread-safety: one thread at a time per scheduler; its backends must not be used by another
 * thread while it computes.
 */
#ifndef INF_SCHED_H
#define INF_SCHED_H

#include <ggtk/export.h>

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <ggtk/error.h>
#include <ggtk/inf_alloc.h>
#include <ggtk/inf_backend.h>
#include <ggtk/inf_graph.h>

#ifdef __cplusplus
extern "C" {
#endif

enum {
    INF_SCHED_MAX_BACKENDS = INF_ALLOC_MAX_BUFFERS, /* backends of one scheduler */
};

typedef struct inf_sched inf_sched;

/* A scheduler over `backends[0 .. n_backends - 1]` in order of preference, the last one the
 * fallback. The backends are borrowed (they must outlive the scheduler) and must be distinct.
 * NULL on error: GGTK_ERR_USAGE for n_backends outside 1..INF_SCHED_MAX_BACKENDS or a NULL or
 * repeated backend, GGTK_ERR_NOMEM. */
GGTK_API inf_sched *inf_sched_new(inf_backend *const *backends, int n_backends, ggtk_error *err);

/* Free the scheduler, its compute buffers and copies (tensors placed in them keep dangling
 * pointers). NULL allowed. */
GGTK_API void inf_sched_free(inf_sched *sched);

/* Declare `buffer` (weights, a KV cache) to be the memory of backend `backend_index`: tensors in
 * it belong to that backend, and nodes reading them as weights run there. A later call for the
 * same buffer replaces the earlier. The buffer is not owned; it must stay valid while graphs
 * using it are scheduled. GGTK_ERR_USAGE for an index out of range, GGTK_ERR_NOMEM. */
GGTK_API ggtk_status inf_sched_set_buffer_backend(inf_sched *sched, const inf_buffer *buffer,
                                                  int backend_index, ggtk_error *err);

/* Measure pass: schedule `graph` and plan every backend's compute buffer, without allocating
 * them or giving any tensor memory. Errors: GGTK_ERR_UNSUPPORTED for a node no backend can
 * compute or one that must run on a backend that refuses it (the message names the node, its
 * op and the backends), GGTK_ERR_USAGE for a tensor in device memory of no backend,
 * GGTK_ERR_INVALID for a view of a tensor without memory outside the graph, GGTK_ERR_NOMEM. */
GGTK_API ggtk_status inf_sched_reserve(inf_sched *sched, inf_graph *graph, ggtk_error *err);

/* Schedule `graph` and give every tensor that needs memory its place: each backend's compute
 * buffer is (re)allocated when the plan needs more than it has (the allocator plans again only
 * when the graph differs in shape or placement). The graph is the one the next compute runs.
 * Errors as for inf_sched_reserve(), plus GGTK_ERR_NOMEM naming the backend whose buffer could
 * not be allocated. */
GGTK_API ggtk_status inf_sched_alloc_graph(inf_sched *sched, inf_graph *graph, ggtk_error *err);

/* Compute the graph of the last inf_sched_alloc_graph(): the splits in order, each split's
 * copies first. `graph` must be that graph (GGTK_ERR_USAGE otherwise). A backend's failure is
 * returned with its message prefixed by "sched: split S on NAME: "; splits before it have run. */
GGTK_API ggtk_status inf_sched_compute(inf_sched *sched, inf_graph *graph, ggtk_error *err);

/* inf_sched_compute() calling `observer` after the nodes `filter` accepts (filter NULL: every
 * node; observer NULL: none), as inf_backend_compute_filtered() does: each split's backend calls
 * them with the caller's `graph` and the node's index in it (a view into another backend's
 * memory, which no backend needs to run, is not seen). An observer returning false stops the
 * compute after that node (later splits do not run; GGTK_OK is returned). */
GGTK_API ggtk_status inf_sched_compute_filtered(inf_sched *sched, inf_graph *graph,
                                                inf_node_filter filter,
                                                inf_node_observer observer, void *user,
                                                ggtk_error *err);

/* Index (0 .. n_backends - 1) of the backend node or leaf `tensor` of the last scheduled graph is
 * assigned to (for a view or a leaf: where its memory is); -1 for a tensor not in that graph. */
GGTK_API int inf_sched_node_backend(const inf_sched *sched, const inf_tensor *tensor);

/* Backend `index` of the scheduler (NULL out of range). */
GGTK_API inf_backend *inf_sched_backend(const inf_sched *sched, int index);

/* Facts about the last scheduled graph. */
typedef struct inf_sched_stats {
    int n_backends;
    int n_splits;        /* runs of consecutive nodes on one backend */
    int n_copies;        /* tensors copied between backends in one compute */
    size_t copy_bytes;   /* bytes those copies move in one compute */
    int n_nodes[INF_SCHED_MAX_BACKENDS];        /* nodes (views included) per backend */
    size_t buffer_size[INF_SCHED_MAX_BACKENDS]; /* planned compute buffer bytes per backend */
} inf_sched_stats;

/* Statistics of the last scheduled graph (all zero but n_backends before the first). */
GGTK_API inf_sched_stats inf_sched_get_stats(const inf_sched *sched);

/* One split of the last scheduled graph (for --verbose output and tests). */
typedef struct inf_sched_split {
    int backend;      /* index of its backend */
    int first_node;   /* its nodes are [first_node, first_node + n_nodes) of the graph */
    int n_nodes;
    int n_copies;     /* tensors copied in when it starts */
    size_t copy_bytes;
} inf_sched_split;

/* Split `index` (0 .. n_splits - 1) of the last scheduled graph; GGTK_ERR_USAGE out of range. */
GGTK_API ggtk_status inf_sched_get_split(const inf_sched *sched, int index, inf_sched_split *split,
                                         ggtk_error *err);

/* Print one line per split (backend, node range with first and last node names, copies) and one
 * per backend's compute buffer, for --verbose output. The last scheduled graph must still exist
 * (its node names are read). */
GGTK_API void inf_sched_print(const inf_sched *sched, FILE *out);

/* Debugging: with `pattern` 0..255, compute fills with it every byte of the compute buffers the
 * plan gives back, right after the node (or copy) after which it is given back, so that a plan
 * overwriting a live tensor changes results; -1 turns it off. The filter given to
 * inf_sched_compute_filtered() then still limits the observer's calls, not the poisoning. */
GGTK_API void inf_sched_set_poison(inf_sched *sched, int pattern);

#ifdef __cplusplus
}
#endif

#endif /* INF_SCHED_H */
