/* word_cache.c - an append-only hash table of word -> tokens (open addressing on entry indices,
 * words and tokens in two growing arenas). */
#include "word_cache.h"

#include <stdlib.h>
#include <string.h>
#include <xxhash.h>

static bool grow(void **data, size_t *cap, size_t need, size_t elem)
{
    if (need <= *cap) {
        return true;
    }
    size_t new_cap = *cap ? *cap : 1024;
    while (new_cap < need) {
        new_cap *= 2;
    }
    void *grown = realloc(*data, new_cap * elem);
    if (!grown) {
        return false;
    }
    *data = grown;
    *cap = new_cap;
    return true;
}

static bool entry_is(const word_cache *c, const word_cache_entry *e, uint64_t hash, const char *word, size_t len)
{
    return e->hash == hash && e->n_bytes == len && memcmp(c->bytes + e->bytes_at, word, len) == 0;
}

/* Slot holding the word, or the empty slot where it would go. */
static size_t find_slot(const word_cache *c, uint64_t hash, const char *word, size_t len)
{
    size_t i = (size_t)hash & c->mask;
    while (c->slots[i] && !entry_is(c, &c->entries[c->slots[i] - 1], hash, word, len)) {
        i = (i + 1) & c->mask;
    }
    return i;
}

bool word_cache_get(const word_cache *c, const char *word, size_t len, const int32_t **tokens, size_t *n)
{
    if (!c->slots || len > WORD_CACHE_MAX_WORD) {
        return false;
    }
    uint32_t index = c->slots[find_slot(c, XXH3_64bits(word, len), word, len)];
    if (!index) {
        return false;
    }
    const word_cache_entry *e = &c->entries[index - 1];
    *n = e->n_tokens;
    *tokens = e->n_tokens ? c->tokens + e->tokens_at : NULL;
    return true;
}

/* Keep the table at most half full: double it and re-insert every entry. */
static bool make_room(word_cache *c)
{
    size_t capacity = c->slots ? 2 * (c->mask + 1) : 4096;
    if (c->slots && 2 * (c->n_entries + 1) <= c->mask + 1) {
        return true;
    }
    uint32_t *slots = calloc(capacity, sizeof *slots);
    if (!slots) {
        return false;
    }
    free(c->slots);
    c->slots = slots;
    c->mask = capacity - 1;
    for (size_t k = 0; k < c->n_entries; k++) {
        const word_cache_entry *e = &c->entries[k];
        c->slots[find_slot(c, e->hash, c->bytes + e->bytes_at, e->n_bytes)] = (uint32_t)k + 1;
    }
    return true;
}

bool word_cache_put(word_cache *c, const char *word, size_t len, const int32_t *tokens, size_t n)
{
    if (len > WORD_CACHE_MAX_WORD || c->n_entries >= WORD_CACHE_MAX_ENTRIES) {
        return true;
    }
    if (!make_room(c) || !grow((void **)&c->entries, &c->entries_cap, c->n_entries + 1, sizeof *c->entries) ||
        !grow((void **)&c->bytes, &c->bytes_cap, c->n_bytes + len, 1) ||
        !grow((void **)&c->tokens, &c->tokens_cap, c->n_tokens + n, sizeof *c->tokens)) {
        return false;
    }
    uint64_t hash = XXH3_64bits(word, len);
    size_t slot = find_slot(c, hash, word, len);
    if (c->slots[slot]) {
        return true;
    }
    word_cache_entry *e = &c->entries[c->n_entries];
    *e = (word_cache_entry){hash, (uint32_t)c->n_bytes, (uint32_t)len, (uint32_t)c->n_tokens, (uint32_t)n};
    memcpy(c->bytes + c->n_bytes, word, len);
    if (n) {
        memcpy(c->tokens + c->n_tokens, tokens, n * sizeof *tokens);
    }
    c->n_bytes += len;
    c->n_tokens += n;
    c->slots[slot] = (uint32_t)++c->n_entries;
    return true;
}

void word_cache_free(word_cache *c)
{
    free(c->slots);
    free(c->entries);
    free(c->bytes);
    free(c->tokens);
    memset(c, 0, sizeof *c);
}
