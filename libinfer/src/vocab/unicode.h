/* unicode.h - the little Unicode the tokenizers need: UTF-8 decoding that mirrors llama.cpp's
 * handling of invalid input, character classes for the pre-tokenizer regexes, and GPT-2's mapping
 * of bytes to printable code points. Private to libinfer/src/vocab. */
#ifndef INF_VOCAB_UNICODE_H
#define INF_VOCAB_UNICODE_H

#include <stddef.h>
#include <stdint.h>

/* General-category major class of a code point (low 3 bits of a class value). */
enum inf_unicode_class {
    INF_UNICODE_OTHER = 0,       /* C*: controls, format, private use, surrogates, unassigned */
    INF_UNICODE_LETTER = 1,      /* L* */
    INF_UNICODE_MARK = 2,        /* M* */
    INF_UNICODE_NUMBER = 3,      /* N* */
    INF_UNICODE_PUNCTUATION = 4, /* P* */
    INF_UNICODE_SYMBOL = 5,      /* S* */
    INF_UNICODE_SEPARATOR = 6,   /* Z* */
    INF_UNICODE_MAJOR_MASK = 7,
    INF_UNICODE_WHITESPACE = 8,  /* bit: the White_Space property, what regex \s matches */
};

/* Code point substituted for each byte that does not start a well-formed sequence. */
#define INF_UNICODE_REPLACEMENT 0xFFFDu

/* Generated tables (unicode_tables.c). */
extern const char inf_unicode_version[];
extern const uint32_t inf_unicode_ranges[];
extern const size_t inf_unicode_range_count;
extern const uint8_t inf_unicode_latin1_classes[256];

/* Class of `cp` (a major class ORed with INF_UNICODE_WHITESPACE where it applies); code points
 * above U+10FFFF are OTHER. */
unsigned inf_unicode_class_of(uint32_t cp);

static inline int inf_unicode_is_letter(unsigned cls) { return (cls & INF_UNICODE_MAJOR_MASK) == INF_UNICODE_LETTER; }
static inline int inf_unicode_is_number(unsigned cls) { return (cls & INF_UNICODE_MAJOR_MASK) == INF_UNICODE_NUMBER; }
static inline int inf_unicode_is_space(unsigned cls) { return (cls & INF_UNICODE_WHITESPACE) != 0; }

/* Bytes in the UTF-8 sequence that `lead` starts, judged from its top four bits alone (1 for a
 * stray continuation byte); what SentencePiece-style splitting uses. */
size_t inf_utf8_sequence_length(unsigned char lead);

/* Decode `len` bytes into code points. A byte that does not start a complete sequence (bad lead,
 * missing continuation, or a value above U+10FFFF) becomes one U+FFFD and decoding resumes at
 * the next byte, as llama.cpp does. `out` must hold `len` entries; returns the count written. */
size_t inf_utf8_decode(const char *text, size_t len, uint32_t *out);

/* Bytes of text[0..len) that inf_utf8_decode turns into its first `n_cps` code points. */
size_t inf_utf8_decoded_bytes(const char *text, size_t len, size_t n_cps);

/* Encode `cp` (at most U+10FFFF) as UTF-8 into `out` (4 bytes room); returns the byte count. */
size_t inf_utf8_encode(uint32_t cp, char *out);

/* GPT-2 byte-level alphabet: the code point that stands for byte `byte` in token texts. */
uint32_t inf_byte_to_code_point(unsigned char byte);

/* The byte that code point `cp` stands for in GPT-2's alphabet, or -1 when it stands for none. */
int inf_code_point_to_byte(uint32_t cp);

#endif
