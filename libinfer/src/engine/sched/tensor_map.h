/* tensor_map.h - a map from tensor addresses to small integers (the scheduler's backend of each
 * tensor): open addressing, grown when half full. */
#ifndef INF_TENSOR_MAP_H
#define INF_TENSOR_MAP_H

#include <stdbool.h>
#include <stddef.h>

#include <ggtk/inf_tensor.h>

typedef struct tensor_map_slot {
    const inf_tensor *key; /* NULL: empty */
    int value;
} tensor_map_slot;

typedef struct tensor_map {
    tensor_map_slot *slots;
    size_t n_slots; /* a power of two, or 0 */
    size_t count;
} tensor_map;

/* Forget every entry, keeping the memory. */
void tensor_map_clear(tensor_map *map);
void tensor_map_release(tensor_map *map);

/* Set `key`'s value. False when out of memory. */
bool tensor_map_set(tensor_map *map, const inf_tensor *key, int value);

/* `key`'s value, or `missing` when it has none. */
int tensor_map_get(const tensor_map *map, const inf_tensor *key, int missing);

#endif
