/* spm.c - SentencePiece-style tokenizing of one stretch of text: spaces become U+2581, then,
 * starting from single UTF-8 characters, the adjacent pair whose concatenation is the token with
 * the highest score is merged until none is left; characters that end up in no token fall back
 * to <0xXX> byte tokens.
 * Every merge yields a token, so no symbol ever spans two adjacent bytes that occur together in
 * no token text (such as a newline and what follows it): the text is cut there into chunks that
 * are merged independently, with the same result and much smaller queues. The text is escaped a
 * window at a time and each chunk merged as soon as it is complete, so memory stays bounded. */
#include <stdlib.h>
#include <string.h>

#include "merge_queue.h"
#include "unicode.h"
#include "vocab_internal.h"

typedef struct spm_session {
    const inf_vocab *v;
    char *escaped;          /* a window of the text with spaces as U+2581 */
    size_t escaped_len;
    const char *text;       /* the chunk being merged, in `escaped` */
    merge_symbol *symbols;  /* one per character of the chunk */
    size_t symbols_cap;
    merge_queue queue;
} spm_session;

/* merge_offer_fn: queue the pair when their text together is a token. */
static bool queue_pair(void *session, int32_t left, int32_t right)
{
    spm_session *s = session;
    const merge_symbol *l = &s->symbols[left];
    const merge_symbol *r = &s->symbols[right];
    uint32_t size = l->n + r->n;
    int32_t token = inf_text_map_get(&s->v->text_to_id, s->text + l->start, size);
    if (token < 0) {
        return true;
    }
    merge_candidate c = {-(double)s->v->scores[token], left, right, token, size};
    return merge_queue_push(&s->queue, c);
}

/* One character per symbol, chained; SPM splits by lead byte without validating the rest. */
static int32_t split_characters(spm_session *s, size_t len)
{
    int32_t count = 0;
    for (size_t pos = 0; pos < len;) {
        size_t n = inf_utf8_sequence_length((unsigned char)s->text[pos]);
        if (n > len - pos) {
            n = len - pos;
        }
        merge_symbol *sym = &s->symbols[count];
        sym->prev = count - 1;
        sym->next = (pos + n == len) ? -1 : count + 1;
        sym->start = (uint32_t)pos;
        sym->n = (uint32_t)n;
        sym->token = -1;
        count++;
        pos += n;
    }
    return count;
}

static bool emit_symbol(const spm_session *s, const merge_symbol *sym, token_list *out)
{
    int32_t token = sym->token;
    if (token < 0) {
        token = inf_text_map_get(&s->v->text_to_id, s->text + sym->start, sym->n);
    }
    if (token >= 0) {
        return token_list_push(out, token);
    }
    for (uint32_t i = 0; i < sym->n; i++) {
        inf_token byte = s->v->byte_token[(unsigned char)s->text[sym->start + i]];
        if (byte == INF_TOKEN_NONE) {
            byte = s->v->unk; /* a vocabulary without that byte token */
        }
        if (byte != INF_TOKEN_NONE && !token_list_push(out, byte)) {
            return false;
        }
    }
    return true;
}

bool spm_build_pair_table(inf_vocab *v)
{
    v->spm_pairs = calloc(256 * 256 / 8, 1);
    if (!v->spm_pairs) {
        return false;
    }
    for (int32_t id = 0; id < v->n_tokens; id++) {
        size_t len;
        const unsigned char *text = (const unsigned char *)vocab_text(v, id, &len);
        for (size_t i = 1; i < len; i++) {
            unsigned pair = (unsigned)text[i - 1] << 8 | text[i];
            v->spm_pairs[pair >> 3] |= (uint8_t)(1u << (pair & 7));
        }
    }
    return true;
}

static bool pair_in_some_token(const inf_vocab *v, unsigned char a, unsigned char b)
{
    unsigned pair = (unsigned)a << 8 | b;
    return v->spm_pairs[pair >> 3] & (1u << (pair & 7));
}

/* End of the chunk that starts at `start` in text[0..len): the first character boundary no token
 * spans, or the first one `cap` or more bytes on (a run that long is cut there). 0 when the chunk
 * reaches `len` and `more` text is to come: it may go on. */
static size_t chunk_end(const inf_vocab *v, const char *text, size_t start, size_t len, size_t cap, bool more)
{
    size_t pos = start;
    for (;;) {
        size_t n = inf_utf8_sequence_length((unsigned char)text[pos]);
        if (n > len - pos) {
            if (more) {
                return 0;
            }
            n = len - pos;
        }
        pos += n;
        if (pos - start >= cap) {
            return pos;
        }
        if (pos == len) {
            return more ? 0 : pos;
        }
        if (!pair_in_some_token(v, (unsigned char)text[pos - 1], (unsigned char)text[pos])) {
            return pos;
        }
    }
}

static bool merge_chunk(spm_session *s, const char *chunk, size_t len, token_list *out)
{
    merge_symbol *symbols = vocab_reserve(s->symbols, &s->symbols_cap, len, sizeof *symbols);
    if (!symbols) {
        return false;
    }
    s->symbols = symbols;
    s->text = chunk;
    int32_t n_symbols = split_characters(s, len);
    bool ok = merge_symbols_run(&s->queue, s->symbols, n_symbols, queue_pair, s);
    for (int32_t i = 0; ok && i >= 0; i = s->symbols[i].next) {
        ok = emit_symbol(s, &s->symbols[i], out);
    }
    return ok;
}

/* Append text[*pos..len) to the window, spaces as U+2581, until it holds `want` bytes. */
static void escape_more(spm_session *s, const char *text, size_t len, size_t *pos, size_t want)
{
    while (s->escaped_len < want && *pos < len) {
        char c = text[(*pos)++];
        if (c == ' ') {
            memcpy(s->escaped + s->escaped_len, "\xe2\x96\x81", 3);
            s->escaped_len += 3;
        } else {
            s->escaped[s->escaped_len++] = c;
        }
    }
}

/* Merge the complete chunks of the window and keep the last one when it may go on. */
static bool merge_window(spm_session *s, size_t cap, bool more, token_list *out)
{
    size_t start = 0, end;
    bool ok = true;
    while (ok && start < s->escaped_len &&
           (end = chunk_end(s->v, s->escaped, start, s->escaped_len, cap, more)) != 0) {
        ok = merge_chunk(s, s->escaped + start, end - start, out);
        start = end;
    }
    memmove(s->escaped, s->escaped + start, s->escaped_len - start);
    s->escaped_len -= start;
    return ok;
}

bool spm_tokenize(const inf_vocab *v, const char *text, size_t len, bool space_prefix, size_t piece_cap,
                  token_list *out)
{
    /* The window is refilled to two caps, so a chunk kept back (less than one cap) always leaves
     * room for at least a cap of new text: each byte is scanned a bounded number of times. A
     * text shorter than a cap fits whole (3 bytes for each space and the prefix at most). */
    size_t want = piece_cap > len ? 3 * len + 3 : 2 * piece_cap;
    spm_session s = {.v = v, .escaped = malloc(want + 8)};
    bool ok = s.escaped != NULL;
    if (ok && space_prefix) {
        memcpy(s.escaped, "\xe2\x96\x81", 3);
        s.escaped_len = 3;
    }
    for (size_t pos = 0; ok;) {
        escape_more(&s, text, len, &pos, want);
        bool more = pos < len;
        ok = merge_window(&s, piece_cap, more, out);
        if (!more) {
            break;
        }
    }
    merge_queue_free(&s.queue);
    free(s.symbols);
    free(s.escaped);
    return ok;
}
