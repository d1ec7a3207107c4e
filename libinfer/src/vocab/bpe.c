/* bpe.c - byte-level BPE tokenizing of one stretch of text: the pre-tokenizer splits it into
 * words; each word starts as one symbol per byte (the byte's token in GPT-2's alphabet) and the
 * adjacent pair with the lowest merge rank is merged until no ranked pair is left. */
#include <stdlib.h>

#include "merge_queue.h"
#include "unicode.h"
#include "word_cache.h"
#include "vocab_internal.h"

typedef struct bpe_session {
    const inf_vocab *v;
    /* the whole stretch, decoded */
    uint32_t *cps;
    uint8_t *cls;
    uint32_t *word_lengths, *split_scratch;
    /* the word being merged */
    char *bytes;            /* its UTF-8 */
    char *encoded;          /* its bytes in GPT-2's alphabet, for ignore_merges lookups */
    merge_symbol *symbols;  /* one per byte */
    merge_queue queue;
} bpe_session;

/* merge_offer_fn: queue the pair when the merges rank it. */
static bool queue_pair(void *session, int32_t left, int32_t right)
{
    bpe_session *s = session;
    const merge_symbol *l = &s->symbols[left];
    const merge_symbol *r = &s->symbols[right];
    if (l->token < 0 || r->token < 0) {
        return true;
    }
    const inf_merge_slot *m = inf_merge_map_get(&s->v->merges, l->token, r->token);
    if (!m) {
        return true;
    }
    merge_candidate c = {(double)m->rank, left, right, m->merged, l->n + r->n};
    return merge_queue_push(&s->queue, c);
}

/* The word as one whole token, when the pre-tokenizer says words that are tokens skip merging. */
static inf_token whole_word_token(bpe_session *s, size_t n_bytes)
{
    size_t len = 0;
    for (size_t i = 0; i < n_bytes; i++) {
        len += inf_utf8_encode(inf_byte_to_code_point((unsigned char)s->bytes[i]), s->encoded + len);
    }
    return inf_text_map_get(&s->v->text_to_id, s->encoded, len);
}

static bool merge_word(bpe_session *s, size_t n_bytes, token_list *out)
{
    if (s->v->pre->ignore_merges) {
        inf_token whole = whole_word_token(s, n_bytes);
        if (whole >= 0) {
            return token_list_push(out, whole);
        }
    }
    for (size_t i = 0; i < n_bytes; i++) {
        merge_symbol *sym = &s->symbols[i];
        sym->prev = (int32_t)i - 1;
        sym->next = (i + 1 == n_bytes) ? -1 : (int32_t)i + 1;
        sym->start = (uint32_t)i;
        sym->n = 1;
        sym->token = s->v->byte_token[(unsigned char)s->bytes[i]];
    }
    if (!merge_symbols_run(&s->queue, s->symbols, (int32_t)n_bytes, queue_pair, s)) {
        return false;
    }
    /* A byte whose character is no token is dropped, as llama.cpp does. */
    for (int32_t i = 0; i >= 0; i = s->symbols[i].next) {
        if (s->symbols[i].token >= 0 && !token_list_push(out, s->symbols[i].token)) {
            return false;
        }
    }
    return true;
}

/* Buffers for the whole stretch of `len` bytes. */
static bool allocate_text_buffers(bpe_session *s, size_t len)
{
    s->cps = malloc(len * sizeof *s->cps);
    s->cls = malloc(len);
    s->word_lengths = malloc(len * sizeof *s->word_lengths);
    s->split_scratch = malloc(len * sizeof *s->split_scratch);
    return s->cps && s->cls && s->word_lengths && s->split_scratch;
}

/* Buffers for words of up to `max_cps` code points (4 bytes each at most; GPT-2's alphabet
 * spends at most 2 bytes on a byte). */
static bool allocate_word_buffers(bpe_session *s, size_t max_cps)
{
    s->bytes = malloc(4 * max_cps);
    s->encoded = malloc(8 * max_cps);
    s->symbols = malloc(4 * max_cps * sizeof *s->symbols);
    return s->bytes && s->encoded && s->symbols;
}

static void free_session(bpe_session *s)
{
    free(s->cps);
    free(s->cls);
    free(s->word_lengths);
    free(s->split_scratch);
    free(s->bytes);
    free(s->encoded);
    free(s->symbols);
    merge_queue_free(&s->queue);
}

/* Tokens of one word: from the cache, or merged and then remembered. */
static bool tokenize_word(bpe_session *s, size_t n_bytes, word_cache *cache, token_list *out)
{
    const int32_t *cached;
    size_t n_cached;
    if (word_cache_get(cache, s->bytes, n_bytes, &cached, &n_cached)) {
        for (size_t i = 0; i < n_cached; i++) {
            if (!token_list_push(out, cached[i])) {
                return false;
            }
        }
        return true;
    }
    size_t before = out->count;
    return merge_word(s, n_bytes, out) &&
           word_cache_put(cache, s->bytes, n_bytes, out->data + before, out->count - before);
}

bool bpe_tokenize(const inf_vocab *v, const char *text, size_t len, word_cache *cache, token_list *out)
{
    if (len == 0) {
        return true;
    }
    bpe_session s = {.v = v};
    bool ok = allocate_text_buffers(&s, len);
    size_t n_cps = ok ? inf_utf8_decode(text, len, s.cps) : 0;
    for (size_t i = 0; i < n_cps; i++) {
        s.cls[i] = (uint8_t)inf_unicode_class_of(s.cps[i]);
    }
    size_t n_words = ok ? inf_pretokenize(v->pre, s.cps, s.cls, n_cps, s.word_lengths, s.split_scratch) : 0;
    size_t longest = 0;
    for (size_t w = 0; w < n_words; w++) {
        longest = s.word_lengths[w] > longest ? s.word_lengths[w] : longest;
    }
    ok = ok && allocate_word_buffers(&s, longest);
    size_t first = 0;
    for (size_t w = 0; ok && w < n_words; w++) {
        size_t n_bytes = 0;
        for (size_t i = first; i < first + s.word_lengths[w]; i++) {
            n_bytes += inf_utf8_encode(s.cps[i], s.bytes + n_bytes);
        }
        first += s.word_lengths[w];
        ok = tokenize_word(&s, n_bytes, cache, out);
    }
    free_session(&s);
    return ok;
}
