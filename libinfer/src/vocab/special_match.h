/* special_match.h - finding special tokens in text in one pass: an Aho-Corasick automaton over
 * the texts of the CONTROL, USER_DEFINED and UNKNOWN tokens, built once at load time.
 *
 * Which occurrences become tokens is llama.cpp's rule (tokenizer_st_partition): the special
 * tokens take turns, longest text first (equal lengths by id), and each takes its leftmost
 * non-overlapping occurrences in the text that earlier turns left. That is the same as accepting
 * occurrences in order of (rank, start) and dropping each one that overlaps an accepted one, which
 * is what special_partition does with a heap, so the work grows with the text, not with the text
 * times the number of special tokens. Private to libinfer/src/vocab. */
#ifndef INF_VOCAB_SPECIAL_MATCH_H
#define INF_VOCAB_SPECIAL_MATCH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <ggtk/inf_vocab.h>

/* Which tokens are looked for: USER_DEFINED ones always, the others with PARSE_SPECIAL. */
enum { SPECIAL_USER_DEFINED_ONLY = 0, SPECIAL_ALL = 1, SPECIAL_MODES = 2 };

typedef struct special_matcher {
    int32_t n_nodes;               /* trie nodes; node 0 is the root (the empty text) */
    uint32_t *depth;               /* length of each node's text */
    int32_t *fail;                 /* node of the longest proper suffix that is in the trie */
    int32_t *rank[SPECIAL_MODES];  /* rank of the first token (by rank) whose text the node is,
                                    * among those the mode looks for; -1 when none */
    int32_t *next_match[SPECIAL_MODES]; /* nearest node on the fail chain (the node itself
                                    * excluded) that has a rank in the mode, or -1 */
    int32_t root_child[256];       /* the root's child for each byte, 0 when none */
    uint64_t *edge_keys;           /* hash of edges: key parent << 8 | byte, UINT64_MAX empty */
    int32_t *edge_child;
    size_t edge_mask;
    int32_t n_ranks;
    inf_token *token_of_rank;      /* longest text first, equal lengths by id */
    int32_t *node_of_rank;
    bool any[SPECIAL_MODES];       /* whether the mode looks for any token at all */
} special_matcher;

/* Build the automaton over `vocab`'s special tokens (its texts and types must be loaded); tokens
 * with an empty text are left out. False when out of memory. */
bool special_matcher_build(special_matcher *m, const inf_vocab *vocab);
void special_matcher_free(special_matcher *m);

/* Receives the pieces of the text in order: a special token, or (token == INF_TOKEN_NONE) the
 * stretch text[start .. start + len) between two. Returns false to stop the partition. */
typedef bool (*special_piece_fn)(void *ctx, inf_token token, size_t start, size_t len);

/* Cut text[0..len) into special tokens and the stretches between them, handing each piece to
 * `emit` in order; `mode` is a SPECIAL_* value. Memory grows with the longest run of overlapping
 * occurrences, not with the text. When `work` is not NULL, adds to it the automaton steps, heap
 * operations and match-chain steps taken, for tests: at most len times a small factor that
 * depends on how many special texts end at one place (the suffixes of one another), never on
 * how many special tokens there are. False when out of memory or when emit returned false. */
bool special_partition(const special_matcher *m, const char *text, size_t len, int mode, special_piece_fn emit,
                       void *ctx, size_t *work);

#endif
