/* sched_compute.c - running the splits of an allocated graph in order: each split's copies are
 * moved into its backend's memory, then its backend computes its nodes, calling the caller's
 * observer with the caller's graph and node indices. */
#include <stdlib.h>
#include <string.h>

#include "sched_internal.h"

/* The observer of one split's compute, translating its node indices to the caller's graph. */
typedef struct split_watch {
    inf_sched *sched;
    const inf_graph *graph;     /* the caller's */
    const sched_split *split;
    inf_node_filter filter;
    inf_node_observer observer;
    void *user;
    bool stopped;
} split_watch;

static void poison_after(const inf_sched *sched, int plan_node)
{
    inf_graph_allocator_poison_released(sched->alloc, sched->plan_graph, plan_node,
                                        (uint8_t)sched->poison, NULL);
}

static bool watch_filter(const inf_tensor *node, void *user)
{
    const split_watch *w = user;
    return w->sched->poison >= 0 || !w->filter || w->filter(node, w->user);
}

/* The caller's observer first (it may read sources whose memory is given back after the node),
 * then the poisoning. */
static bool watch_node(const inf_graph *split_graph, int index, void *user)
{
    split_watch *w = user;
    const inf_tensor *node = inf_graph_node(split_graph, index);
    const int caller_index = w->split->node_index[index];
    if (w->observer && (!w->filter || w->filter(node, w->user)) &&
        !w->observer(w->graph, caller_index, w->user)) {
        w->stopped = true;
        return false;
    }
    if (w->sched->poison >= 0)
        poison_after(w->sched, w->split->plan_first + w->split->n_copies + caller_index -
                                   w->split->first_node);
    return true;
}

static bool in_host_memory(const inf_tensor *t)
{
    return !t->buffer || t->buffer->host;
}

/* Bytes of `src` (a memory owner) into `dst`, through host staging when neither is in host
 * memory. */
static ggtk_status transfer(inf_sched *sched, const inf_tensor *src, inf_tensor *dst,
                            ggtk_error *err)
{
    const size_t n = inf_tensor_nbytes(src);
    if (in_host_memory(dst))
        return inf_tensor_read(src, dst->data, 0, n, err);
    if (in_host_memory(src))
        return inf_tensor_write(dst, src->data, 0, n, err);
    if (n > sched->staging_size) {
        free(sched->staging);
        sched->staging_size = 0;
        sched->staging = malloc(n);
        if (!sched->staging)
            return ggtk_error_set(err, GGTK_ERR_NOMEM, GGTK_NO_OFFSET,
                                  "sched: out of memory for %zu bytes of copy staging", n);
        sched->staging_size = n;
    }
    ggtk_status st = inf_tensor_read(src, sched->staging, 0, n, err);
    return st == GGTK_OK ? inf_tensor_write(dst, sched->staging, 0, n, err) : st;
}

/* Move split's inputs into its backend's memory (recreated views need nothing). */
static ggtk_status copy_inputs(inf_sched *sched, const sched_split *split, ggtk_error *err)
{
    for (int c = split->first_copy; c < split->first_copy + split->n_copies; c++) {
        const sched_copy *copy = &sched->copies.items[c];
        if (copy->original->view_src)
            continue;
        ggtk_status st = transfer(sched, copy->original, copy->copy, err);
        if (st != GGTK_OK)
            return st;
    }
    for (int c = 0; sched->poison >= 0 && c < split->n_copies; c++)
        poison_after(sched, split->plan_first + c);
    return GGTK_OK;
}

static ggtk_status run_split(inf_sched *sched, int index, split_watch *watch, ggtk_error *err)
{
    const sched_split *split = &sched->splits.items[index];
    inf_backend *backend = sched->backends[split->backend];
    ggtk_error inner;
    ggtk_status st = copy_inputs(sched, split, &inner);
    if (st == GGTK_OK) {
        watch->split = split;
        const bool watching = watch->observer || sched->poison >= 0;
        st = inf_backend_compute_filtered(backend, split->graph, watching ? watch_filter : NULL,
                                          watching ? watch_node : NULL, watch, &inner);
    }
    if (st != GGTK_OK)
        return ggtk_error_set(err, st, GGTK_NO_OFFSET, "sched: split %d on %s: %s", index,
                              inf_backend_name(backend), inner.message);
    return GGTK_OK;
}

ggtk_status sched_run(inf_sched *sched, inf_graph *graph, inf_node_filter filter,
                      inf_node_observer observer, void *user, ggtk_error *err)
{
    split_watch watch = {.sched = sched, .graph = graph, .filter = filter, .observer = observer,
                         .user = user};
    sched_rewire_apply(sched);
    ggtk_status st = GGTK_OK;
    for (int s = 0; s < sched->splits.count && st == GGTK_OK && !watch.stopped; s++)
        st = run_split(sched, s, &watch, err);
    sched_rewire_restore(sched);
    return st;
}
