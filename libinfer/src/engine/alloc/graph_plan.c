/* graph_plan.c - liveness planning of a graph's compute buffers.
 *
 * Every tensor the plan places goes to one buffer of the layout (one per backend when a graph is
 * split across backends); each buffer has its own free blocks, and the one walk below serves them
 * all. Walk the nodes in execution order. A node that needs memory first tries to take over a source
 * whose last use it is (in place), else gets a best-fit block. Then each source whose consumers
 * have all run gives its block back - for a view, the block of the tensor it looks into, once
 * that tensor has no consumers and no live views left. Inputs, outputs and leaves without memory
 * are placed first and never given back. */
#include "graph_plan.h"

#include <stdlib.h>
#include <string.h>

#include "free_blocks.h"
#include "engine/tensor/tensor_internal.h"

/* Per-tensor bookkeeping of one planning run. */
typedef struct tensor_state {
    const inf_tensor *tensor;
    int consumers;   /* nodes (views included) still to run that read it */
    int live_views;  /* views of it whose consumers have not all run */
    bool ours;       /* the plan placed it (and so may give it back) */
    bool handed_on;  /* its block was taken over by an in-place consumer */
    int buffer;      /* the layout's buffer it goes to */
    size_t offset;
    size_t size;
} tensor_state;

typedef struct planner {
    const inf_graph *graph;
    int n_leaves;
    int count;
    tensor_state *states;
    int *slots;          /* open-addressing map tensor -> state index, -1 empty */
    int n_slots;
    const plan_layout *layout;
    free_blocks blocks[INF_ALLOC_MAX_BUFFERS];
    plan_release *releases;
    int n_releases;
    int cap_releases;
    graph_plan *plan;
} planner;

static inf_tensor *tensor_at(const inf_graph *graph, int n_leaves, int index)
{
    return index < n_leaves ? inf_graph_leaf(graph, index) : inf_graph_node(graph, index - n_leaves);
}

static size_t slot_of(const planner *pl, const inf_tensor *t)
{
    return (size_t)(((uintptr_t)t >> 4) * 0x9E3779B97F4A7C15ULL % (uint64_t)pl->n_slots);
}

static tensor_state *state_of(const planner *pl, const inf_tensor *t)
{
    for (size_t i = slot_of(pl, t);; i = (i + 1) % (size_t)pl->n_slots) {
        if (pl->slots[i] < 0)
            return NULL;
        if (pl->states[pl->slots[i]].tensor == t)
            return &pl->states[pl->slots[i]];
    }
}

static void add_state(planner *pl, int index, const inf_tensor *t)
{
    size_t i = slot_of(pl, t);
    while (pl->slots[i] >= 0)
        i = (i + 1) % (size_t)pl->n_slots;
    pl->slots[i] = index;
    pl->states[index] = (tensor_state){.tensor = t, .offset = PLAN_NONE};
}

/* Graph position (leaves first, then nodes) of t, or -1 for NULL or a tensor not in the graph. */
static int64_t position_of(const planner *pl, const inf_tensor *t)
{
    const tensor_state *st = t ? state_of(pl, t) : NULL;
    return st ? st - pl->states : -1;
}

/* FNV-1a over every field the planner reads. The wiring goes in as graph positions, not
 * addresses, so that the same graph rebuilt in a new context keeps its plan. */
static uint64_t signature_of(const planner *pl)
{
    uint64_t h = 0xcbf29ce484222325ULL;
#define MIX(v)                                                                                 \
    do {                                                                                       \
        uint64_t mix_v = (uint64_t)(v);                                                        \
        for (int mix_i = 0; mix_i < 8; mix_i++, mix_v >>= 8)                                   \
            h = (h ^ (mix_v & 0xff)) * 0x100000001b3ULL;                                       \
    } while (0)
    MIX(pl->count);
    MIX(pl->n_leaves);
    for (int i = 0; i < pl->count; i++) {
        const inf_tensor *t = pl->states[i].tensor;
        MIX(t->op);
        MIX(t->type);
        for (int d = 0; d < INF_MAX_DIMS; d++) {
            MIX(t->ne[d]);
            MIX(t->nb[d]);
        }
        MIX(t->flags);
        MIX(pl->states[i].buffer);
        MIX(t->data != NULL && (!t->view_src || t->view_src->data != NULL));
        MIX(position_of(pl, t->view_src));
        for (int s = 0; s < INF_MAX_SRC; s++)
            MIX(position_of(pl, t->src[s]));
    }
#undef MIX
    return h;
}

/* Whether the plan must find memory for t: it has none and owns its memory (not a view). */
static bool needs_block(const inf_tensor *t)
{
    return !t->data && !t->view_src;
}

static bool place(planner *pl, tensor_state *st)
{
    free_blocks *fb = &pl->blocks[st->buffer];
    st->size = inf_tensor_nbytes(st->tensor);
    if (!free_blocks_take(fb, st->size, &st->offset))
        return false;
    st->ours = true;
    pl->plan->stats.n_allocated++;
    pl->plan->stats.tensor_bytes += free_blocks_round(fb, st->size);
    return true;
}

static bool pinned(const inf_tensor *t)
{
    return (t->flags & (INF_TENSOR_INPUT | INF_TENSOR_OUTPUT)) != 0 || t->op == INF_OP_NONE;
}

/* Operations that read element k of a same-shaped source before writing element k (or a whole
 * row before writing that row), so the result may overwrite the source. Decided by the op alone:
 * a rule that read op_params would have to add them to signature_of. */
static bool op_allows_in_place(inf_op op)
{
    switch (op) {
    case INF_OP_ADD: case INF_OP_MUL: case INF_OP_SCALE: case INF_OP_SILU: case INF_OP_SWIGLU:
    case INF_OP_GELU: case INF_OP_GEGLU: case INF_OP_SOFTCAP: case INF_OP_RMS_NORM: case INF_OP_ROPE: case INF_OP_SOFT_MAX:
        return true;
    default:
        return false;
    }
}

/* A source of `node` (whose state is `node_st`) whose block the node may take over, or NULL. */
static tensor_state *in_place_source(planner *pl, const tensor_state *node_st)
{
    const inf_tensor *node = node_st->tensor;
    if (!op_allows_in_place(node->op))
        return NULL;
    for (int s = 0; s < INF_MAX_SRC; s++) {
        const inf_tensor *src = node->src[s];
        tensor_state *st = src ? state_of(pl, src) : NULL;
        if (!st || !st->ours || st->handed_on || pinned(src) || src->view_src ||
            st->buffer != node_st->buffer ||
            st->consumers != 1 || st->live_views != 0 || src->type != node->type ||
            !inf_tensor_same_shape(src, node) || !inf_tensor_is_contiguous(src) ||
            inf_tensor_nbytes(src) != inf_tensor_nbytes(node))
            continue;
        return st;
    }
    return NULL;
}

static bool record_release(planner *pl, int buffer, size_t offset, size_t size)
{
    if (pl->n_releases == pl->cap_releases) {
        int cap = pl->cap_releases ? 2 * pl->cap_releases : 64;
        plan_release *grown = realloc(pl->releases, (size_t)cap * sizeof *grown);
        if (!grown)
            return false;
        pl->releases = grown;
        pl->cap_releases = cap;
    }
    pl->releases[pl->n_releases++] = (plan_release){buffer, offset, size};
    return free_blocks_give(&pl->blocks[buffer], offset, size);
}

/* Give back t's block if nothing needs it any more. */
static bool release_if_dead(planner *pl, tensor_state *st)
{
    if (!st || st->consumers > 0 || st->live_views > 0 || !st->ours || st->handed_on ||
        pinned(st->tensor))
        return true;
    st->handed_on = true; /* given back: never twice */
    return record_release(pl, st->buffer, st->offset,
                          free_blocks_round(&pl->blocks[st->buffer], st->size));
}

/* After `node` ran: one consumer fewer for each source; dead views free their view source. */
static bool after_node(planner *pl, const inf_tensor *node)
{
    for (int s = 0; s < INF_MAX_SRC; s++) {
        tensor_state *st = node->src[s] ? state_of(pl, node->src[s]) : NULL;
        if (!st)
            continue;
        st->consumers--;
        if (st->consumers == 0 && st->live_views == 0 && st->tensor->view_src) {
            tensor_state *owner = state_of(pl, st->tensor->view_src);
            if (owner) {
                owner->live_views--;
                if (!release_if_dead(pl, owner))
                    return false;
            }
        }
        if (!release_if_dead(pl, st))
            return false;
    }
    return true;
}

static void count_uses(planner *pl)
{
    for (int i = pl->n_leaves; i < pl->count; i++) {
        const inf_tensor *t = pl->states[i].tensor;
        for (int s = 0; s < INF_MAX_SRC; s++) {
            tensor_state *st = t->src[s] ? state_of(pl, t->src[s]) : NULL;
            if (st)
                st->consumers++;
        }
        tensor_state *owner = t->view_src ? state_of(pl, t->view_src) : NULL;
        if (owner)
            owner->live_views++;
    }
}

static ggtk_status walk(planner *pl)
{
    graph_plan *plan = pl->plan;
    /* Leaves and inputs first: they must hold their data from before the compute starts. */
    for (int i = 0; i < pl->count; i++) {
        tensor_state *st = &pl->states[i];
        if (needs_block(st->tensor) && (i < pl->n_leaves || (st->tensor->flags & INF_TENSOR_INPUT)) &&
            !place(pl, st))
            return GGTK_ERR_NOMEM;
    }
    for (int i = pl->n_leaves; i < pl->count; i++) {
        tensor_state *st = &pl->states[i];
        const inf_tensor *node = st->tensor;
        plan->release_start[i - pl->n_leaves] = pl->n_releases;
        if (node->view_src && !node->view_src->data && !state_of(pl, node->view_src))
            return GGTK_ERR_INVALID;
        if (needs_block(node) && st->offset == PLAN_NONE) {
            tensor_state *donor = in_place_source(pl, st);
            if (donor) {
                donor->handed_on = true;
                st->offset = donor->offset;
                st->size = donor->size;
                st->ours = true;
                plan->stats.n_allocated++;
                plan->stats.n_in_place++;
                plan->stats.tensor_bytes += free_blocks_round(&pl->blocks[st->buffer], st->size);
            } else if (!place(pl, st)) {
                return GGTK_ERR_NOMEM;
            }
        }
        if (!after_node(pl, node))
            return GGTK_ERR_NOMEM;
    }
    plan->release_start[pl->count - pl->n_leaves] = pl->n_releases;
    for (int i = 0; i < pl->count; i++) {
        plan->offsets[i] = pl->states[i].ours ? pl->states[i].offset : PLAN_NONE;
        plan->buffers[i] = pl->states[i].buffer;
    }
    for (int b = 0; b < pl->layout->n_buffers; b++) {
        plan->buffer_sizes[b] = pl->blocks[b].peak;
        plan->stats.buffer_size += pl->blocks[b].peak;
    }
    return GGTK_OK;
}

void plan_free(graph_plan *plan)
{
    free(plan->offsets);
    free(plan->buffers);
    free(plan->release_start);
    free(plan->releases);
    memset(plan, 0, sizeof *plan);
}

/* Allocate pl's states and map and list the graph's tensors in them with their buffers.
 * GGTK_ERR_NOMEM when out of memory, GGTK_ERR_USAGE when the placement names a buffer outside
 * the layout (`misplaced` then says which tensor); call planner_release either way. */
static ggtk_status planner_init(planner *pl, const inf_graph *graph, const plan_layout *layout,
                                const inf_tensor **misplaced)
{
    *pl = (planner){.graph = graph, .n_leaves = inf_graph_n_leaves(graph), .layout = layout};
    pl->count = pl->n_leaves + inf_graph_n_nodes(graph);
    pl->n_slots = 2 * pl->count + 1;
    pl->states = calloc((size_t)pl->count + 1, sizeof *pl->states);
    pl->slots = malloc((size_t)pl->n_slots * sizeof *pl->slots);
    if (!pl->states || !pl->slots)
        return GGTK_ERR_NOMEM;
    memset(pl->slots, 0xff, (size_t)pl->n_slots * sizeof *pl->slots);
    for (int i = 0; i < pl->count; i++) {
        const inf_tensor *t = tensor_at(graph, pl->n_leaves, i);
        add_state(pl, i, t);
        /* Only tensors the plan may place need a buffer; the others stay in buffer 0. */
        if (layout->placement && needs_block(t)) {
            pl->states[i].buffer = layout->placement(t, layout->user);
            if (pl->states[i].buffer < 0 || pl->states[i].buffer >= layout->n_buffers) {
                *misplaced = t;
                return GGTK_ERR_USAGE;
            }
        }
    }
    return GGTK_OK;
}

static void planner_release(planner *pl)
{
    free(pl->states);
    free(pl->slots);
}

bool plan_matches(const graph_plan *plan, const inf_graph *graph, const plan_layout *layout)
{
    planner pl;
    const inf_tensor *misplaced = NULL;
    bool same = planner_init(&pl, graph, layout, &misplaced) == GGTK_OK &&
                signature_of(&pl) == plan->signature;
    planner_release(&pl);
    return same;
}

ggtk_status plan_graph(const inf_graph *graph, const plan_layout *layout, graph_plan *plan)
{
    plan_free(plan);
    planner pl;
    const inf_tensor *misplaced = NULL;
    ggtk_status st = planner_init(&pl, graph, layout, &misplaced);
    pl.plan = plan;
    plan->offsets = malloc(((size_t)pl.count + 1) * sizeof *plan->offsets);
    plan->buffers = malloc(((size_t)pl.count + 1) * sizeof *plan->buffers);
    plan->release_start = malloc(((size_t)inf_graph_n_nodes(graph) + 1) * sizeof *plan->release_start);
    if (st == GGTK_OK && (!plan->offsets || !plan->buffers || !plan->release_start))
        st = GGTK_ERR_NOMEM;
    if (st == GGTK_OK) {
        plan->signature = signature_of(&pl);
        for (int b = 0; b < layout->n_buffers; b++)
            free_blocks_init(&pl.blocks[b], layout->alignment[b]);
        count_uses(&pl);
        st = walk(&pl);
        for (int b = 0; b < layout->n_buffers; b++)
            free_blocks_release(&pl.blocks[b]);
    }
    planner_release(&pl);
    plan->releases = pl.releases;
    plan->n_leaves = pl.n_leaves;
    plan->n_nodes = inf_graph_n_nodes(graph);
    if (st != GGTK_OK)
        plan_free(plan);
    plan->misplaced = misplaced;
    return st;
}
