/* merge_queue.c - the candidate-merge heap, the symbol-chain update and the merge loop shared by
 * SPM and BPE. */
#include "merge_queue.h"

#include <stdlib.h>

static bool comes_before(const merge_candidate *a, const merge_candidate *b)
{
    return a->priority < b->priority || (a->priority == b->priority && a->left < b->left);
}

bool merge_queue_push(merge_queue *q, merge_candidate c)
{
    if (q->count == q->capacity) {
        size_t capacity = q->capacity ? 2 * q->capacity : 64;
        merge_candidate *items = realloc(q->items, capacity * sizeof *items);
        if (!items) {
            return false;
        }
        q->items = items;
        q->capacity = capacity;
    }
    size_t i = q->count++;
    while (i > 0) {
        size_t parent = (i - 1) / 2;
        if (!comes_before(&c, &q->items[parent])) {
            break;
        }
        q->items[i] = q->items[parent];
        i = parent;
    }
    q->items[i] = c;
    return true;
}

bool merge_queue_pop(merge_queue *q, merge_candidate *out)
{
    if (q->count == 0) {
        return false;
    }
    *out = q->items[0];
    merge_candidate last = q->items[--q->count];
    size_t i = 0;
    for (;;) {
        size_t child = 2 * i + 1;
        if (child >= q->count) {
            break;
        }
        if (child + 1 < q->count && comes_before(&q->items[child + 1], &q->items[child])) {
            child++;
        }
        if (!comes_before(&q->items[child], &last)) {
            break;
        }
        q->items[i] = q->items[child];
        i = child;
    }
    if (q->count > 0) {
        q->items[i] = last;
    }
    return true;
}

void merge_queue_free(merge_queue *q)
{
    free(q->items);
    q->items = NULL;
    q->count = q->capacity = 0;
}

bool merge_symbols_run(merge_queue *queue, merge_symbol *symbols, int32_t n, merge_offer_fn offer,
                       void *session)
{
    queue->count = 0;
    for (int32_t i = 1; i < n; i++) {
        if (!offer(session, i - 1, i)) {
            return false;
        }
    }
    merge_candidate c;
    while (merge_queue_pop(queue, &c)) {
        if (!merge_symbols_apply(symbols, &c)) {
            continue;
        }
        int32_t prev = symbols[c.left].prev, next = symbols[c.left].next;
        if ((prev >= 0 && !offer(session, prev, c.left)) || (next >= 0 && !offer(session, c.left, next))) {
            return false;
        }
    }
    return true;
}

bool merge_symbols_apply(merge_symbol *symbols, const merge_candidate *c)
{
    merge_symbol *left = &symbols[c->left];
    merge_symbol *right = &symbols[c->right];
    if (left->n == 0 || right->n == 0 || left->n + right->n != c->size) {
        return false;
    }
    left->n += right->n;
    left->token = c->merged;
    right->n = 0;
    left->next = right->next;
    if (right->next >= 0) {
        symbols[right->next].prev = c->left;
    }
    return true;
}
