/* pretokenize_splits.c - hand-written matchers for the pre-tokenizer regexes llama.cpp splits
 * with hand-written code (and a few simple ones). Each matcher answers "how long is the match
 * starting here" within one word [pos, end) of the previous split; the end of a word counts as the
 * end of the text, as when the regex runs on each word separately (that is how both llama.cpp and
 * HF chain splits). Where llama.cpp's code differs from its regex, the code is followed. */
#include <string.h>

#include "pretokenize.h"
#include "unicode.h"

/* The text being split: code points, their classes, and the end of the current word. */
typedef struct split_text {
    const uint32_t *cp;
    const uint8_t *cls;
    size_t end;
} split_text;

static bool is_letter_at(const split_text *t, size_t i) { return i < t->end && inf_unicode_is_letter(t->cls[i]); }
static bool is_number_at(const split_text *t, size_t i) { return i < t->end && inf_unicode_is_number(t->cls[i]); }
static bool is_space_at(const split_text *t, size_t i) { return i < t->end && inf_unicode_is_space(t->cls[i]); }
static bool is_newline_at(const split_text *t, size_t i) { return i < t->end && (t->cp[i] == '\r' || t->cp[i] == '\n'); }

/* [^\s\p{L}\p{N}] */
static bool is_other_at(const split_text *t, size_t i)
{
    return i < t->end && !inf_unicode_is_space(t->cls[i]) && !inf_unicode_is_letter(t->cls[i]) &&
           !inf_unicode_is_number(t->cls[i]);
}

static uint32_t ascii_lower(uint32_t c) { return c >= 'A' && c <= 'Z' ? c + 32 : c; }

/* 's|'t|'re|'ve|'m|'ll|'d, ASCII-case-insensitive when `any_case`; returns 0, 2 or 3. */
static size_t match_contraction(const split_text *t, size_t pos, bool any_case)
{
    if (t->cp[pos] != '\'' || pos + 1 >= t->end) {
        return 0;
    }
    uint32_t c1 = any_case ? ascii_lower(t->cp[pos + 1]) : t->cp[pos + 1];
    if (c1 == 's' || c1 == 't' || c1 == 'm' || c1 == 'd') {
        return 2;
    }
    if (pos + 2 >= t->end) {
        return 0;
    }
    uint32_t c2 = any_case ? ascii_lower(t->cp[pos + 2]) : t->cp[pos + 2];
    if ((c1 == 'r' && c2 == 'e') || (c1 == 'v' && c2 == 'e') || (c1 == 'l' && c2 == 'l')) {
        return 3;
    }
    return 0;
}

/* \s+(?!\S)|\s+ : a whitespace run, less its last character when a non-space follows (that one
 * then prefixes the next word). Returns 0 when pos is not whitespace. */
static size_t match_space_run(const split_text *t, size_t pos)
{
    size_t p = pos;
    while (is_space_at(t, p)) {
        p++;
    }
    size_t n = p - pos;
    return (n > 1 && p < t->end) ? n - 1 : n;
}

static size_t run_end(const split_text *t, size_t p, bool (*in_class)(const split_text *, size_t))
{
    while (in_class(t, p)) {
        p++;
    }
    return p;
}

static size_t match_gpt2(const split_text *t, size_t pos)
{
    size_t n = match_contraction(t, pos, false);
    if (n) {
        return n;
    }
    /* ' ?' is taken only when what follows it matches. */
    size_t body = (t->cp[pos] == ' ') ? pos + 1 : pos;
    if (is_letter_at(t, body)) {
        return run_end(t, body, is_letter_at) - pos;
    }
    if (is_number_at(t, body)) {
        return run_end(t, body, is_number_at) - pos;
    }
    if (is_other_at(t, body)) {
        return run_end(t, body, is_other_at) - pos;
    }
    n = match_space_run(t, pos);
    return n ? n : 1;
}

/* \s*[\r\n]+ : whitespace up to and including the last CR/LF of the run at pos, or 0. */
static size_t match_space_through_newline(const split_text *t, size_t pos)
{
    size_t through = 0;
    for (size_t p = pos; is_space_at(t, p); p++) {
        if (is_newline_at(t, p)) {
            through = p + 1 - pos;
        }
    }
    return through;
}

static size_t match_llama3(const split_text *t, size_t pos, size_t max_digits)
{
    size_t n = match_contraction(t, pos, true);
    if (n) {
        return n;
    }
    /* [^\r\n\p{L}\p{N}]?\p{L}+ */
    if (!is_newline_at(t, pos) && !is_number_at(t, pos) &&
        (is_letter_at(t, pos) || is_letter_at(t, pos + 1))) {
        return run_end(t, pos + 1, is_letter_at) - pos;
    }
    if (is_number_at(t, pos)) {
        size_t p = pos;
        while (is_number_at(t, p) && p - pos < max_digits) {
            p++;
        }
        return p - pos;
    }
    /*  ?[^\s\p{L}\p{N}]+[\r\n]* */
    size_t body = (t->cp[pos] == ' ') ? pos + 1 : pos;
    if (is_other_at(t, body)) {
        return run_end(t, run_end(t, body, is_other_at), is_newline_at) - pos;
    }
    n = match_space_through_newline(t, pos);
    if (n) {
        return n;
    }
    n = match_space_run(t, pos);
    return n ? n : 1;
}

static bool is_mark_at(const split_text *t, size_t i)
{
    return i < t->end && (t->cls[i] & INF_UNICODE_MAJOR_MASK) == INF_UNICODE_MARK;
}

/* [^\s\p{L}\p{M}\p{N}] */
static bool is_other_or_mark_free_at(const split_text *t, size_t i)
{
    return is_other_at(t, i) && !is_mark_at(t, i);
}

/* The rest of the Llama 3 family's alternatives after the letter and number ones:
 *  ?[^\s...]+[\r\n]*, \s*[\r\n]+, \s+(?!\S), \s+ and finally one character. `other` says
 * which characters the punctuation run takes. */
static size_t match_llama3_tail(const split_text *t, size_t pos, bool (*other)(const split_text *, size_t))
{
    size_t body = (t->cp[pos] == ' ') ? pos + 1 : pos;
    if (other(t, body)) {
        return run_end(t, run_end(t, body, other), is_newline_at) - pos;
    }
    size_t n = match_space_through_newline(t, pos);
    if (n) {
        return n;
    }
    n = match_space_run(t, pos);
    return n ? n : 1;
}

/* Qwen 3.5: Qwen 2's alternatives with combining marks joining letter runs. */
static size_t match_qwen35(const split_text *t, size_t pos)
{
    size_t n = match_contraction(t, pos, true);
    if (n) {
        return n;
    }
    bool letter_or_mark_here = is_letter_at(t, pos) || is_mark_at(t, pos);
    bool letter_or_mark_next = is_letter_at(t, pos + 1) || is_mark_at(t, pos + 1);
    if (!is_newline_at(t, pos) && !is_number_at(t, pos) && (letter_or_mark_here || letter_or_mark_next)) {
        size_t p = pos + 1;
        while (is_letter_at(t, p) || is_mark_at(t, p)) {
            p++;
        }
        return p - pos;
    }
    if (is_number_at(t, pos)) {
        return 1;
    }
    return match_llama3_tail(t, pos, is_other_or_mark_free_at);
}

/* The Han ideographs Kimi-K2 keeps apart (CJK unified ideographs A to F and the compatibility
 * blocks), as llama.cpp lists them. */
static bool is_han(uint32_t c)
{
    static const uint32_t ranges[][2] = {
        {0x3400, 0x4DBF}, {0x4E00, 0x9FFF}, {0xF900, 0xFAFF}, {0x20000, 0x2A6DF},
        {0x2A700, 0x2B73F}, {0x2B740, 0x2B81F}, {0x2B820, 0x2CEAF}, {0x2CEB0, 0x2EBEF},
        {0x2F800, 0x2FA1F},
    };
    for (size_t i = 0; i < sizeof ranges / sizeof ranges[0]; i++) {
        if (c >= ranges[i][0] && c <= ranges[i][1]) {
            return true;
        }
    }
    return false;
}

static bool is_han_at(const split_text *t, size_t i) { return i < t->end && is_han(t->cp[i]); }
static bool is_plain_letter_at(const split_text *t, size_t i) { return is_letter_at(t, i) && !is_han(t->cp[i]); }

/* Kimi-K2: [\p{Han}]+, then letter runs without Han (an optional leading character that is not
 * CR/LF, a letter or a digit) with an optional contraction after them, \p{N}{1,3}, then Llama 3's
 * other alternatives. */
static size_t match_kimi_k2(const split_text *t, size_t pos)
{
    if (is_han_at(t, pos)) {
        return run_end(t, pos, is_han_at) - pos;
    }
    bool may_lead = !is_newline_at(t, pos) && !is_letter_at(t, pos) && !is_number_at(t, pos);
    if (is_plain_letter_at(t, pos) || (may_lead && is_plain_letter_at(t, pos + 1))) {
        size_t p = run_end(t, may_lead ? pos + 1 : pos, is_plain_letter_at);
        if (p < t->end) {
            p += match_contraction(t, p, true);
        }
        return p - pos;
    }
    if (is_number_at(t, pos)) {
        size_t p = pos;
        while (is_number_at(t, p) && p - pos < 3) {
            p++;
        }
        return p - pos;
    }
    return match_llama3_tail(t, pos, is_other_at);
}

/* [\p{P}\$\+<=>\^~\|] */
static bool is_punct_or_listed_symbol_at(const split_text *t, size_t i)
{
    if (i >= t->end) {
        return false;
    }
    uint32_t c = t->cp[i];
    return (t->cls[i] & INF_UNICODE_MAJOR_MASK) == INF_UNICODE_PUNCTUATION ||
           (c < 0x80 && c != 0 && strchr("$+<=>^~|", (int)c) != NULL);
}

static bool is_ascii_digit_at(const split_text *t, size_t i)
{
    return i < t->end && t->cp[i] >= '0' && t->cp[i] <= '9';
}

/* Length of the match of `split` at pos, 0 when it does not match there. */
static size_t match_at(inf_pre_split split, const split_text *t, size_t pos)
{
    switch (split) {
    case INF_PRE_SPLIT_GPT2:
        return match_gpt2(t, pos);
    case INF_PRE_SPLIT_LLAMA3:
        return match_llama3(t, pos, 3);
    case INF_PRE_SPLIT_QWEN2:
        return match_llama3(t, pos, 1);
    case INF_PRE_SPLIT_NUMBER_EACH:
        return is_number_at(t, pos) ? 1 : 0;
    case INF_PRE_SPLIT_NUMBER_RUN:
        return run_end(t, pos, is_number_at) - pos;
    case INF_PRE_SPLIT_PUNCT_RUN:
        return run_end(t, pos, is_punct_or_listed_symbol_at) - pos;
    case INF_PRE_SPLIT_ASCII_DIGIT3:
        return (is_ascii_digit_at(t, pos) && is_ascii_digit_at(t, pos + 1) && is_ascii_digit_at(t, pos + 2)) ? 3 : 0;
    case INF_PRE_SPLIT_QWEN35:
        return match_qwen35(t, pos);
    case INF_PRE_SPLIT_KIMI_K2:
        return match_kimi_k2(t, pos);
    default:
        return 0;
    }
    return 0;
}

/* Digit runs cut in groups of three from the right, the first group taking the one or two left
 * over. As in llama.cpp's code, the text before a run is not a word of its own: it goes with the
 * run's first group (the later splits separate them). */
static size_t split_digit_groups(const uint8_t *cls, size_t start, size_t end, uint32_t *out)
{
    size_t count = 0, word_start = start;
    for (size_t pos = start; pos < end;) {
        if (!inf_unicode_is_number(cls[pos])) {
            pos++;
            continue;
        }
        size_t run = pos;
        while (run < end && inf_unicode_is_number(cls[run])) {
            run++;
        }
        size_t group_end = pos + (run - pos) % 3;
        if (group_end == pos) {
            group_end += 3;
        }
        for (; group_end <= run; group_end += 3) {
            out[count++] = (uint32_t)(group_end - word_start);
            word_start = group_end;
        }
        pos = run;
    }
    if (end > word_start) {
        out[count++] = (uint32_t)(end - word_start);
    }
    return count;
}

/* [^\n]+|[\n]+ */
static size_t split_newline_runs(const uint32_t *cps, size_t start, size_t end, uint32_t *out)
{
    size_t count = 0;
    for (size_t pos = start; pos < end;) {
        size_t run = pos;
        bool newline = cps[pos] == '\n';
        while (run < end && (cps[run] == '\n') == newline) {
            run++;
        }
        out[count++] = (uint32_t)(run - pos);
        pos = run;
    }
    return count;
}

size_t inf_pre_split_word(inf_pre_split split, const uint32_t *cps, const uint8_t *cls, size_t start, size_t end,
                          uint32_t *out)
{
    if (split == INF_PRE_SPLIT_DIGIT_GROUPS) {
        return split_digit_groups(cls, start, end, out);
    }
    if (split == INF_PRE_SPLIT_NEWLINE_RUNS) {
        return split_newline_runs(cps, start, end, out);
    }
    split_text text = {cps, cls, end};
    const split_text *t = &text;
    size_t count = 0;
    size_t gap_start = start;
    for (size_t pos = start; pos < end;) {
        size_t n = match_at(split, t, pos);
        if (n == 0) {
            pos++;
            continue;
        }
        if (pos > gap_start) {
            out[count++] = (uint32_t)(pos - gap_start);
        }
        out[count++] = (uint32_t)n;
        pos += n;
        gap_start = pos;
    }
    if (end > gap_start) {
        out[count++] = (uint32_t)(end - gap_start);
    }
    return count;
}

