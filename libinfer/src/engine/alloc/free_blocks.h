/* free_blocks.h - the best-fit allocator of offsets inside one growing region, used by the
 * graph allocator's planning. It hands out offsets, it never touches memory. */
#ifndef INF_FREE_BLOCKS_H
#define INF_FREE_BLOCKS_H

#include <stdbool.h>
#include <stddef.h>

typedef struct free_block {
    size_t offset;
    size_t size;
} free_block;

/* Free blocks sorted by offset; everything from `end` on is free too. `peak` is the largest end
 * of any allocation so far: the size a buffer needs to hold them all. */
typedef struct free_blocks {
    free_block *blocks;
    int count;
    int capacity;
    size_t alignment;
    size_t end;
    size_t peak;
} free_blocks;

/* Start empty with offsets and sizes rounded up to `alignment` (a power of two). */
void free_blocks_init(free_blocks *fb, size_t alignment);
void free_blocks_release(free_blocks *fb);

/* Rounded size of an allocation of `size` bytes. */
size_t free_blocks_round(const free_blocks *fb, size_t size);

/* Offset of `size` bytes: the smallest free block that fits, else the end of the region (a free
 * block touching the end grows into it). False only when out of memory. */
bool free_blocks_take(free_blocks *fb, size_t size, size_t *offset);

/* Give back [offset, offset + size), merging with free neighbours. False only when out of
 * memory. */
bool free_blocks_give(free_blocks *fb, size_t offset, size_t size);

#endif
