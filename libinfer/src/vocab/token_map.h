/* token_map.h - the two hash tables of a vocabulary: token text -> id, and a merge (left id,
 * right id) -> (rank, merged id). Open addressing with linear probing; both are built once at
 * load time and only read afterwards. Private to libinfer/src/vocab. */
#ifndef INF_VOCAB_TOKEN_MAP_H
#define INF_VOCAB_TOKEN_MAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Token texts live in one arena: text of id i is arena[offsets[i] .. offsets[i+1] - 1), each
 * followed by a NUL. The map only stores ids and compares texts through the arena. */
typedef struct inf_text_map {
    int32_t *slots; /* token id, or -1 for an empty slot */
    size_t mask;    /* capacity - 1 (capacity is a power of two) */
    const char *arena;
    const uint64_t *offsets;
} inf_text_map;

/* Make room for `n_tokens` ids (load factor at most 1/2). Returns false when out of memory. */
bool inf_text_map_init(inf_text_map *map, size_t n_tokens, const char *arena, const uint64_t *offsets);
/* Map id's text to id; a later id with the same text replaces the earlier one (as llama.cpp). */
void inf_text_map_put(inf_text_map *map, int32_t id);
/* The id whose text is text[0..len), or -1. */
int32_t inf_text_map_get(const inf_text_map *map, const char *text, size_t len);
void inf_text_map_free(inf_text_map *map);

typedef struct inf_merge_slot {
    uint64_t key;   /* (left << 32) | right, UINT64_MAX when empty */
    int32_t rank;   /* position in tokenizer.ggml.merges: lower merges first */
    int32_t merged; /* id of the token left+right */
} inf_merge_slot;

typedef struct inf_merge_map {
    inf_merge_slot *slots;
    size_t mask;
} inf_merge_map;

bool inf_merge_map_init(inf_merge_map *map, size_t n_merges);
/* Record a merge; the first one recorded for a pair wins (as llama.cpp). */
void inf_merge_map_put(inf_merge_map *map, int32_t left, int32_t right, int32_t rank, int32_t merged);
/* The merge of (left, right), or NULL when there is none. */
const inf_merge_slot *inf_merge_map_get(const inf_merge_map *map, int32_t left, int32_t right);
void inf_merge_map_free(inf_merge_map *map);

#endif
