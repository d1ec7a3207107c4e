/* cpu_backend.c - the CPU backend: checks a graph, sizes the shared work buffer once (the compute
 * plan), then runs every node inside one OpenMP parallel region with a barrier between nodes, so
 * threads are started once per graph rather than once per node. */
#include <limits.h>
#include <omp.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#include "engine/backend/backend_internal.h"
#include "cpu_internal.h"
#include "engine/tensor/tensor_internal.h"

typedef struct cpu_backend {
    int n_threads;
    char *work;
    size_t work_size;
} cpu_backend;

void cpu_fail(const cpu_params *p, const char *fmt, ...)
{
    int none = INT_MAX;
    if (!atomic_compare_exchange_strong(&p->failure->node, &none, p->node_index))
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(p->failure->message, sizeof p->failure->message, fmt, ap);
    va_end(ap);
}

static int thread_count(const cpu_backend *cpu)
{
    return cpu->n_threads > 0 ? cpu->n_threads : omp_get_max_threads();
}

static ggtk_status cpu_compute(inf_backend *backend, const inf_graph *graph,
                               inf_node_filter filter, inf_node_observer observer, void *user,
                               ggtk_error *err);

static bool cpu_supports(const inf_backend *backend, const inf_tensor *node)
{
    (void)backend;
    return (unsigned)node->op < INF_OP_COUNT && cpu_ops[node->op].supports(node);
}

/* The work buffer's bytes for `graph`: the other ops' scratch first, then from *mm_offset the
 * matrix products' (packed activations and panels), which those ops never overwrite. */
static size_t work_layout(const inf_backend *backend, const inf_graph *graph, size_t *mm_offset)
{
    int n_threads = thread_count(backend->impl);
    size_t other = 0, mm = 0;
    for (int i = 0; i < inf_graph_n_nodes(graph); i++) {
        const inf_tensor *node = inf_graph_node(graph, i);
        if ((unsigned)node->op < INF_OP_COUNT && cpu_ops[node->op].work_size) {
            size_t need = cpu_ops[node->op].work_size(node, n_threads);
            size_t *max = node->op == INF_OP_MUL_MAT ? &mm : &other;
            *max = need > *max ? need : *max;
        }
    }
    *mm_offset = (other + INF_DATA_ALIGNMENT - 1) / INF_DATA_ALIGNMENT * INF_DATA_ALIGNMENT;
    return mm > 0 ? *mm_offset + mm : other;
}

size_t inf_backend_cpu_work_size(const inf_backend *backend, const inf_graph *graph)
{
    size_t mm_offset;
    return backend->ops->compute == cpu_compute ? work_layout(backend, graph, &mm_offset) : 0;
}

/* Give views their memory from their sources and check that every tensor has memory and every
 * node a kernel. */
static ggtk_status prepare(inf_backend *backend, const inf_graph *graph, ggtk_error *err)
{
    for (int i = 0; i < inf_graph_n_leaves(graph); i++) {
        const inf_tensor *leaf = inf_graph_leaf(graph, i);
        if (!leaf->data)
            return ggtk_error_set(err, GGTK_ERR_USAGE, GGTK_NO_OFFSET,
                                  "cpu: leaf '%s' has no memory", leaf->name);
    }
    for (int i = 0; i < inf_graph_n_nodes(graph); i++) {
        inf_tensor *node = inf_graph_node(graph, i);
        if (!node->data && node->view_src && node->view_src->data) {
            node->data = (char *)node->view_src->data + node->view_offset;
            node->buffer = node->view_src->buffer;
        }
        if (!node->data)
            return ggtk_error_set(err, GGTK_ERR_USAGE, GGTK_NO_OFFSET,
                                  "cpu: node %d '%s' has no memory", i, node->name);
        if (!cpu_supports(backend, node))
            return ggtk_error_set(err, GGTK_ERR_UNSUPPORTED, GGTK_NO_OFFSET,
                                  "cpu: node %d '%s': %s of these types/layouts is not supported", i,
                                  node->name, inf_op_name(node->op));
    }
    return GGTK_OK;
}

static ggtk_status grow_work(inf_backend *backend, size_t size, ggtk_error *err)
{
    cpu_backend *cpu = backend->impl;
    if (size <= cpu->work_size)
        return GGTK_OK;
    free(cpu->work);
    cpu->work_size = 0;
    cpu->work = aligned_alloc(INF_DATA_ALIGNMENT, (size + INF_DATA_ALIGNMENT - 1) /
                                                      INF_DATA_ALIGNMENT * INF_DATA_ALIGNMENT);
    if (!cpu->work)
        return ggtk_error_set(err, GGTK_ERR_NOMEM, GGTK_NO_OFFSET,
                              "cpu: cannot allocate %zu bytes of work buffer", size);
    cpu->work_size = size;
    return GGTK_OK;
}

/* Run the nodes. Every thread walks the same list; after each node a barrier, then, for a
 * watched node, the observer (thread 0, the others waiting at a second barrier), then a check of
 * where the compute must stop. Failures record the node index, so a thread already inside the
 * next node cannot make its slower peers stop at a different one. */
static void run_nodes(cpu_backend *cpu, const inf_graph *graph, int n_threads, size_t mm_offset,
                      const inf_node_watch *watch, cpu_failure *failure)
{
    const int n_nodes = inf_graph_n_nodes(graph);
    cpu_packed_act packed_act = {NULL, NULL, NULL};
    atomic_int stop_after = INT_MAX;
    cpu_barrier_state barrier;
    atomic_llong next_item = 0;
    /* The team may be smaller than asked for; the barrier must count the threads that run. */
    int team = 0;
#pragma omp parallel num_threads(n_threads)
    {
#pragma omp single
        {
            team = omp_get_num_threads();
            cpu_barrier_init(&barrier, team);
        }
        cpu_params p = {.ith = omp_get_thread_num(), .nth = team, .work = cpu->work,
                        .work_size = cpu->work_size, .mm_work = cpu->work + mm_offset,
                        .packed_act = &packed_act, .failure = failure, .barrier = &barrier,
                        .next_item = &next_item};
        for (int i = 0; i < n_nodes; i++) {
            inf_tensor *node = inf_graph_node(graph, i);
            p.node_index = i;
            if (cpu_ops[node->op].compute) {
                cpu_ops[node->op].compute(&p, node);
                cpu_barrier(&p);
            }
            if (inf_node_watched(watch, node)) {
                if (p.ith == 0 && !watch->observer(graph, i, watch->user))
                    atomic_store(&stop_after, i);
                cpu_barrier(&p);
            }
            if (atomic_load(&failure->node) <= i || atomic_load(&stop_after) <= i)
                break;
        }
    }
}

static ggtk_status cpu_compute(inf_backend *backend, const inf_graph *graph,
                               inf_node_filter filter, inf_node_observer observer, void *user,
                               ggtk_error *err)
{
    cpu_backend *cpu = backend->impl;
    size_t mm_offset = 0;
    ggtk_status st = prepare(backend, graph, err);
    if (st == GGTK_OK)
        st = grow_work(backend, work_layout(backend, graph, &mm_offset), err);
    if (st != GGTK_OK)
        return st;
    cpu_failure failure = {.node = INT_MAX};
    const inf_node_watch watch = {filter, observer, user};
    run_nodes(cpu, graph, thread_count(cpu), mm_offset, &watch, &failure);
    if (atomic_load(&failure.node) != INT_MAX) {
        int node = atomic_load(&failure.node);
        return ggtk_error_set(err, GGTK_ERR_INVALID, GGTK_NO_OFFSET, "cpu: node %d '%.50s': %.170s",
                              node, inf_graph_node(graph, node)->name, failure.message);
    }
    return GGTK_OK;
}

static inf_buffer *cpu_alloc_buffer(inf_backend *backend, size_t size, ggtk_error *err)
{
    inf_buffer *buffer = inf_buffer_host_new(size, backend->ops->alignment);
    if (!buffer)
        ggtk_error_set(err, GGTK_ERR_NOMEM, GGTK_NO_OFFSET,
                       "cpu: out of memory allocating a %zu-byte buffer", size);
    return buffer;
}

static void cpu_release(inf_backend *backend)
{
    cpu_backend *cpu = backend->impl;
    free(cpu->work);
    free(cpu);
    free(backend);
}

static const inf_backend_ops cpu_backend_ops = {
    .name = "cpu",
    .alignment = INF_DATA_ALIGNMENT,
    .release = cpu_release,
    .alloc_buffer = cpu_alloc_buffer,
    .supports = cpu_supports,
    .compute = cpu_compute,
};

inf_backend *inf_backend_cpu_new(int n_threads)
{
    inf_backend *backend = calloc(1, sizeof *backend);
    cpu_backend *cpu = calloc(1, sizeof *cpu);
    if (!backend || !cpu) {
        free(backend);
        free(cpu);
        return NULL;
    }
    cpu->n_threads = n_threads;
    backend->ops = &cpu_backend_ops;
    backend->impl = cpu;
    return backend;
}

void inf_backend_cpu_set_threads(inf_backend *backend, int n_threads)
{
    if (backend->ops == &cpu_backend_ops)
        ((cpu_backend *)backend->impl)->n_threads = n_threads;
}
