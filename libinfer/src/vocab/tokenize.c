/* tokenize.c - text to tokens: special tokens are cut out of the text (special_match.c, with
 * llama.cpp's rule), each stretch between them goes to the SPM or BPE tokenizer as it is found,
 * and BOS/EOS are added as the vocabulary asks. */
#include <stdlib.h>

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

void *vocab_reserve(void *data, size_t *cap, size_t need, size_t item)
{
    if (need <= *cap && data) {
        return data;
    }
    size_t cap2 = *cap ? *cap : 64;
    while (cap2 < need) {
        cap2 *= 2;
    }
    void *grown = realloc(data, cap2 * item);
    if (grown) {
        *cap = cap2;
    }
    return grown;
}

/* Where the pieces of the partition go, in text order. */
typedef struct tokenize_run {
    const inf_vocab *v;
    const char *text;
    word_cache cache;   /* BPE: words of this call already merged */
    bool after_special; /* the start of the input counts as following a special token */
    token_list *out;
} tokenize_run;

/* special_piece_fn: a special token is output as is; the text between goes to SPM or BPE. */
static bool tokenize_piece(void *ctx, inf_token token, size_t start, size_t len)
{
    tokenize_run *run = ctx;
    if (token != INF_TOKEN_NONE) {
        run->after_special = true;
        return token_list_push(run->out, token);
    }
    if (run->v->type == INF_VOCAB_SPM) {
        /* With a space prefix, SPM adds a space before the input and after each special token. */
        bool space_prefix = run->v->add_space_prefix && run->after_special;
        run->after_special = false;
        return spm_tokenize(run->v, run->text + start, len, space_prefix, VOCAB_PIECE_BYTES, run->out);
    }
    return bpe_tokenize(run->v, run->text + start, len, VOCAB_PIECE_BYTES, &run->cache, run->out);
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
    int mode = (flags & INF_TOKENIZE_PARSE_SPECIAL) ? SPECIAL_ALL : SPECIAL_USER_DEFINED_ONLY;
    token_list out = {0};
    tokenize_run run = {.v = v, .text = text, .after_special = true, .out = &out};
    bool ok = !add_special || !inf_vocab_adds_bos(v) || token_list_push(&out, v->bos);
    ok = ok && special_partition(&v->specials, text, len, mode, tokenize_piece, &run, NULL);
    if (ok && add_special && inf_vocab_adds_eos(v)) {
        ok = token_list_push(&out, v->eos);
    }
    word_cache_free(&run.cache);
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
