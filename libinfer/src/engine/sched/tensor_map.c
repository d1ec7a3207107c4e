/* tensor_map.c - tensor address -> integer, open addressing with linear probing. */
#include "tensor_map.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static size_t home_slot(const tensor_map *map, const inf_tensor *key)
{
    return (size_t)(((uintptr_t)key >> 4) * 0x9E3779B97F4A7C15ULL) & (map->n_slots - 1);
}

static tensor_map_slot *find(const tensor_map *map, const inf_tensor *key)
{
    for (size_t i = home_slot(map, key);; i = (i + 1) & (map->n_slots - 1)) {
        if (!map->slots[i].key || map->slots[i].key == key)
            return &map->slots[i];
    }
}

void tensor_map_clear(tensor_map *map)
{
    if (map->slots)
        memset(map->slots, 0, map->n_slots * sizeof *map->slots);
    map->count = 0;
}

void tensor_map_release(tensor_map *map)
{
    free(map->slots);
    memset(map, 0, sizeof *map);
}

static bool grow(tensor_map *map)
{
    tensor_map old = *map;
    map->n_slots = old.n_slots ? 2 * old.n_slots : 256;
    map->slots = calloc(map->n_slots, sizeof *map->slots);
    if (!map->slots) {
        *map = old;
        return false;
    }
    map->count = 0;
    for (size_t i = 0; i < old.n_slots; i++) {
        if (old.slots[i].key) {
            *find(map, old.slots[i].key) = old.slots[i];
            map->count++;
        }
    }
    free(old.slots);
    return true;
}

bool tensor_map_set(tensor_map *map, const inf_tensor *key, int value)
{
    if (2 * (map->count + 1) > map->n_slots && !grow(map))
        return false;
    tensor_map_slot *slot = find(map, key);
    if (!slot->key)
        map->count++;
    *slot = (tensor_map_slot){key, value};
    return true;
}

int tensor_map_get(const tensor_map *map, const inf_tensor *key, int missing)
{
    if (!map->n_slots)
        return missing;
    const tensor_map_slot *slot = find(map, key);
    return slot->key ? slot->value : missing;
}
