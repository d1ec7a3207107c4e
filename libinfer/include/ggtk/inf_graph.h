/* inf_graph.h - the computation graph: the operations needed for some output tensors, in an order
 * where every tensor comes after its sources.
 *
 * A graph is built by expanding from output tensors: their sources are visited depth-first and
 * every tensor is listed once. Tensors without an operation (INF_OP_NONE: weights, inputs, caches)
 * are leaves; every other tensor, views included, is a node. Nodes are executed in list order.
 *
 * The graph's memory comes from the context it is made in, so it lives as long as the context.
 * Errors: see <ggtk/error.h>; offsets are GGTK_NO_OFFSET.
 * Thread-safety: one thread at a time while building; read-only use from many threads is safe.
 */
#ifndef INF_GRAPH_H
#define INF_GRAPH_H

#include <ggtk/export.h>

#include <stdio.h>

#include <ggtk/inf_tensor.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct inf_graph inf_graph;

/* Context bytes a graph of up to `max_nodes` nodes and as many leaves takes (add it to the
 * context's size). */
GGTK_API size_t inf_graph_overhead(size_t max_nodes);

/* An empty graph with room for `max_nodes` nodes and `max_nodes` leaves, made in `ctx`. Returns
 * NULL (message in the context) when the context has no room. */
GGTK_API inf_graph *inf_graph_new(inf_context *ctx, size_t max_nodes);

/* Append `tensor` and all of its not-yet-listed ancestors, sources before consumers (for each
 * tensor: src[0], src[1], src[2], then view_src, then the tensor itself). May be called several
 * times; a later call's nodes run after an earlier call's (use this to order a cache write before
 * reads that do not depend on it through a source). Returns GGTK_ERR_NOMEM when the graph is full
 * (the graph then holds a prefix of the tensors and should be discarded), GGTK_ERR_INVALID for a
 * NULL tensor (usually a constructor that failed: see inf_context_error()). */
GGTK_API ggtk_status inf_graph_expand(inf_graph *graph, inf_tensor *tensor, ggtk_error *err);

/* Number of nodes / leaves. */
GGTK_API int inf_graph_n_nodes(const inf_graph *graph);
GGTK_API int inf_graph_n_leaves(const inf_graph *graph);

/* Node / leaf `index` (0 <= index < count; a negative index counts from the end, -1 is the
 * last). Returns NULL when out of range. */
GGTK_API inf_tensor *inf_graph_node(const inf_graph *graph, int index);
GGTK_API inf_tensor *inf_graph_leaf(const inf_graph *graph, int index);

/* Print one line per leaf and node (index, op, type, shape, name) to `out`, for debugging. */
GGTK_API void inf_graph_print(const inf_graph *graph, FILE *out);

#ifdef __cplusplus
}
#endif

#endif /* INF_GRAPH_H */
