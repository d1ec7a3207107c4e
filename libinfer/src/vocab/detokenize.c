/* detokenize.c - tokens to bytes: each token's output bytes ("piece") are computed once at load
 * time, and detokenizing concatenates them. */
#include <stdlib.h>
#include <string.h>

#include "unicode.h"
#include "vocab_internal.h"

/* GPT-2's alphabet backwards: the byte each code point below 0x144 stands for, or -1. */
typedef struct byte_alphabet {
    int16_t byte_of[0x144];
} byte_alphabet;

static void byte_alphabet_init(byte_alphabet *a)
{
    for (uint32_t cp = 0; cp < 0x144; cp++) {
        a->byte_of[cp] = (int16_t)inf_code_point_to_byte(cp);
    }
}

/* SPM text with U+2581 turned back into spaces; returns the length written to out. */
static size_t spm_piece(const char *text, size_t len, char *out)
{
    size_t n = 0;
    for (size_t i = 0; i < len; i++) {
        if (i + 3 <= len && memcmp(text + i, "\xe2\x96\x81", 3) == 0) {
            out[n++] = ' ';
            i += 2;
        } else {
            out[n++] = text[i];
        }
    }
    return n;
}

/* Byte-level BPE text: each character stands for one byte; one outside GPT-2's alphabet (not
 * found in sane vocabularies) is kept as its UTF-8. Returns the length, SIZE_MAX when out of
 * memory. */
static size_t bpe_piece(const byte_alphabet *alphabet, const char *text, size_t len, char *out)
{
    uint32_t *cps = malloc((len ? len : 1) * sizeof *cps);
    if (!cps) {
        return SIZE_MAX;
    }
    size_t n_cps = inf_utf8_decode(text, len, cps), n = 0;
    for (size_t i = 0; i < n_cps; i++) {
        int byte = cps[i] < 0x144 ? alphabet->byte_of[cps[i]] : -1;
        if (byte >= 0) {
            out[n++] = (char)byte;
        } else {
            n += inf_utf8_encode(cps[i], out + n);
        }
    }
    free(cps);
    return n;
}

/* Append the piece of token `id` at out (room for 3x the text length) and return its length,
 * SIZE_MAX when out of memory. */
static size_t build_piece(const inf_vocab *v, const byte_alphabet *alphabet, inf_token id, char *out)
{
    size_t len;
    const char *text = vocab_text(v, id, &len);
    switch (v->types[id]) {
    case INF_TOKEN_CONTROL:
    case INF_TOKEN_UNKNOWN:
    case INF_TOKEN_USER_DEFINED:
        memcpy(out, text, len);
        return len;
    case INF_TOKEN_BYTE:
        /* validated at load: "<0xXX>" */
        out[0] = (char)strtol((char[3]){text[3], text[4], 0}, NULL, 16);
        return 1;
    case INF_TOKEN_NORMAL:
        return v->type == INF_VOCAB_SPM ? spm_piece(text, len, out) : bpe_piece(alphabet, text, len, out);
    default: /* UNDEFINED and UNUSED tokens stand for nothing */
        return 0;
    }
}

bool vocab_build_pieces(inf_vocab *v)
{
    /* A piece is never longer than its text, except U+FFFD for invalid bytes (3 bytes for 1). */
    uint64_t text_bytes = v->text_offsets[v->n_tokens];
    v->piece_offsets = malloc(((size_t)v->n_tokens + 1) * sizeof *v->piece_offsets);
    v->piece_arena = malloc((size_t)(3 * text_bytes + 1));
    if (!v->piece_offsets || !v->piece_arena) {
        return false;
    }
    byte_alphabet alphabet;
    byte_alphabet_init(&alphabet);
    uint64_t pos = 0;
    for (int32_t i = 0; i < v->n_tokens; i++) {
        v->piece_offsets[i] = pos;
        size_t n = build_piece(v, &alphabet, i, v->piece_arena + pos);
        if (n == SIZE_MAX) {
            return false;
        }
        pos += n;
    }
    v->piece_offsets[v->n_tokens] = pos;
    return true;
}

const char *inf_vocab_token_piece(const inf_vocab *v, inf_token id, size_t *len)
{
    size_t dummy;
    len = len ? len : &dummy;
    if (id < 0 || id >= v->n_tokens) {
        *len = 0;
        return NULL;
    }
    *len = (size_t)(v->piece_offsets[id + 1] - v->piece_offsets[id]);
    return v->piece_arena + v->piece_offsets[id];
}

int64_t inf_vocab_detokenize(const inf_vocab *v, const inf_token *tokens, size_t n, unsigned flags, char *buf,
                             size_t cap)
{
    bool render_special = flags & INF_DETOKENIZE_RENDER_SPECIAL;
    bool strip_prefix = (flags & INF_DETOKENIZE_STRIP_SPACE_PREFIX) && v->add_space_prefix;
    uint64_t total = 0;
    for (size_t i = 0; i < n; i++) {
        if (tokens[i] < 0 || tokens[i] >= v->n_tokens) {
            return -1;
        }
        uint8_t type = v->types[tokens[i]];
        bool special = type == INF_TOKEN_CONTROL || type == INF_TOKEN_UNKNOWN;
        if (special && !render_special) {
            continue;
        }
        size_t len;
        const char *piece = inf_vocab_token_piece(v, tokens[i], &len);
        if (strip_prefix && !special) {
            if (len > 0 && piece[0] == ' ') {
                piece++;
                len--;
            }
            strip_prefix = false;
        }
        if (total < cap) {
            memcpy(buf + total, piece, (size_t)(cap - total) < len ? (size_t)(cap - total) : len);
        }
        total += len;
    }
    return (int64_t)total;
}
