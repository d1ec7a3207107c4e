/* graph.c - lists the operations needed for some outputs in dependency order (sources first),
 * splitting them into leaves (given data) and nodes (computed), each tensor listed once. */
#include <stdint.h>

#include <ggtk/inf_graph.h>
#include "engine/tensor/tensor_internal.h"
#include "graph_internal.h"

struct inf_graph {
    int max_nodes;
    int n_nodes;
    int n_leaves;
    inf_tensor **nodes;
    inf_tensor **leaves;
    /* Open-addressing set of the tensors already listed; twice the capacity keeps probes short. */
    size_t n_slots;
    const inf_tensor **slots;
};

static size_t slot_count(size_t max_nodes)
{
    return 4 * max_nodes + 1;
}

size_t inf_graph_overhead(size_t max_nodes)
{
    return sizeof(inf_graph) + 16 + 2 * max_nodes * sizeof(inf_tensor *) +
           slot_count(max_nodes) * sizeof(inf_tensor *) + 3 * 16;
}

inf_graph *inf_graph_new(inf_context *ctx, size_t max_nodes)
{
    if (max_nodes == 0 || max_nodes > INT32_MAX / 4) {
        inf_context_fail(ctx, "graph: %zu nodes (expected 1..%d)", max_nodes, INT32_MAX / 4);
        return NULL;
    }
    inf_graph *g = inf_context_alloc(ctx, sizeof *g, 16, "a graph");
    inf_tensor **nodes = inf_context_alloc(ctx, max_nodes * sizeof *nodes, 16, "graph nodes");
    inf_tensor **leaves = inf_context_alloc(ctx, max_nodes * sizeof *leaves, 16, "graph leaves");
    const inf_tensor **slots =
        inf_context_alloc(ctx, slot_count(max_nodes) * sizeof *slots, 16, "graph visit set");
    if (!g || !nodes || !leaves || !slots)
        return NULL;
    *g = (inf_graph){.max_nodes = (int)max_nodes, .nodes = nodes, .leaves = leaves,
                     .n_slots = slot_count(max_nodes), .slots = slots};
    memset(slots, 0, g->n_slots * sizeof *slots);
    return g;
}

/* Insert `t` into the visit set; false when it was already there. */
static bool mark_visited(inf_graph *g, const inf_tensor *t)
{
    size_t i = ((uintptr_t)t >> 4) % g->n_slots;
    while (g->slots[i]) {
        if (g->slots[i] == t)
            return false;
        i = (i + 1) % g->n_slots;
    }
    g->slots[i] = t;
    return true;
}

/* List t as a leaf or a node. */
static ggtk_status append(inf_graph *g, inf_tensor *t)
{
    if (t->op == INF_OP_NONE) {
        if (g->n_leaves == g->max_nodes)
            return GGTK_ERR_NOMEM;
        g->leaves[g->n_leaves++] = t;
    } else {
        if (g->n_nodes == g->max_nodes)
            return GGTK_ERR_NOMEM;
        g->nodes[g->n_nodes++] = t;
    }
    return GGTK_OK;
}

ggtk_status inf_graph_push(inf_graph *graph, inf_tensor *tensor)
{
    return mark_visited(graph, tensor) ? append(graph, tensor) : GGTK_OK;
}

/* Depth-first: sources, then the tensor. Recursion depth is the graph's longest chain of
 * dependencies, a few thousand at most for a transformer. */
static ggtk_status visit(inf_graph *g, inf_tensor *t)
{
    if (!mark_visited(g, t))
        return GGTK_OK;
    for (int i = 0; i < INF_MAX_SRC; i++) {
        if (t->src[i]) {
            ggtk_status st = visit(g, t->src[i]);
            if (st != GGTK_OK)
                return st;
        }
    }
    if (t->view_src) {
        ggtk_status st = visit(g, t->view_src);
        if (st != GGTK_OK)
            return st;
    }
    return append(g, t);
}

ggtk_status inf_graph_expand(inf_graph *graph, inf_tensor *tensor, ggtk_error *err)
{
    if (!tensor)
        return ggtk_error_set(err, GGTK_ERR_INVALID, GGTK_NO_OFFSET,
                              "graph: cannot expand a NULL tensor (a constructor failed?)");
    if (visit(graph, tensor) != GGTK_OK)
        return ggtk_error_set(err, GGTK_ERR_NOMEM, GGTK_NO_OFFSET,
                              "graph: more than %d nodes or leaves while expanding '%s'",
                              graph->max_nodes, tensor->name);
    return GGTK_OK;
}

int inf_graph_n_nodes(const inf_graph *graph)
{
    return graph->n_nodes;
}

int inf_graph_n_leaves(const inf_graph *graph)
{
    return graph->n_leaves;
}

static inf_tensor *pick(inf_tensor *const *list, int count, int index)
{
    if (index < 0)
        index += count;
    return index >= 0 && index < count ? list[index] : NULL;
}

inf_tensor *inf_graph_node(const inf_graph *graph, int index)
{
    return pick(graph->nodes, graph->n_nodes, index);
}

inf_tensor *inf_graph_leaf(const inf_graph *graph, int index)
{
    return pick(graph->leaves, graph->n_leaves, index);
}

static void print_tensor(FILE *out, const char *kind, int index, const inf_tensor *t)
{
    fprintf(out, "%s %4d %-9s %-5s [%5lld %5lld %5lld %5lld] %s\n", kind, index, inf_op_name(t->op),
            inf_type_name(t->type), (long long)t->ne[0], (long long)t->ne[1], (long long)t->ne[2],
            (long long)t->ne[3], t->name);
}

void inf_graph_print(const inf_graph *graph, FILE *out)
{
    for (int i = 0; i < graph->n_leaves; i++)
        print_tensor(out, "leaf", i, graph->leaves[i]);
    for (int i = 0; i < graph->n_nodes; i++)
        print_tensor(out, "node", i, graph->nodes[i]);
}
