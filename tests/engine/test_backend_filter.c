/* test_backend_filter.c - inf_backend_compute_filtered(): the observer is called after the nodes
 * the filter accepts and after no other (without a filter, after every node). */
#include "infer_util.h"
#include "test.h"

/* The filter's promise: the observer sees the accepted nodes and no other. */
typedef struct seen {
    int calls;
    int last;
} seen;

static bool count_call(const inf_graph *graph, int node_index, void *user)
{
    (void)graph;
    seen *s = user;
    s->calls++;
    s->last = node_index;
    return true;
}

static bool only_mul_mat(const inf_tensor *node, void *user)
{
    (void)user;
    return node->op == INF_OP_MUL_MAT;
}

TEST(test_backend_filter_limits_the_observed_nodes)
{
    test_rng rng = {19};
    inf_context *ctx = data_context(4);
    inf_tensor *x = inf_tensor_new_2d(ctx, GGTK_TENSOR_F32, 8, 4);
    tensor_fill(x, &rng, -1, 1);
    inf_tensor *w = inf_tensor_new_2d(ctx, GGTK_TENSOR_F32, 8, 4);
    tensor_fill(w, &rng, -1, 1);
    inf_tensor *y = inf_mul_mat(ctx, w, inf_scale(ctx, x, 2.0f));
    inf_tensor *z = inf_add(ctx, y, y);
    inf_graph *g = inf_graph_new(ctx, 16);
    inf_backend *cpu = inf_backend_cpu_new(2);
    CHECK(z && g && cpu && inf_graph_expand(g, z, NULL) == GGTK_OK);
    seen all = {0}, some = {0};
    CHECK(inf_backend_compute_filtered(cpu, g, NULL, count_call, &all, NULL) == GGTK_OK);
    CHECK(inf_backend_compute_filtered(cpu, g, only_mul_mat, count_call, &some, NULL) == GGTK_OK);
    CHECK(all.calls == inf_graph_n_nodes(g) && all.calls == 3);
    CHECK(some.calls == 1 && inf_graph_node(g, some.last) == y);
    inf_backend_free(cpu);
    inf_context_free(ctx);
}
