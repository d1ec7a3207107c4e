/* pre_regex.h - the regexes of the pre-tokenizers that have no hand-written splitter, matched as
 * llama.cpp matches them: with std::regex's ECMAScript rules (backtracking, the first alternative
 * that leads to a match wins, greedy quantifiers, atomic lookaheads, `$` at the end of the word),
 * over code points whose non-ASCII whitespace reads as U+000B, or, for a regex using \p{...}
 * classes, over llama.cpp's "collapsed" text: ASCII kept, every other code point replaced by one
 * byte naming its class (whitespace 0x0B, N 0xD1, L 0xD2, P 0xD3, M 0xD4, S 0xD5, else 0xD0) and
 * each \p{...} in the regex by that byte plus the ASCII members llama.cpp lists (its \p{S} lacks
 * '~'). Private to libinfer/src/vocab. */
#ifndef INF_VOCAB_PRE_REGEX_H
#define INF_VOCAB_PRE_REGEX_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct pre_regex pre_regex;

/* Compile `pattern` (UTF-8). NULL when it uses something outside the supported subset (then
 * `why` names it) or memory runs out. Supported: literals, escapes \s \S \d \D \w \W and escaped
 * punctuation, [...] classes with ranges and negation, \p{N} \p{L} \p{P} \p{M} \p{S} \p{Lu} \p{Ll}
 * \p{Lt} \p{Lm} \p{Lo}, groups (...) (?:...), lookaheads (?=...) (?!...), | and the greedy
 * quantifiers ? * + {n} {n,} {n,m} (not over something that can match nothing), and `$`. */
pre_regex *pre_regex_compile(const char *pattern, const char **why);
void pre_regex_free(pre_regex *re);

/* Split every word of cps[0..n) (lengths in_lengths[0..n_in)) as llama.cpp splits with a
 * std::regex: the matches and the text between them become words, in order; empty matches make
 * no word. `cls` holds each code point's class (unicode.h). Writes the new lengths to out (room
 * for n entries) and returns their count, or (size_t)-1 when out of memory. */
size_t pre_regex_split(const pre_regex *re, const uint32_t *cps, const uint8_t *cls, size_t n,
                       const uint32_t *in_lengths, size_t n_in, uint32_t *out);

#endif
