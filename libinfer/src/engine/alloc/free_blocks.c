/* free_blocks.c - best-fit offsets with merging of neighbours (see free_blocks.h). */
#include "free_blocks.h"

#include <stdlib.h>
#include <string.h>

void free_blocks_init(free_blocks *fb, size_t alignment)
{
    memset(fb, 0, sizeof *fb);
    fb->alignment = alignment;
}

void free_blocks_release(free_blocks *fb)
{
    free(fb->blocks);
    memset(fb, 0, sizeof *fb);
}

size_t free_blocks_round(const free_blocks *fb, size_t size)
{
    return (size + fb->alignment - 1) / fb->alignment * fb->alignment;
}

static void remove_at(free_blocks *fb, int i)
{
    memmove(&fb->blocks[i], &fb->blocks[i + 1], (size_t)(fb->count - i - 1) * sizeof *fb->blocks);
    fb->count--;
}

bool free_blocks_take(free_blocks *fb, size_t size, size_t *offset)
{
    size = free_blocks_round(fb, size);
    int best = -1;
    for (int i = 0; i < fb->count; i++) {
        if (fb->blocks[i].size >= size && (best < 0 || fb->blocks[i].size < fb->blocks[best].size))
            best = i;
    }
    if (best >= 0) {
        *offset = fb->blocks[best].offset;
        fb->blocks[best].offset += size;
        fb->blocks[best].size -= size;
        if (fb->blocks[best].size == 0)
            remove_at(fb, best);
        return true;
    }
    /* No block fits: a free block at the very end can still be extended into the unused region
     * rather than leaving it as a hole. */
    if (fb->count > 0 && fb->blocks[fb->count - 1].offset + fb->blocks[fb->count - 1].size == fb->end) {
        *offset = fb->blocks[fb->count - 1].offset;
        remove_at(fb, fb->count - 1);
    } else {
        *offset = fb->end;
    }
    fb->end = *offset + size;
    fb->peak = fb->end > fb->peak ? fb->end : fb->peak;
    return true;
}

bool free_blocks_give(free_blocks *fb, size_t offset, size_t size)
{
    size = free_blocks_round(fb, size);
    int i = 0;
    while (i < fb->count && fb->blocks[i].offset < offset)
        i++;
    const bool joins_prev = i > 0 && fb->blocks[i - 1].offset + fb->blocks[i - 1].size == offset;
    const bool joins_next = i < fb->count && offset + size == fb->blocks[i].offset;
    if (joins_prev && joins_next) {
        fb->blocks[i - 1].size += size + fb->blocks[i].size;
        remove_at(fb, i);
    } else if (joins_prev) {
        fb->blocks[i - 1].size += size;
    } else if (joins_next) {
        fb->blocks[i].offset = offset;
        fb->blocks[i].size += size;
    } else {
        if (fb->count == fb->capacity) {
            int capacity = fb->capacity ? 2 * fb->capacity : 16;
            free_block *grown = realloc(fb->blocks, (size_t)capacity * sizeof *grown);
            if (!grown)
                return false;
            fb->blocks = grown;
            fb->capacity = capacity;
        }
        memmove(&fb->blocks[i + 1], &fb->blocks[i], (size_t)(fb->count - i) * sizeof *fb->blocks);
        fb->blocks[i] = (free_block){offset, size};
        fb->count++;
    }
    return true;
}
