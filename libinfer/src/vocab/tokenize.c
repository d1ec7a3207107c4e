/* tokenize.c - text to tokens: special tokens are cut out of the text first (longest text first,
 * as llama.cpp), then each remaining stretch goes to the SPM or BPE tokenizer, and BOS/EOS are
 * added as the vocabulary asks. */
#include <stdlib.h>
#include <string.h>

#include "vocab_internal.h"

bool token_list_push(token_list *list, inf_token token)
{
    if (list->count == list->capacity) {
        size_t capacity = list->capacity ? 2 * list->capacity : 256;
        inf_token *data = realloc(list->data, capacity * sizeof *data);
        if (!data) {
            return false;
        }
        list->data = data;
        list->capacity = capacity;
    }
    list->data[list->count++] = token;
    return true;
}

/* A piece of the input: a stretch of text still to tokenize, or a special token found in it. */
typedef struct fragment {
    inf_token token; /* INF_TOKEN_NONE for text */
    size_t start, len;
} fragment;

typedef struct fragment_list {
    fragment *data;
    size_t count, capacity;
} fragment_list;

static bool fragment_push(fragment_list *list, inf_token token, size_t start, size_t len)
{
    if (list->count == list->capacity) {
        size_t capacity = list->capacity ? 2 * list->capacity : 16;
        fragment *data = realloc(list->data, capacity * sizeof *data);
        if (!data) {
            return false;
        }
        list->data = data;
        list->capacity = capacity;
    }
    list->data[list->count++] = (fragment){token, start, len};
    return true;
}

/* Cut every occurrence of `special` out of the text fragments of *in, into *out. */
static bool cut_special(const inf_vocab *v, const char *text, inf_token special, const fragment_list *in,
                        fragment_list *out)
{
    size_t special_len;
    const char *special_text = vocab_text(v, special, &special_len);
    out->count = 0;
    for (size_t f = 0; f < in->count; f++) {
        fragment frag = in->data[f];
        if (frag.token != INF_TOKEN_NONE) {
            if (!fragment_push(out, frag.token, frag.start, frag.len)) {
                return false;
            }
            continue;
        }
        size_t pos = frag.start, end = frag.start + frag.len;
        const char *hit;
        while ((hit = memmem(text + pos, end - pos, special_text, special_len)) != NULL) {
            size_t at = (size_t)(hit - text);
            if ((at > pos && !fragment_push(out, INF_TOKEN_NONE, pos, at - pos)) ||
                !fragment_push(out, special, at, special_len)) {
                return false;
            }
            pos = at + special_len;
        }
        if (end > pos && !fragment_push(out, INF_TOKEN_NONE, pos, end - pos)) {
            return false;
        }
    }
    return true;
}

/* Split text into fragments. CONTROL and UNKNOWN tokens are looked for only when parse_special;
 * USER_DEFINED ones always. */
static bool partition(const inf_vocab *v, const char *text, size_t len, bool parse_special, fragment_list *result)
{
    fragment_list a = {0}, b = {0};
    bool ok = len == 0 || fragment_push(&a, INF_TOKEN_NONE, 0, len);
    for (int32_t i = 0; ok && i < v->n_special_tokens && a.count > 0; i++) {
        inf_token special = v->special_tokens[i];
        if (!parse_special && v->types[special] != INF_TOKEN_USER_DEFINED) {
            continue;
        }
        ok = cut_special(v, text, special, &a, &b);
        fragment_list swap = a;
        a = b;
        b = swap;
    }
    free(b.data);
    *result = a;
    return ok;
}

/* SPM sees spaces as U+2581 and, with a space prefix, one more space before each stretch of text
 * that starts the input or follows a special token. */
static bool spm_fragment(const inf_vocab *v, const char *text, size_t len, bool after_special, token_list *out)
{
    bool prefix = v->add_space_prefix && after_special;
    char *escaped = malloc(3 * (len + 1));
    if (!escaped) {
        return false;
    }
    size_t n = 0;
    for (size_t i = 0; i < len + prefix; i++) {
        char c = (prefix && i == 0) ? ' ' : text[i - prefix];
        if (c == ' ') {
            memcpy(escaped + n, "\xe2\x96\x81", 3);
            n += 3;
        } else {
            escaped[n++] = c;
        }
    }
    bool ok = spm_tokenize(v, escaped, n, out);
    free(escaped);
    return ok;
}

static bool tokenize_fragments(const inf_vocab *v, const char *text, const fragment_list *frags, token_list *out)
{
    word_cache cache = {0};
    bool ok = true;
    bool after_special = true; /* the start of the input counts as following a special token */
    for (size_t f = 0; ok && f < frags->count; f++) {
        const fragment *frag = &frags->data[f];
        if (frag->token != INF_TOKEN_NONE) {
            ok = token_list_push(out, frag->token);
            after_special = true;
        } else if (v->type == INF_VOCAB_SPM) {
            ok = spm_fragment(v, text + frag->start, frag->len, after_special, out);
            after_special = false;
        } else {
            ok = bpe_tokenize(v, text + frag->start, frag->len, &cache, out);
        }
    }
    word_cache_free(&cache);
    return ok;
}

ggtk_status inf_vocab_tokenize(const inf_vocab *v, const char *text, size_t len, unsigned flags,
                               inf_token **tokens, size_t *n_tokens, ggtk_error *err)
{
    *tokens = NULL;
    *n_tokens = 0;
    if (len >= UINT32_MAX) {
        return ggtk_error_set(err, GGTK_ERR_OVERFLOW, GGTK_NO_OFFSET,
                              "tokenize: %zu bytes of text; at most 4 GiB - 1 supported", len);
    }
    bool add_special = flags & INF_TOKENIZE_ADD_SPECIAL;
    fragment_list frags = {0};
    token_list out = {0};
    bool ok = partition(v, text, len, flags & INF_TOKENIZE_PARSE_SPECIAL, &frags);
    if (ok && add_special && inf_vocab_adds_bos(v)) {
        ok = token_list_push(&out, v->bos);
    }
    ok = ok && tokenize_fragments(v, text, &frags, &out);
    if (ok && add_special && inf_vocab_adds_eos(v)) {
        ok = token_list_push(&out, v->eos);
    }
    free(frags.data);
    if (!ok) {
        free(out.data);
        return ggtk_error_set(err, GGTK_ERR_NOMEM, GGTK_NO_OFFSET,
                              "tokenize: out of memory for %zu bytes of text", len);
    }
    if (out.count == 0) {
        free(out.data);
        out.data = NULL;
    }
    *tokens = out.data;
    *n_tokens = out.count;
    return GGTK_OK;
}
