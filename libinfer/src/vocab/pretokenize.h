/* pretokenize.h - the regex splits that byte-level BPE vocabularies apply before merging, chosen
 * by the GGUF key tokenizer.ggml.pre: one table, pre-tokenizer name -> the regexes llama.cpp
 * applies in order (each to every word the previous one produced) and the family's flags. The
 * regexes llama.cpp runs with hand-written code have hand-written matchers here too (pretokenize.c,
 * pretokenize_splits.c); every other regex runs on the small engine of pre_regex.c. Private to
 * libinfer (the converter reads the table through inf_pretokenizer_find). */
#ifndef INF_VOCAB_PRETOKENIZE_H
#define INF_VOCAB_PRETOKENIZE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "pre_regex.h"

/* How one regex of a pre-tokenizer is applied. */
typedef enum inf_pre_split {
    INF_PRE_SPLIT_REGEX,        /* the regex engine (pre_regex.h), as llama.cpp's std::regex */
    /* llama.cpp's hand-written splitters, which differ from their regexes in small ways (GPT-2's
     * also ends with \s+): */
    INF_PRE_SPLIT_GPT2,         /* 's|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+ */
    INF_PRE_SPLIT_LLAMA3,       /* contractions|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|
                                 * \s*[\r\n]+|\s+(?!\S)|\s+ */
    INF_PRE_SPLIT_QWEN2,        /* the same with \p{N} instead of \p{N}{1,3} */
    INF_PRE_SPLIT_QWEN35,       /* Qwen2's with marks joining letters: [\p{L}\p{M}]+ */
    INF_PRE_SPLIT_KIMI_K2,      /* Han runs, then GPT-4o-like words without Han, \p{N}{1,3}, ... */
    INF_PRE_SPLIT_DIGIT_GROUPS, /* digit runs in groups of three from the right (AFMoE, Tiny Aya) */
    INF_PRE_SPLIT_NEWLINE_RUNS, /* [^\n]+|[\n]+ */
    /* simple regexes with exact hand-written equivalents (faster than the engine): */
    INF_PRE_SPLIT_NUMBER_EACH,  /* \p{N} */
    INF_PRE_SPLIT_NUMBER_RUN,   /* \p{N}+ */
    INF_PRE_SPLIT_PUNCT_RUN,    /* [\p{P}\$\+<=>\^~\|]+ */
    INF_PRE_SPLIT_ASCII_DIGIT3, /* [0-9][0-9][0-9] */
} inf_pre_split;

enum { INF_PRE_MAX_SPLITS = 6 };

/* One step of a pre-tokenizer: the regex as llama.cpp lists it and how it is applied here. */
typedef struct inf_pre_step {
    inf_pre_split split;
    const char *regex;
} inf_pre_step;

/* A pre-tokenizer: a row of the table. */
typedef struct inf_pretokenizer {
    const char *names;  /* the tokenizer.ggml.pre values that select it, '|'-separated */
    inf_pre_step steps[INF_PRE_MAX_SPLITS];
    int n_steps;
    bool ignore_merges; /* a word that is itself a token is emitted whole, without merging */
    bool add_bos;       /* default of tokenizer.ggml.add_bos_token for this family */
    bool no_bos;        /* no default BOS token id (ChatGLM) */
    bool merges_optional; /* the vocabulary may come without merges (Kimi-K2) */
    bool words_span_lines; /* words may hold LFs (SuperBPE splits only numbers off): long texts are
                            * cut before numbers instead of after an LF */
} inf_pretokenizer;

/* The pre-tokenizer for a tokenizer.ggml.pre value ("default" when the key is absent), or NULL
 * when the value is not supported. Static storage. */
const inf_pretokenizer *inf_pretokenizer_find(const char *pre_name);

/* A pre-tokenizer ready to run: its engine regexes compiled. */
typedef struct inf_pre_program {
    const inf_pretokenizer *def;
    pre_regex *regex[INF_PRE_MAX_SPLITS]; /* for INF_PRE_SPLIT_REGEX steps, else NULL */
    bool cut_at_class_change; /* every step ends words where inf_pretokenize_last_cut says */
} inf_pre_program;

/* Compile `def` into `prog`; false (with `why` naming the problem) when a regex is outside the
 * engine's subset or memory runs out. Free with inf_pre_program_free (also after a failure). */
bool inf_pre_program_init(inf_pre_program *prog, const inf_pretokenizer *def, const char **why);
void inf_pre_program_free(inf_pre_program *prog);

/* Split code points cps[0..n) (with their classes from inf_unicode_class_of in cls[]) into words.
 * Writes each word's length in code points to lengths[] (room for n entries) and returns how many
 * words there are, or (size_t)-1 when out of memory; `scratch` must also hold n entries. The
 * words cover the input in order. */
size_t inf_pretokenize(const inf_pre_program *prog, const uint32_t *cps, const uint8_t *cls, size_t n,
                       uint32_t *lengths, uint32_t *scratch);

/* The last place p in cps[0..n) (0 < p < n) where the program ends a word whatever follows, or 0
 * when there is none; the words of cps[0..p) are then the first words of the whole text, and the
 * words of the rest follow from cps[p..] alone, so a long text can be split in pieces there with
 * identical results. For the hand-written GPT-2/Llama 3/Qwen 2 families: a letter before a
 * non-letter, a digit before a non-digit, or another non-space before a digit or a space that is
 * not CR/LF. For the others: after a lone LF between a non-space and a letter, or where
 * words_span_lines, before a number that follows a non-number. */
size_t inf_pretokenize_last_cut(const inf_pre_program *prog, const uint32_t *cps, const uint8_t *cls, size_t n);

/* Hand-written splits (pretokenize_splits.c): split word [start, end) of cps by `split` (any
 * kind but INF_PRE_SPLIT_REGEX), appending the pieces' lengths to out; returns the count. */
size_t inf_pre_split_word(inf_pre_split split, const uint32_t *cps, const uint8_t *cls, size_t start, size_t end,
                          uint32_t *out);

#endif
