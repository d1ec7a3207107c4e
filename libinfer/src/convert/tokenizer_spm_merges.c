/* tokenizer_spm_merges.c - BPE merges that make `tokenizers` reproduce llama.cpp's SentencePiece
 * tokenizer. That tokenizer starts from characters and repeatedly merges the adjacent pair whose
 * concatenation is the token of highest score (the leftmost on ties). A BPE model does the same
 * with ranks, so every split of a token into two tokens becomes a merge, ranked by the score of
 * the token it makes (higher first; equal scores by token id, then by the left part's length). */
#include "convert/tokenizer_export.h"

#include <stdlib.h>
#include <string.h>

#include "convert/tokenizer_internal.h"

typedef struct spm_merge {
    float score;
    uint32_t id;       /* the merged token */
    uint32_t left_len; /* bytes of the left part */
} spm_merge;

static int merge_order(const void *a, const void *b)
{
    const spm_merge *x = a, *y = b;
    if (x->score != y->score) {
        return x->score > y->score ? -1 : 1;
    }
    if (x->id != y->id) {
        return x->id < y->id ? -1 : 1;
    }
    return (x->left_len > y->left_len) - (x->left_len < y->left_len);
}

/* Whether text[0..len) is a token of `vocab`; uses a NUL-terminated copy in buf. */
static bool in_vocab(const json_t *vocab, const char *text, size_t len, char *buf)
{
    memcpy(buf, text, len);
    buf[len] = '\0';
    return json_object_get(vocab, buf) != NULL;
}

static bool append(spm_merge **list, size_t *n, size_t *cap, spm_merge m)
{
    if (*n == *cap) {
        size_t grown = *cap ? *cap * 2 : 4096;
        spm_merge *p = realloc(*list, grown * sizeof *p);
        if (!p) {
            return false;
        }
        *list = p;
        *cap = grown;
    }
    (*list)[(*n)++] = m;
    return true;
}

/* Every split of token `id` (at character boundaries) into two tokens. */
static bool collect_splits(const gguf_tokenizer *t, const json_t *vocab, uint32_t id, char *buf, spm_merge **list,
                           size_t *n, size_t *cap)
{
    const ggtk_string *s = &t->tokens[id];
    const json_t *own = json_object_getn(vocab, s->data, s->len);
    if (!own || json_integer_value(own) != (json_int_t)id || export_token_type(t, id) == TOK_BYTE) {
        return true; /* placeholders, later duplicates and byte tokens are never made by merging */
    }
    for (size_t k = 1; k < s->len; k++) {
        if (((unsigned char)s->data[k] & 0xC0) == 0x80) {
            continue; /* inside a character */
        }
        if (in_vocab(vocab, s->data, k, buf) && in_vocab(vocab, s->data + k, s->len - k, buf)) {
            spm_merge m = {t->scores ? t->scores[id] : 0.0f, id, (uint32_t)k};
            if (!append(list, n, cap, m)) {
                return false;
            }
        }
    }
    return true;
}

bool export_spm_merges(const gguf_tokenizer *t, const json_t *vocab, json_t *merges, ggtk_error *err)
{
    size_t max_len = 0;
    for (uint64_t id = 0; id < t->n_tokens; id++) {
        max_len = t->tokens[id].len > max_len ? t->tokens[id].len : max_len;
    }
    char *buf = malloc(max_len + 1);
    spm_merge *list = NULL;
    size_t n = 0, cap = 0;
    bool ok = buf != NULL;
    for (uint64_t id = 0; ok && id < t->n_tokens; id++) {
        ok = collect_splits(t, vocab, (uint32_t)id, buf, &list, &n, &cap);
    }
    if (ok) {
        qsort(list, n, sizeof *list, merge_order);
    }
    for (size_t i = 0; ok && i < n; i++) {
        const ggtk_string *s = &t->tokens[list[i].id];
        size_t k = list[i].left_len;
        json_t *pair = json_pack("[s%, s%]", s->data, k, s->data + k, (size_t)(s->len - k));
        ok = pair && json_array_append_new(merges, pair) == 0;
    }
    if (!ok) {
        ggtk_error_set(err, GGTK_ERR_NOMEM, GGTK_NO_OFFSET, "%s: out of memory ranking the SentencePiece merges", t->path);
    }
    free(list);
    free(buf);
    return ok;
}
