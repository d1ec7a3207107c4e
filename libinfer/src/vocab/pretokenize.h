/* pretokenize.h - the regex splits that byte-level BPE vocabularies apply before merging, chosen
 * by the GGUF key tokenizer.ggml.pre. Each split is a hand-written matcher for one regex, so no
 * regex engine is needed. Private to libinfer/src/vocab. */
#ifndef INF_VOCAB_PRETOKENIZE_H
#define INF_VOCAB_PRETOKENIZE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* One regex split. Matches become words and so do the gaps between them ("isolated" splits). */
typedef enum inf_pre_split {
    /* 's|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+ */
    INF_PRE_SPLIT_GPT2,
    /* (?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|
     * \s*[\r\n]+|\s+(?!\S)|\s+ */
    INF_PRE_SPLIT_LLAMA3,
    /* The same with \p{N} instead of \p{N}{1,3}. */
    INF_PRE_SPLIT_QWEN2,
    INF_PRE_SPLIT_NUMBER_EACH,  /* \p{N} */
    INF_PRE_SPLIT_NUMBER_RUN,   /* \p{N}+ */
    INF_PRE_SPLIT_PUNCT_RUN,    /* [\p{P}\$\+<=>\^~\|]+ */
    INF_PRE_SPLIT_ASCII_DIGIT3, /* [0-9][0-9][0-9] */
} inf_pre_split;

enum { INF_PRE_MAX_SPLITS = 4 };

/* A pre-tokenizer: splits applied in order, each to every word the previous one produced. */
typedef struct inf_pretokenizer {
    const char *names;  /* the tokenizer.ggml.pre values that select it, '|'-separated */
    inf_pre_split splits[INF_PRE_MAX_SPLITS];
    int n_splits;
    bool ignore_merges; /* a word that is itself a token is emitted whole, without merging */
    bool add_bos;       /* default of tokenizer.ggml.add_bos_token for this family */
} inf_pretokenizer;

/* The pre-tokenizer for a tokenizer.ggml.pre value ("default" when the key is absent), or NULL
 * when the value is not supported. Static storage. */
const inf_pretokenizer *inf_pretokenizer_find(const char *pre_name);

/* Split code points cps[0..n) (with their classes from inf_unicode_class_of in cls[]) into words.
 * Writes each word's length in code points to lengths[] (room for n entries) and returns how many
 * words there are; `scratch` must also hold n entries. The words cover the input in order. */
size_t inf_pretokenize(const inf_pretokenizer *pre, const uint32_t *cps, const uint8_t *cls, size_t n,
                       uint32_t *lengths, uint32_t *scratch);

/* The last place p in cps[0..n) (0 < p < n) where every pre-tokenizer above ends a word whatever
 * follows, or 0 when there is none: a letter before a non-letter, a digit before a non-digit, or
 * another non-space before a digit or a space that is not CR/LF. The words of cps[0..p) are then
 * the first words of the whole text, and the words of the rest follow from cps[p..] alone (no
 * regex looks behind), so a long text can be split in pieces there with identical results. */
size_t inf_pretokenize_last_cut(const uint32_t *cps, const uint8_t *cls, size_t n);

#endif
