/* graph_internal.h - building a graph from a list the caller has already ordered (the scheduler
 * cuts one graph into per-backend graphs), inside libinfer only. */
#ifndef INF_GRAPH_INTERNAL_H
#define INF_GRAPH_INTERNAL_H

#include <ggtk/inf_graph.h>

/* Append `tensor` alone - a leaf when its op is INF_OP_NONE, else a node - without visiting its
 * sources (the caller lists them first, or they live outside this graph). A tensor already
 * listed is not listed again. GGTK_ERR_NOMEM when the graph is full. */
ggtk_status inf_graph_push(inf_graph *graph, inf_tensor *tensor);

#endif
