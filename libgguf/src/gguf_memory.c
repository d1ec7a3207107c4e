/* gguf_memory.c - the reader's memory: an arena that owns every string and array of one file
 * (one free at close, no per-string malloc), and a growable array for tables whose length is
 * only trusted once their items have actually been read. */
#include "gguf_reader.h"

#include <stdlib.h>
#include <string.h>

enum { ARENA_CHUNK = 1 << 16, ARENA_ALIGN = 16 };

struct ggtk_arena_block {
    ggtk_arena_block *next;
    size_t capacity;
    size_t used;
    _Alignas(ARENA_ALIGN) unsigned char bytes[];
};

static ggtk_arena_block *block_new(size_t capacity)
{
    ggtk_arena_block *block = malloc(sizeof *block + capacity);
    if (!block)
        return NULL;
    block->next = NULL;
    block->capacity = capacity;
    block->used = 0;
    return block;
}

void *ggtk_arena_alloc(ggtk_arena *arena, uint64_t size)
{
    if (size > SIZE_MAX - sizeof(ggtk_arena_block) - ARENA_ALIGN)
        return NULL;
    size_t need = ((size_t)size + ARENA_ALIGN - 1) & ~(size_t)(ARENA_ALIGN - 1);
    ggtk_arena_block *head = arena->head;
    if (head && head->capacity - head->used >= need) {
        void *p = head->bytes + head->used;
        head->used += need;
        return p;
    }
    if (need > ARENA_CHUNK / 4) {
        /* A large item gets a block of its own, linked behind the head so that the current
         * chunk keeps serving small items. */
        ggtk_arena_block *own = block_new(need);
        if (!own)
            return NULL;
        own->used = need;
        if (head) {
            own->next = head->next;
            head->next = own;
        } else {
            arena->head = own;
        }
        return own->bytes;
    }
    ggtk_arena_block *chunk = block_new(ARENA_CHUNK);
    if (!chunk)
        return NULL;
    chunk->next = head;
    chunk->used = need;
    arena->head = chunk;
    return chunk->bytes;
}

char *ggtk_arena_strndup(ggtk_arena *arena, const void *bytes, uint64_t len)
{
    if (len == UINT64_MAX)
        return NULL;
    char *copy = ggtk_arena_alloc(arena, len + 1);
    if (!copy)
        return NULL;
    if (len)
        memcpy(copy, bytes, (size_t)len);
    copy[len] = '\0';
    return copy;
}

void *ggtk_arena_memdup(ggtk_arena *arena, const void *bytes, uint64_t size)
{
    if (size == 0)
        return NULL;
    void *copy = ggtk_arena_alloc(arena, size);
    if (copy)
        memcpy(copy, bytes, (size_t)size);
    return copy;
}

void ggtk_arena_free(ggtk_arena *arena)
{
    ggtk_arena_block *block = arena->head;
    while (block) {
        ggtk_arena_block *next = block->next;
        free(block);
        block = next;
    }
    arena->head = NULL;
}

bool ggtk_vec_init(ggtk_vec *vec, size_t item_size, uint64_t reserve)
{
    vec->items = NULL;
    vec->count = 0;
    vec->capacity = 0;
    vec->item_size = item_size;
    if (reserve == 0)
        return true;
    if (reserve > SIZE_MAX / item_size)
        return false;
    vec->items = malloc((size_t)reserve * item_size);
    if (!vec->items)
        return false;
    vec->capacity = reserve;
    return true;
}

void *ggtk_vec_push(ggtk_vec *vec)
{
    if (vec->count == vec->capacity) {
        uint64_t capacity = vec->capacity ? vec->capacity * 2 : 16;
        if (capacity > SIZE_MAX / vec->item_size)
            return NULL;
        unsigned char *items = realloc(vec->items, (size_t)capacity * vec->item_size);
        if (!items)
            return NULL;
        vec->items = items;
        vec->capacity = capacity;
    }
    void *item = vec->items + vec->count * vec->item_size;
    memset(item, 0, vec->item_size);
    vec->count++;
    return item;
}

void ggtk_vec_free(ggtk_vec *vec)
{
    free(vec->items);
    vec->items = NULL;
    vec->count = vec->capacity = 0;
}
