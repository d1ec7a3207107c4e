/* token_map.c - open-addressing hash tables for token lookup and merge ranks. */
#include "token_map.h"

#include <stdlib.h>
#include <string.h>
#include <xxhash.h>

/* Smallest power of two >= 2 * n (and >= 16), or 0 when that overflows. */
static size_t table_capacity(size_t n)
{
    size_t capacity = 16;
    while (capacity < 2 * n) {
        if (capacity > SIZE_MAX / 4) {
            return 0;
        }
        capacity *= 2;
    }
    return capacity;
}

bool inf_text_map_init(inf_text_map *map, size_t n_tokens, const char *arena, const uint64_t *offsets)
{
    size_t capacity = table_capacity(n_tokens);
    map->slots = capacity ? malloc(capacity * sizeof *map->slots) : NULL;
    if (!map->slots) {
        return false;
    }
    memset(map->slots, 0xFF, capacity * sizeof *map->slots);
    map->mask = capacity - 1;
    map->arena = arena;
    map->offsets = offsets;
    return true;
}

static bool text_equals(const inf_text_map *map, int32_t id, const char *text, size_t len)
{
    uint64_t start = map->offsets[id];
    return map->offsets[id + 1] - start - 1 == len && memcmp(map->arena + start, text, len) == 0;
}

/* Slot holding `text`, or the empty slot where it would go. */
static size_t text_slot(const inf_text_map *map, const char *text, size_t len)
{
    size_t i = (size_t)XXH3_64bits(text, len) & map->mask;
    while (map->slots[i] >= 0 && !text_equals(map, map->slots[i], text, len)) {
        i = (i + 1) & map->mask;
    }
    return i;
}

void inf_text_map_put(inf_text_map *map, int32_t id)
{
    uint64_t start = map->offsets[id];
    size_t len = (size_t)(map->offsets[id + 1] - start - 1);
    map->slots[text_slot(map, map->arena + start, len)] = id;
}

int32_t inf_text_map_get(const inf_text_map *map, const char *text, size_t len)
{
    return map->slots[text_slot(map, text, len)];
}

void inf_text_map_free(inf_text_map *map)
{
    free(map->slots);
    map->slots = NULL;
}

bool inf_merge_map_init(inf_merge_map *map, size_t n_merges)
{
    size_t capacity = table_capacity(n_merges);
    map->slots = capacity ? malloc(capacity * sizeof *map->slots) : NULL;
    if (!map->slots) {
        return false;
    }
    for (size_t i = 0; i < capacity; i++) {
        map->slots[i].key = UINT64_MAX;
    }
    map->mask = capacity - 1;
    return true;
}

static uint64_t pair_key(int32_t left, int32_t right)
{
    return ((uint64_t)(uint32_t)left << 32) | (uint32_t)right;
}

static size_t merge_slot(const inf_merge_map *map, uint64_t key)
{
    /* Fibonacci hashing: the high bits of the product mix both ids. */
    size_t i = (size_t)((key * 0x9E3779B97F4A7C15ull) >> 32) & map->mask;
    while (map->slots[i].key != UINT64_MAX && map->slots[i].key != key) {
        i = (i + 1) & map->mask;
    }
    return i;
}

void inf_merge_map_put(inf_merge_map *map, int32_t left, int32_t right, int32_t rank, int32_t merged)
{
    uint64_t key = pair_key(left, right);
    inf_merge_slot *slot = &map->slots[merge_slot(map, key)];
    if (slot->key == key) {
        return;
    }
    slot->key = key;
    slot->rank = rank;
    slot->merged = merged;
}

const inf_merge_slot *inf_merge_map_get(const inf_merge_map *map, int32_t left, int32_t right)
{
    uint64_t key = pair_key(left, right);
    const inf_merge_slot *slot = &map->slots[merge_slot(map, key)];
    return slot->key == key ? slot : NULL;
}

void inf_merge_map_free(inf_merge_map *map)
{
    free(map->slots);
    map->slots = NULL;
}
