/* spm.c - SentencePiece-style tokenizing of one stretch of text: start from single UTF-8
 * characters and repeatedly merge the adjacent pair whose concatenation is the token with the
 * highest score; characters that end up in no token fall back to <0xXX> byte tokens.
 * Every merge yields a token, so no symbol ever spans two adjacent bytes that occur together in
 * no token text (such as a newline and what follows it): the text is cut there into chunks that
 * are merged independently, with the same result and much smaller queues. */
#include <stdlib.h>

#include "merge_queue.h"
#include "unicode.h"
#include "vocab_internal.h"

typedef struct spm_session {
    const inf_vocab *v;
    const char *text;
    merge_symbol *symbols;
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

/* End of the chunk that starts at `start`: the first character boundary no token spans. */
static size_t chunk_end(const inf_vocab *v, const char *text, size_t start, size_t len)
{
    size_t pos = start;
    for (;;) {
        size_t n = inf_utf8_sequence_length((unsigned char)text[pos]);
        pos += n < len - pos ? n : len - pos;
        if (pos == len || !pair_in_some_token(v, (unsigned char)text[pos - 1], (unsigned char)text[pos])) {
            return pos;
        }
    }
}

static bool merge_chunk(spm_session *s, size_t len, token_list *out)
{
    int32_t n_symbols = split_characters(s, len);
    bool ok = merge_symbols_run(&s->queue, s->symbols, n_symbols, queue_pair, s);
    for (int32_t i = 0; ok && i >= 0; i = s->symbols[i].next) {
        ok = emit_symbol(s, &s->symbols[i], out);
    }
    return ok;
}

bool spm_tokenize(const inf_vocab *v, const char *text, size_t len, token_list *out)
{
    if (len == 0) {
        return true;
    }
    spm_session s = {v, text, NULL, {0}};
    size_t longest = 0;
    for (size_t start = 0, end; start < len; start = end) {
        end = chunk_end(v, text, start, len);
        longest = end - start > longest ? end - start : longest;
    }
    s.symbols = malloc(longest * sizeof *s.symbols);
    bool ok = s.symbols != NULL;
    for (size_t start = 0, end; ok && start < len; start = end) {
        end = chunk_end(v, text, start, len);
        s.text = text + start;
        ok = merge_chunk(&s, end - start, out);
    }
    merge_queue_free(&s.queue);
    free(s.symbols);
    return ok;
}
