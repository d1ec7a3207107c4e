/* bpe.c - byte-level BPE tokenizing of one stretch of text: the pre-tokenizer splits it into
 * words; each word starts as one symbol per byte (the byte's token in GPT-2's alphabet) and the
 * adjacent pair with the lowest merge rank is merged until no ranked pair is left. The stretch is
 * decoded and split in pieces of bounded size, cut where the words come out the same, so memory
 * does not grow with the stretch. */
#include <stdlib.h>

#include "merge_queue.h"
#include "unicode.h"
#include "word_cache.h"
#include "vocab_internal.h"

typedef struct bpe_session {
    const inf_vocab *v;
    /* the piece of text being split, decoded (room for `piece_cap` code points) */
    uint32_t *cps;
    uint8_t *cls;
    uint32_t *word_lengths, *split_scratch;
    /* the word being merged; buffers grow to the longest word met */
    char *bytes;            /* its UTF-8 */
    size_t bytes_cap;
    char *encoded;          /* its bytes in GPT-2's alphabet, for ignore_merges lookups */
    size_t encoded_cap;
    merge_symbol *symbols;  /* one per byte */
    size_t symbols_cap;
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
    if (s->v->pre.def->ignore_merges) {
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

/* Buffers for pieces of up to `cap` bytes (grown from a smaller size, or first made). */
static bool allocate_piece_buffers(bpe_session *s, size_t cap)
{
    uint32_t *cps = realloc(s->cps, cap * sizeof *cps);
    s->cps = cps ? cps : s->cps;
    uint8_t *cls = realloc(s->cls, cap);
    s->cls = cls ? cls : s->cls;
    uint32_t *lengths = realloc(s->word_lengths, cap * sizeof *lengths);
    s->word_lengths = lengths ? lengths : s->word_lengths;
    uint32_t *scratch = realloc(s->split_scratch, cap * sizeof *scratch);
    s->split_scratch = scratch ? scratch : s->split_scratch;
    return cps && cls && lengths && scratch;
}

/* Room for a word of `n_cps` code points in s->bytes (4 bytes each at most). */
static bool reserve_word_text(bpe_session *s, size_t n_cps)
{
    char *bytes = vocab_reserve(s->bytes, &s->bytes_cap, 4 * n_cps, 1);
    s->bytes = bytes ? bytes : s->bytes;
    return bytes != NULL;
}

/* Room to merge a word of `n_bytes` bytes (GPT-2's alphabet spends at most 2 bytes on a byte). */
static bool reserve_word_merge(bpe_session *s, size_t n_bytes)
{
    char *encoded = vocab_reserve(s->encoded, &s->encoded_cap, 2 * n_bytes, 1);
    s->encoded = encoded ? encoded : s->encoded;
    merge_symbol *symbols = vocab_reserve(s->symbols, &s->symbols_cap, n_bytes, sizeof *symbols);
    s->symbols = symbols ? symbols : s->symbols;
    return encoded && symbols;
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

/* Bytes before `cap` where a character starts (backing over at most 3 continuation bytes), so that
 * a piece cut inside a word does not cut a character too. */
static size_t character_start_before(const char *text, size_t cap)
{
    size_t end = cap;
    while (end > cap - 3 && ((unsigned char)text[end] & 0xC0) == 0x80) {
        end--;
    }
    return end;
}

/* Decode the next piece of text[0..len) into s->cps/s->cls and return its code points, with the
 * bytes they came from in *used: the whole rest when it fits in `cap` bytes; else up to the last
 * place where the pre-tokenizer ends a word whatever follows, so that the pieces give the words of
 * the whole; else the first cap bytes, cut at a character start, with *exact set false. */
static size_t decode_piece(bpe_session *s, const char *text, size_t len, size_t cap, size_t *used, bool *exact)
{
    *exact = true;
    size_t window = len <= cap ? len : character_start_before(text, cap);
    size_t n_cps = inf_utf8_decode(text, window, s->cps);
    for (size_t i = 0; i < n_cps; i++) {
        s->cls[i] = (uint8_t)inf_unicode_class_of(s->cps[i]);
    }
    *used = window;
    if (window == len) {
        return n_cps;
    }
    /* The last few code points may come from a sequence the window cut short: not looked at. */
    size_t cut = inf_pretokenize_last_cut(&s->v->pre, s->cps, s->cls, n_cps > 4 ? n_cps - 4 : 0);
    if (cut == 0) {
        *exact = false;
        return n_cps;
    }
    *used = inf_utf8_decoded_bytes(text, window, cut);
    return cut;
}

/* Split the decoded piece into words and append each word's tokens. */
static bool tokenize_piece(bpe_session *s, size_t n_cps, word_cache *cache, token_list *out)
{
    size_t n_words = inf_pretokenize(&s->v->pre, s->cps, s->cls, n_cps, s->word_lengths, s->split_scratch);
    if (n_words == (size_t)-1) {
        return false;
    }
    size_t first = 0;
    for (size_t w = 0; w < n_words; w++) {
        if (!reserve_word_text(s, s->word_lengths[w])) {
            return false;
        }
        size_t n_bytes = 0;
        for (size_t i = first; i < first + s->word_lengths[w]; i++) {
            n_bytes += inf_utf8_encode(s->cps[i], s->bytes + n_bytes);
        }
        first += s->word_lengths[w];
        if (!reserve_word_merge(s, n_bytes) || !tokenize_word(s, n_bytes, cache, out)) {
            return false;
        }
    }
    return true;
}

bool bpe_tokenize(const inf_vocab *v, const char *text, size_t len, size_t piece_cap, word_cache *cache,
                  token_list *out)
{
    if (len == 0) {
        return true;
    }
    bpe_session s = {.v = v};
    size_t cap = len < piece_cap ? len : piece_cap;
    bool ok = allocate_piece_buffers(&s, cap);
    for (size_t pos = 0; ok && pos < len;) {
        size_t used;
        bool exact;
        size_t n_cps = decode_piece(&s, text + pos, len - pos, cap, &used, &exact);
        /* With no place to cut, a class-change family has met one word longer than the piece (no
         * real text; cut anyway); a line-cut family has met, say, indented text without a line
         * that starts with a letter: the piece grows until one comes, to stay exact. */
        if (!exact && !v->pre.cut_at_class_change) {
            cap = (len - pos) / 2 > cap ? 2 * cap : len - pos;
            ok = allocate_piece_buffers(&s, cap);
            continue;
        }
        ok = tokenize_piece(&s, n_cps, cache, out);
        pos += used;
    }
    free_session(&s);
    return ok;
}
