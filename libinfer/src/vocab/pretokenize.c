/* pretokenize.c - hand-written matchers for the pre-tokenizer regexes and the table that picks
 * them by tokenizer.ggml.pre. Each matcher answers "how long is the match starting here" within
 * one word [pos, end) of the previous split; the end of a word counts as the end of the text, as
 * when the regex runs on each word separately (that is how both llama.cpp and HF chain splits). */
#include "pretokenize.h"

#include <string.h>

#include "unicode.h"

static const inf_pretokenizer pretokenizers[] = {
    {"default", {INF_PRE_SPLIT_PUNCT_RUN, INF_PRE_SPLIT_GPT2, INF_PRE_SPLIT_NUMBER_RUN,
                 INF_PRE_SPLIT_ASCII_DIGIT3}, 4, false, false},
    {"gpt-2|phi-2|jina-es|jina-de|gigachat|jina-v2-es|jina-v2-de|a.x-4.0|mellum|modern-bert|mpt|"
     "olmo|jais|trillion|granite-docling|exaone4", {INF_PRE_SPLIT_GPT2}, 1, false, false},
    {"llama3|llama-v3|llama-bpe|falcon3|falcon-h1|pixtral|midm-2.0|lfm2|jina-v5-nano",
     {INF_PRE_SPLIT_LLAMA3}, 1, true, true},
    {"dbrx|smaug-bpe", {INF_PRE_SPLIT_LLAMA3}, 1, false, false},
    {"qwen2|deepseek-r1-qwen|kormo|f2llmv2|megrez|stablelm2|hunyuan|solar-open",
     {INF_PRE_SPLIT_QWEN2}, 1, false, false},
    {"smollm|starcoder|refact|command-r|codeshell|exaone|minerva-7b|mellum2",
     {INF_PRE_SPLIT_NUMBER_EACH, INF_PRE_SPLIT_GPT2}, 2, false, false},
};

static bool name_in_list(const char *list, const char *name)
{
    size_t name_len = strlen(name);
    for (const char *p = list;;) {
        const char *bar = strchr(p, '|');
        size_t len = bar ? (size_t)(bar - p) : strlen(p);
        if (len == name_len && memcmp(p, name, len) == 0) {
            return true;
        }
        if (!bar) {
            return false;
        }
        p = bar + 1;
    }
}

const inf_pretokenizer *inf_pretokenizer_find(const char *pre_name)
{
    for (size_t i = 0; i < sizeof pretokenizers / sizeof pretokenizers[0]; i++) {
        if (name_in_list(pretokenizers[i].names, pre_name)) {
            return &pretokenizers[i];
        }
    }
    return NULL;
}

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
    }
    return 0;
}

/* Split word [start, end) by `split`, appending the pieces' lengths to out; returns the count. */
static size_t split_word(inf_pre_split split, split_text *t, size_t start, size_t end, uint32_t *out)
{
    size_t count = 0;
    size_t gap_start = start;
    t->end = end;
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

size_t inf_pretokenize(const inf_pretokenizer *pre, const uint32_t *cps, const uint8_t *cls, size_t n,
                       uint32_t *lengths, uint32_t *scratch)
{
    if (n == 0) {
        return 0;
    }
    split_text t = {cps, cls, n};
    /* Ping-pong between the two buffers so the last split's output lands in `lengths`. */
    uint32_t *in = (pre->n_splits % 2 == 0) ? lengths : scratch;
    uint32_t *out = (in == lengths) ? scratch : lengths;
    in[0] = (uint32_t)n;
    size_t n_words = 1;
    for (int s = 0; s < pre->n_splits; s++) {
        size_t count = 0;
        size_t start = 0;
        for (size_t w = 0; w < n_words; w++) {
            count += split_word(pre->splits[s], &t, start, start + in[w], out + count);
            start += in[w];
        }
        n_words = count;
        uint32_t *swap = in;
        in = out;
        out = swap;
    }
    return n_words;
}

static bool ends_word_whatever_follows(const uint32_t *cps, const uint8_t *cls, size_t p)
{
    unsigned before = cls[p - 1], after = cls[p];
    if (inf_unicode_is_space(before)) {
        return false; /* a space run may give its last space to the next word */
    }
    if (inf_unicode_is_letter(before)) {
        return !inf_unicode_is_letter(after);
    }
    if (inf_unicode_is_number(before)) {
        return !inf_unicode_is_number(after); /* digit groups ({1,3}) run on across digits */
    }
    /* Llama 3 joins other characters with the letters after them and the CR/LF after them. */
    return inf_unicode_is_number(after) ||
           (inf_unicode_is_space(after) && cps[p] != '\r' && cps[p] != '\n');
}

size_t inf_pretokenize_last_cut(const uint32_t *cps, const uint8_t *cls, size_t n)
{
    for (size_t p = n; p-- > 1;) {
        if (ends_word_whatever_follows(cps, cls, p)) {
            return p;
        }
    }
    return 0;
}
