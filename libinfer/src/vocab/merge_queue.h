/* merge_queue.h - what SPM and BPE tokenizing share: a chain of symbols (stretches of bytes that
 * merge pairwise into tokens) and a priority queue of candidate merges. Private to
 * libinfer/src/vocab. */
#ifndef INF_VOCAB_MERGE_QUEUE_H
#define INF_VOCAB_MERGE_QUEUE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* A stretch of the input; merged-away symbols keep n = 0. */
typedef struct merge_symbol {
    int32_t prev, next; /* neighbours in the chain, -1 at the ends */
    uint32_t start, n;  /* byte range in the text being merged */
    int32_t token;      /* the token this stretch is, or -1 when it is no token (yet) */
} merge_symbol;

/* A candidate merge of symbols left and right (adjacent when queued) into token `merged`. */
typedef struct merge_candidate {
    double priority; /* lower pops first: BPE rank, or minus the SPM score */
    int32_t left, right;
    int32_t merged;
    uint32_t size;   /* left.n + right.n when queued: a mismatch later means it went stale */
} merge_candidate;

/* Binary min-heap on (priority, left): equal priorities pop leftmost first, as llama.cpp. */
typedef struct merge_queue {
    merge_candidate *items;
    size_t count, capacity;
} merge_queue;

/* Queue a candidate; false when out of memory. */
bool merge_queue_push(merge_queue *q, merge_candidate c);
/* Pop the first candidate into *out; false when the queue is empty. */
bool merge_queue_pop(merge_queue *q, merge_candidate *out);
void merge_queue_free(merge_queue *q);

/* Apply a popped candidate to the chain if it is still valid (both symbols alive and unchanged):
 * the right symbol joins the left one, which becomes token `merged`. Returns whether it merged. */
bool merge_symbols_apply(merge_symbol *symbols, const merge_candidate *c);

/* Offer the merge of symbols left and right (adjacent and alive): queue the candidate when the
 * two merge into a token. False only when out of memory. */
typedef bool (*merge_offer_fn)(void *session, int32_t left, int32_t right);

/* Merge a chain of `n` symbols: offer every adjacent pair, then keep applying the first queued
 * candidate that is still valid and offer the merged symbol with its new neighbours, until the
 * queue is empty. The queue is emptied first. False when out of memory. */
bool merge_symbols_run(merge_queue *queue, merge_symbol *symbols, int32_t n, merge_offer_fn offer,
                       void *session);

#endif
