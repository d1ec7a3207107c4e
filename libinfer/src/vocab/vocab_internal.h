/* vocab_internal.h - the inf_vocab structure and the functions the vocab files share.
 * Private to libinfer/src/vocab. */
#ifndef INF_VOCAB_INTERNAL_H
#define INF_VOCAB_INTERNAL_H

#include <ggtk/inf_vocab.h>
#include "pretokenize.h"
#include "special_match.h"
#include "token_map.h"
#include "word_cache.h"

struct inf_vocab {
    inf_vocab_type type;
    inf_pre_program pre;        /* BPE only */
    char pre_name[64];
    int32_t n_tokens;

    /* Token texts: text of id i is text_arena[text_offsets[i] .. text_offsets[i+1] - 1), each
     * followed by a NUL that is not part of it. */
    char *text_arena;
    uint64_t *text_offsets; /* n_tokens + 1 entries */
    float *scores;          /* n_tokens entries */
    uint8_t *types;         /* inf_token_type per token */
    uint8_t *is_eog;        /* 1 for end-of-generation tokens */

    /* Decoded bytes of each token (inf_vocab_token_piece, special tokens rendered). */
    char *piece_arena;
    uint64_t *piece_offsets; /* n_tokens + 1 entries */

    inf_text_map text_to_id;
    inf_merge_map merges;          /* BPE only */
    inf_token byte_token[256];     /* the token that stands for each raw byte, or INF_TOKEN_NONE */
    uint8_t *spm_pairs;            /* SPM only: bit (a << 8 | b) set when bytes a, b are adjacent in
                                    * some token's text */

    /* Finds CONTROL, USER_DEFINED and UNKNOWN tokens in text. */
    special_matcher specials;

    inf_token bos, eos, unk, pad, sep;
    bool add_bos, add_eos, add_space_prefix;
};

/* Text of a token without bounds checks (the id must be valid). */
static inline const char *vocab_text(const inf_vocab *v, inf_token id, size_t *len)
{
    *len = (size_t)(v->text_offsets[id + 1] - v->text_offsets[id] - 1);
    return v->text_arena + v->text_offsets[id];
}

/* A growable array of token ids: the output of tokenizing. */
typedef struct token_list {
    inf_token *data;
    size_t count, capacity;
} token_list;

/* Append a token; false when out of memory. */
bool token_list_push(token_list *list, inf_token token);

/* `data` (room for *cap items of `item` bytes) with room for `need` items: reallocated when
 * needed, updating *cap. NULL when out of memory; `data` is then unchanged and still owned. */
void *vocab_reserve(void *data, size_t *cap, size_t need, size_t item);

/* Text is tokenized in pieces of at most this many bytes, so that memory stays bounded whatever
 * the text. Pieces are cut where the result is the same as for the whole text. Where there is no
 * such place, a single pre-tokenizer word (class-change BPE families) or run of characters that
 * tokens join (SPM) longer than this is cut regardless, which no real text has (llama.cpp has no
 * such limit and would need gigabytes); for the BPE families that cut only after a line break
 * (pretokenize.h), the piece grows instead, so that ids stay exact on long indented text. */
enum { VOCAB_PIECE_BYTES = 256 * 1024 };

/* Append the tokens of one stretch of text with no special tokens in it, working in pieces of at
 * most `piece_cap` bytes (at least 64; VOCAB_PIECE_BYTES but in tests). SPM: spaces are written
 * as U+2581, with one more before the text when `space_prefix`. BPE: pre-tokenized, byte-encoded
 * and merged, remembering words in `cache` (which the caller keeps for one tokenize call). Both
 * return false when out of memory. */
bool spm_tokenize(const inf_vocab *v, const char *text, size_t len, bool space_prefix, size_t piece_cap,
                  token_list *out);
bool bpe_tokenize(const inf_vocab *v, const char *text, size_t len, size_t piece_cap, word_cache *cache,
                  token_list *out);

/* Build spm_pairs from the token texts; false when out of memory. */
bool spm_build_pair_table(inf_vocab *v);

/* Build piece_arena/piece_offsets from the token texts; false when out of memory. */
bool vocab_build_pieces(inf_vocab *v);

#endif
