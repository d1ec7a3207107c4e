/* special_match.c - the special-token automaton (a trie with fail links, edges in one hash table)
 * and the one-pass partition of a text into special tokens and plain stretches. */
#include "special_match.h"

#include <stdlib.h>
#include <string.h>

#include "vocab_internal.h"

/* ---------------------------------------------------------------------------------------------
 * The trie's edges
 * ------------------------------------------------------------------------------------------- */

static uint64_t edge_key(int32_t parent, unsigned char byte) { return (uint64_t)(uint32_t)parent << 8 | byte; }

static size_t edge_slot(const special_matcher *m, uint64_t key)
{
    size_t i = (size_t)((key * 0x9E3779B97F4A7C15ull) >> 32) & m->edge_mask;
    while (m->edge_keys[i] != UINT64_MAX && m->edge_keys[i] != key) {
        i = (i + 1) & m->edge_mask;
    }
    return i;
}

/* The child of `node` by `byte`, or -1. */
static int32_t child_of(const special_matcher *m, int32_t node, unsigned char byte)
{
    if (node == 0) {
        return m->root_child[byte] ? m->root_child[byte] : -1;
    }
    size_t i = edge_slot(m, edge_key(node, byte));
    return m->edge_keys[i] == UINT64_MAX ? -1 : m->edge_child[i];
}

/* The automaton's move from `state` on `byte`: the longest suffix of state's text + byte that is
 * in the trie. Counts the fail links followed in *work. */
static int32_t step(const special_matcher *m, int32_t state, unsigned char byte, size_t *work)
{
    for (;;) {
        int32_t child = child_of(m, state, byte);
        if (child >= 0) {
            return child;
        }
        if (state == 0) {
            return 0;
        }
        state = m->fail[state];
        ++*work;
    }
}

/* ---------------------------------------------------------------------------------------------
 * Building
 * ------------------------------------------------------------------------------------------- */

static bool is_special_type(uint8_t type)
{
    return type == INF_TOKEN_CONTROL || type == INF_TOKEN_USER_DEFINED || type == INF_TOKEN_UNKNOWN;
}

typedef struct ranked {
    size_t len;
    inf_token id;
} ranked;

/* Longest text first; equal lengths by id, so the order does not depend on the sort. */
static int longer_text_first(const void *a, const void *b)
{
    const ranked *x = a, *y = b;
    if (x->len != y->len) {
        return x->len > y->len ? -1 : 1;
    }
    return (x->id > y->id) - (x->id < y->id);
}

/* The special tokens with a non-empty text, in rank order, into m->token_of_rank; the sum of
 * their lengths into *total. */
static bool rank_tokens(special_matcher *m, const inf_vocab *v, size_t *total)
{
    ranked *keys = malloc((size_t)v->n_tokens * sizeof *keys);
    if (!keys) {
        return false;
    }
    int32_t count = 0;
    *total = 0;
    for (int32_t id = 0; id < v->n_tokens; id++) {
        size_t len;
        vocab_text(v, id, &len);
        if (is_special_type(v->types[id]) && len > 0) {
            keys[count++] = (ranked){len, id};
            *total += len;
        }
    }
    qsort(keys, (size_t)count, sizeof *keys, longer_text_first);
    m->token_of_rank = malloc(((size_t)count + 1) * sizeof *m->token_of_rank);
    m->node_of_rank = malloc(((size_t)count + 1) * sizeof *m->node_of_rank);
    for (int32_t r = 0; m->token_of_rank && r < count; r++) {
        m->token_of_rank[r] = keys[r].id;
    }
    m->n_ranks = count;
    free(keys);
    return m->token_of_rank && m->node_of_rank;
}

static bool allocate_nodes(special_matcher *m, size_t max_nodes)
{
    size_t edges = 16;
    while (edges < 2 * max_nodes) {
        edges *= 2;
    }
    m->depth = malloc(max_nodes * sizeof *m->depth);
    m->fail = malloc(max_nodes * sizeof *m->fail);
    for (int mode = 0; mode < SPECIAL_MODES; mode++) {
        m->rank[mode] = malloc(max_nodes * sizeof *m->rank[mode]);
        m->next_match[mode] = malloc(max_nodes * sizeof *m->next_match[mode]);
        if (!m->rank[mode] || !m->next_match[mode]) {
            return false;
        }
        memset(m->rank[mode], 0xFF, max_nodes * sizeof *m->rank[mode]);
    }
    m->edge_keys = malloc(edges * sizeof *m->edge_keys);
    m->edge_child = malloc(edges * sizeof *m->edge_child);
    if (!m->depth || !m->fail || !m->edge_keys || !m->edge_child) {
        return false;
    }
    memset(m->edge_keys, 0xFF, edges * sizeof *m->edge_keys);
    m->edge_mask = edges - 1;
    m->depth[0] = 0;
    m->n_nodes = 1;
    return true;
}

/* Add the text of the token of rank r to the trie, recording the node that ends it. */
static void insert_token(special_matcher *m, const inf_vocab *v, int32_t r, int32_t *parent, uint8_t *byte_in)
{
    inf_token id = m->token_of_rank[r];
    size_t len;
    const unsigned char *text = (const unsigned char *)vocab_text(v, id, &len);
    int32_t node = 0;
    for (size_t i = 0; i < len; i++) {
        int32_t child = child_of(m, node, text[i]);
        if (child < 0) {
            child = m->n_nodes++;
            m->depth[child] = m->depth[node] + 1;
            parent[child] = node;
            byte_in[child] = text[i];
            if (node == 0) {
                m->root_child[text[i]] = child;
            } else {
                size_t slot = edge_slot(m, edge_key(node, text[i]));
                m->edge_keys[slot] = edge_key(node, text[i]);
                m->edge_child[slot] = child;
            }
        }
        node = child;
    }
    m->node_of_rank[r] = node;
    if (m->rank[SPECIAL_ALL][node] < 0) {
        m->rank[SPECIAL_ALL][node] = r;
        m->any[SPECIAL_ALL] = true;
    }
    if (v->types[id] == INF_TOKEN_USER_DEFINED && m->rank[SPECIAL_USER_DEFINED_ONLY][node] < 0) {
        m->rank[SPECIAL_USER_DEFINED_ONLY][node] = r;
        m->any[SPECIAL_USER_DEFINED_ONLY] = true;
    }
}

/* The nodes in order of depth (the root first), so that each node comes after every node its
 * links can point to; NULL when out of memory. */
static int32_t *nodes_by_depth(const special_matcher *m, uint32_t max_depth)
{
    size_t *first = calloc((size_t)max_depth + 2, sizeof *first);
    int32_t *order = malloc((size_t)m->n_nodes * sizeof *order);
    if (!first || !order) {
        free(first);
        free(order);
        return NULL;
    }
    for (int32_t node = 0; node < m->n_nodes; node++) {
        first[m->depth[node] + 1]++;
    }
    for (uint32_t d = 1; d <= max_depth + 1; d++) {
        first[d] += first[d - 1];
    }
    for (int32_t node = 0; node < m->n_nodes; node++) {
        order[first[m->depth[node]]++] = node;
    }
    free(first);
    return order;
}

/* Fail links and match chains, shallow nodes first. */
static bool link_nodes(special_matcher *m, const int32_t *parent, const uint8_t *byte_in, uint32_t max_depth)
{
    int32_t *order = nodes_by_depth(m, max_depth);
    if (!order) {
        return false;
    }
    size_t unused_work = 0;
    m->fail[0] = 0;
    for (int mode = 0; mode < SPECIAL_MODES; mode++) {
        m->next_match[mode][0] = -1;
    }
    for (int32_t i = 1; i < m->n_nodes; i++) {
        int32_t node = order[i];
        int32_t up = parent[node];
        int32_t fail = up == 0 ? 0 : step(m, m->fail[up], byte_in[node], &unused_work);
        m->fail[node] = fail;
        for (int mode = 0; mode < SPECIAL_MODES; mode++) {
            m->next_match[mode][node] = m->rank[mode][fail] >= 0 ? fail : m->next_match[mode][fail];
        }
    }
    free(order);
    return true;
}

bool special_matcher_build(special_matcher *m, const inf_vocab *v)
{
    memset(m, 0, sizeof *m);
    size_t total;
    /* Node ids are int32_t: a trie of 2^31 nodes would need gigabytes of token text anyway. */
    if (!rank_tokens(m, v, &total) || total >= INT32_MAX || !allocate_nodes(m, total + 1)) {
        special_matcher_free(m);
        return false;
    }
    int32_t *parent = malloc((total + 1) * sizeof *parent);
    uint8_t *byte_in = malloc(total + 1);
    bool ok = parent && byte_in;
    for (int32_t r = 0; ok && r < m->n_ranks; r++) {
        insert_token(m, v, r, parent, byte_in);
    }
    ok = ok && link_nodes(m, parent, byte_in, m->n_ranks ? m->depth[m->node_of_rank[0]] : 0);
    free(parent);
    free(byte_in);
    if (!ok) {
        special_matcher_free(m);
    }
    return ok;
}

void special_matcher_free(special_matcher *m)
{
    free(m->depth);
    free(m->fail);
    for (int mode = 0; mode < SPECIAL_MODES; mode++) {
        free(m->rank[mode]);
        free(m->next_match[mode]);
    }
    free(m->edge_keys);
    free(m->edge_child);
    free(m->token_of_rank);
    free(m->node_of_rank);
    memset(m, 0, sizeof *m);
}

/* ---------------------------------------------------------------------------------------------
 * Partition
 *
 * The text is scanned once. Occurrences that overlap, directly or through others, form a segment;
 * a segment is resolved as soon as no later occurrence can reach back into it, so only one
 * segment's occurrences are held at a time. Within a segment, each end position keeps one
 * candidate in a heap: the longest occurrence ending there that can still be accepted.
 * ------------------------------------------------------------------------------------------- */

typedef struct partition {
    const special_matcher *m;
    int mode;
    const char *text;
    special_piece_fn emit;
    void *ctx;
    size_t *work;
    size_t emitted;           /* text before this offset has been handed on */
    size_t seg_start, seg_end; /* the open segment, when seg_end > 0 */
    uint64_t *heap;           /* candidates: rank << 32 | start, smallest first */
    size_t heap_count, heap_cap;
    uint64_t *accepted;       /* start << 32 | rank, sorted by start before emitting */
    size_t n_accepted, accepted_cap;
    uint8_t *covered;         /* per byte of the segment: inside an accepted occurrence */
    size_t covered_cap;
} partition;

static bool heap_push(partition *p, uint64_t key)
{
    uint64_t *heap = vocab_reserve(p->heap, &p->heap_cap, p->heap_count + 1, sizeof *heap);
    if (!heap) {
        return false;
    }
    p->heap = heap;
    ++*p->work;
    size_t i = p->heap_count++;
    while (i > 0 && key < p->heap[(i - 1) / 2]) {
        p->heap[i] = p->heap[(i - 1) / 2];
        i = (i - 1) / 2;
    }
    p->heap[i] = key;
    return true;
}

static uint64_t heap_pop(partition *p)
{
    ++*p->work;
    uint64_t top = p->heap[0], last = p->heap[--p->heap_count];
    size_t i = 0;
    for (size_t child; (child = 2 * i + 1) < p->heap_count; i = child) {
        if (child + 1 < p->heap_count && p->heap[child + 1] < p->heap[child]) {
            child++;
        }
        if (last <= p->heap[child]) {
            break;
        }
        p->heap[i] = p->heap[child];
    }
    p->heap[i] = last;
    return top;
}

static bool is_covered(const partition *p, size_t pos) { return p->covered[pos - p->seg_start]; }

/* Queue `node`'s occurrence ending at `end`, or the longest one on its match chain that does not
 * start inside an accepted occurrence (those are blocked for good). */
static bool offer(partition *p, int32_t node, size_t end)
{
    const special_matcher *m = p->m;
    while (node >= 0 && is_covered(p, end - m->depth[node])) {
        node = m->next_match[p->mode][node];
        ++*p->work;
    }
    return node < 0 || heap_push(p, (uint64_t)m->rank[p->mode][node] << 32 | (end - m->depth[node]));
}

static int by_value(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return (x > y) - (x < y);
}

/* Accept the segment's occurrences in (rank, start) order, skipping overlaps, then hand on the
 * accepted ones and the text before each, in text order. */
static bool resolve_segment(partition *p)
{
    const special_matcher *m = p->m;
    size_t span = p->seg_end - p->seg_start;
    uint8_t *covered = vocab_reserve(p->covered, &p->covered_cap, span, 1);
    if (!covered) {
        return false;
    }
    p->covered = covered;
    memset(p->covered, 0, span);
    p->n_accepted = 0;
    while (p->heap_count > 0) {
        uint64_t key = heap_pop(p);
        int32_t rank = (int32_t)(key >> 32);
        size_t start = (uint32_t)key;
        int32_t node = m->node_of_rank[rank];
        size_t end = start + m->depth[node];
        if (is_covered(p, end - 1)) {
            continue; /* every occurrence ending here contains end - 1 */
        }
        if (is_covered(p, start)) {
            /* An accepted occurrence at least as long overlaps the start; shorter ones may fit. */
            if (!offer(p, m->next_match[p->mode][node], end)) {
                return false;
            }
            continue;
        }
        memset(p->covered + (start - p->seg_start), 1, end - start);
        uint64_t *accepted = vocab_reserve(p->accepted, &p->accepted_cap, p->n_accepted + 1, sizeof *accepted);
        if (!accepted) {
            return false;
        }
        p->accepted = accepted;
        p->accepted[p->n_accepted++] = (uint64_t)start << 32 | (uint32_t)rank;
    }
    qsort(p->accepted, p->n_accepted, sizeof *p->accepted, by_value);
    for (size_t i = 0; i < p->n_accepted; i++) {
        size_t start = p->accepted[i] >> 32;
        inf_token token = m->token_of_rank[(uint32_t)p->accepted[i]];
        size_t len = m->depth[m->node_of_rank[(uint32_t)p->accepted[i]]];
        if ((start > p->emitted && !p->emit(p->ctx, INF_TOKEN_NONE, p->emitted, start - p->emitted)) ||
            !p->emit(p->ctx, token, start, len)) {
            return false;
        }
        p->emitted = start + len;
    }
    p->seg_end = 0;
    return true;
}

/* Record the occurrences that end at `end` (the one of `node` and those on its chain). */
static bool add_occurrence(partition *p, int32_t node, size_t end)
{
    size_t start = end - p->m->depth[node];
    if (p->seg_end == 0 || start < p->seg_start) {
        p->seg_start = start;
    }
    p->seg_end = end;
    return heap_push(p, (uint64_t)p->m->rank[p->mode][node] << 32 | start);
}

static bool scan(partition *p, size_t len)
{
    const special_matcher *m = p->m;
    int32_t state = 0;
    for (size_t i = 0; i < len; i++) {
        state = step(m, state, (unsigned char)p->text[i], p->work);
        ++*p->work;
        size_t end = i + 1;
        /* Occurrences found from here on start at end - depth or later. */
        if (p->seg_end > 0 && end - m->depth[state] >= p->seg_end && !resolve_segment(p)) {
            return false;
        }
        int32_t node = m->rank[p->mode][state] >= 0 ? state : m->next_match[p->mode][state];
        if (node >= 0 && !add_occurrence(p, node, end)) {
            return false;
        }
    }
    return p->seg_end == 0 || resolve_segment(p);
}

bool special_partition(const special_matcher *m, const char *text, size_t len, int mode, special_piece_fn emit,
                       void *ctx, size_t *work)
{
    size_t unused_work = 0;
    partition p = {.m = m, .mode = mode, .text = text, .emit = emit, .ctx = ctx,
                   .work = work ? work : &unused_work};
    bool ok = !m->any[mode] || scan(&p, len);
    ok = ok && (len == p.emitted || emit(ctx, INF_TOKEN_NONE, p.emitted, len - p.emitted));
    free(p.heap);
    free(p.accepted);
    free(p.covered);
    return ok;
}
