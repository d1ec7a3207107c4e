/* word_cache.h - memo of the tokens each pre-tokenized word merged into, for one tokenize call.
 * Natural text repeats its words, and merging is a pure function of the word's bytes, so a hit
 * skips the merge loop entirely. Private to libinfer/src/vocab. */
#ifndef INF_VOCAB_WORD_CACHE_H
#define INF_VOCAB_WORD_CACHE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct word_cache_entry {
    uint64_t hash;
    uint32_t bytes_at, n_bytes;   /* the word, in `bytes` */
    uint32_t tokens_at, n_tokens; /* its tokens, in `tokens` */
} word_cache_entry;

typedef struct word_cache {
    uint32_t *slots; /* entry index + 1; 0 when empty */
    size_t mask;
    word_cache_entry *entries;
    size_t n_entries, entries_cap;
    char *bytes;
    size_t n_bytes, bytes_cap;
    int32_t *tokens;
    size_t n_tokens, tokens_cap;
} word_cache;

/* Words longer than this are not remembered (rare, and long to compare). */
enum { WORD_CACHE_MAX_WORD = 128, WORD_CACHE_MAX_ENTRIES = 1 << 17 };

/* Whether word[0..len) is remembered; if so *tokens and *n are its tokens (*tokens may be NULL
 * when *n is 0). */
bool word_cache_get(const word_cache *cache, const char *word, size_t len, const int32_t **tokens, size_t *n);
/* Remember tokens[0..n) for word[0..len). A word that is too long, or a full cache, is not
 * remembered; returns false only when out of memory. */
bool word_cache_put(word_cache *cache, const char *word, size_t len, const int32_t *tokens, size_t n);
void word_cache_free(word_cache *cache);

#endif
