/* test_vocab_unicode.c - the pieces under the tokenizers: the generated Unicode tables, UTF-8
 * decoding of invalid input, GPT-2's byte alphabet, and the pre-tokenizer regex matchers on
 * strings whose split is known from the regexes, and on a corpus against the original regexes run by
 * HF tokenizers. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "test.h"
#include "vocab/pretokenize.h"
#include "vocab/unicode.h"
#include "vocab_test_support.h"

TEST(test_vocab_unicode_tables_match_their_generator)
{
    char *output = NULL;
    int status = test_run(&output, "python3 libinfer/src/vocab/gen_unicode_tables.py --check "
                                   "libinfer/src/vocab/unicode_tables.c");
    CHECK_MSG(status == 0, "%s", output);
    free(output);
}

TEST(test_vocab_unicode_classes_of_sample_code_points)
{
    CHECK(inf_unicode_class_of('a') == INF_UNICODE_LETTER);
    CHECK(inf_unicode_class_of('7') == INF_UNICODE_NUMBER);
    CHECK(inf_unicode_class_of(' ') == (INF_UNICODE_SEPARATOR | INF_UNICODE_WHITESPACE));
    CHECK(inf_unicode_class_of('\n') == (INF_UNICODE_OTHER | INF_UNICODE_WHITESPACE));
    CHECK(inf_unicode_class_of(0x85) == (INF_UNICODE_OTHER | INF_UNICODE_WHITESPACE));
    CHECK(inf_unicode_class_of(0x1C) == INF_UNICODE_OTHER); /* Python's isspace() says yes; \s says no */
    CHECK(inf_unicode_class_of(0x3000) == (INF_UNICODE_SEPARATOR | INF_UNICODE_WHITESPACE));
    CHECK(inf_unicode_class_of(0x4E2D) == INF_UNICODE_LETTER);      /* 中 */
    CHECK(inf_unicode_class_of(0x0301) == INF_UNICODE_MARK);        /* combining acute */
    CHECK(inf_unicode_class_of(0x0663) == INF_UNICODE_NUMBER);      /* Arabic-Indic 3 */
    CHECK(inf_unicode_class_of(0x2162) == INF_UNICODE_NUMBER);      /* Roman numeral three */
    CHECK(inf_unicode_class_of('!') == INF_UNICODE_PUNCTUATION);
    CHECK(inf_unicode_class_of('$') == INF_UNICODE_SYMBOL);
    CHECK(inf_unicode_class_of(0x1F600) == INF_UNICODE_SYMBOL);     /* emoji */
    CHECK(inf_unicode_class_of(0x10FFFF) == INF_UNICODE_OTHER);
    CHECK(inf_unicode_class_of(0x110000) == INF_UNICODE_OTHER);
}

TEST(test_vocab_utf8_decoding_replaces_each_bad_byte_with_u_fffd)
{
    /* a, é, a truncated 3-byte sequence, a stray continuation byte, 😀, a lone lead byte at the end */
    const char text[] = "a\xc3\xa9\xe4\xb8" "b\x80\xf0\x9f\x98\x80\xf0";
    uint32_t cps[sizeof text];
    size_t n = inf_utf8_decode(text, sizeof text - 1, cps);
    uint32_t want[] = {'a', 0xE9, 0xFFFD, 0xFFFD, 'b', 0xFFFD, 0x1F600, 0xFFFD};
    CHECK_MSG(n == sizeof want / sizeof want[0], "decoded %zu code points", n);
    CHECK(memcmp(cps, want, sizeof want) == 0);
    char buf[4];
    CHECK(inf_utf8_encode(0x1F600, buf) == 4 && memcmp(buf, "\xf0\x9f\x98\x80", 4) == 0);
    CHECK(inf_utf8_sequence_length(0xE4) == 3 && inf_utf8_sequence_length(0x80) == 1);
}

TEST(test_vocab_gpt2_byte_alphabet_is_a_bijection_with_known_points)
{
    CHECK(inf_byte_to_code_point(' ') == 0x120);  /* 'Ġ' */
    CHECK(inf_byte_to_code_point('\n') == 0x10A); /* 'Ċ' */
    CHECK(inf_byte_to_code_point('A') == 'A');
    CHECK(inf_byte_to_code_point(0xAD) == 0x143);
    bool seen[324] = {false};
    for (int b = 0; b < 256; b++) {
        uint32_t cp = inf_byte_to_code_point((unsigned char)b);
        CHECK(cp < 324 && !seen[cp]);
        seen[cp] = true;
        CHECK(inf_code_point_to_byte(cp) == b);
    }
    CHECK(inf_code_point_to_byte(0x20) == -1 && inf_code_point_to_byte(0x144) == -1);
}

/* Split text[0..len) as the BPE tokenizer does: decode it into cps, classify each code point, and
 * pre-tokenize; returns the number of words, whose lengths (in code points) go to `lengths`.
 * Every buffer has room for `len` entries. */
static size_t split_words(const inf_pre_program *pre, const char *text, size_t len, uint32_t *cps,
                          uint8_t *cls, uint32_t *lengths, uint32_t *scratch)
{
    size_t n = inf_utf8_decode(text, len, cps);
    for (size_t i = 0; i < n; i++) {
        cls[i] = (uint8_t)inf_unicode_class_of(cps[i]);
    }
    return inf_pretokenize(pre, cps, cls, n, lengths, scratch);
}

/* Words of `text` under pre-tokenizer `pre_name`, joined with '|'. */
static const char *split(const char *pre_name, const char *text)
{
    static char out[1024];
    const inf_pretokenizer *def = inf_pretokenizer_find(pre_name);
    size_t len = strlen(text);
    uint32_t cps[256], lengths[256], scratch[256];
    uint8_t cls[256];
    inf_pre_program prog;
    const char *why;
    if (!def || len > 256 || !inf_pre_program_init(&prog, def, &why)) {
        return "(bad test)";
    }
    size_t words = split_words(&prog, text, len, cps, cls, lengths, scratch);
    inf_pre_program_free(&prog);
    size_t pos = 0, cp = 0;
    for (size_t w = 0; w < words; w++) {
        if (w) {
            out[pos++] = '|';
        }
        for (uint32_t k = 0; k < lengths[w]; k++) {
            pos += inf_utf8_encode(cps[cp++], out + pos);
        }
    }
    out[pos] = '\0';
    return out;
}

#define CHECK_SPLIT(pre, text, want)                                                     \
    do {                                                                                 \
        const char *got_ = split(pre, text);                                             \
        CHECK_MSG(strcmp(got_, want) == 0, "%s '%s': got '%s', want '%s'", pre, text, got_, want); \
    } while (0)

TEST(test_vocab_gpt2_regex_split)
{
    CHECK_SPLIT("gpt-2", "Hello world", "Hello| world");
    CHECK_SPLIT("gpt-2", "I'm here, they'LL", "I|'m| here|,| they|'|LL");
    CHECK_SPLIT("gpt-2", "a   b", "a|  | b");
    CHECK_SPLIT("gpt-2", "a \tb", "a| |\t|b");
    CHECK_SPLIT("gpt-2", "x  ", "x|  ");
    CHECK_SPLIT("gpt-2", "abc123 456!? (ok)", "abc|123| 456|!?| (|ok|)");
    CHECK_SPLIT("gpt-2", "caf\xc3\xa9 e\xcc\x81t\xc3\xa9", "caf\xc3\xa9| e|\xcc\x81|t\xc3\xa9");
}

TEST(test_vocab_llama3_regex_split)
{
    CHECK_SPLIT("llama-bpe", "I'M here they'Ll", "I|'M| here| they|'Ll");
    CHECK_SPLIT("llama-bpe", "1234567 x", "123|456|7| x");
    CHECK_SPLIT("llama-bpe", "a\n\n  b", "a|\n\n| | b");
    CHECK_SPLIT("llama-bpe", "\tword !!\n\nx", "\tword| !!\n\n|x");
    CHECK_SPLIT("llama-bpe", "a   b", "a|  | b");
    CHECK_SPLIT("qwen2", "2024", "2|0|2|4");
}

TEST(test_vocab_smollm_and_default_splits)
{
    CHECK_SPLIT("smollm", "abc 2024 x", "abc| |2|0|2|4| x");
    CHECK_SPLIT("smollm", "v1.2", "v|1|.|2");
    /* default: punctuation runs, then GPT-2, then number runs, then ASCII digit triples */
    CHECK_SPLIT("default", "a+=b 12345", "a|+=|b| |123|45");
    CHECK(inf_pretokenizer_find("no-such-pre") == NULL);
}

/* Write "<dir>/<name>.<pre>.split" (word lengths in code points) for every corpus text. */
static bool write_splits(const char *dir, const char *pre_name)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/list.txt", dir);
    FILE *list = fopen(path, "r");
    if (!list) {
        return false;
    }
    const inf_pretokenizer *def = inf_pretokenizer_find(pre_name);
    inf_pre_program prog;
    const char *why;
    char name[256];
    bool ok = def && inf_pre_program_init(&prog, def, &why);
    const inf_pre_program *pre = &prog;
    while (ok && fscanf(list, "%255s", name) == 1) {
        snprintf(path, sizeof path, "%s/%s", dir, name);
        size_t len = 0;
        char *text = vt_read_file(path, &len);
        uint32_t *cps = malloc((len + 1) * sizeof *cps), *lengths = malloc((len + 1) * sizeof *lengths);
        uint32_t *scratch = malloc((len + 1) * sizeof *scratch);
        uint8_t *cls = malloc(len + 1);
        ok = text && cps && lengths && scratch && cls;
        size_t words = ok ? split_words(pre, text, len, cps, cls, lengths, scratch) : 0;
        snprintf(path, sizeof path, "%s/%s.%s.split", dir, name, pre_name);
        FILE *out = ok ? fopen(path, "w") : NULL;
        ok = ok && out;
        for (size_t w = 0; ok && w < words; w++) {
            fprintf(out, "%u\n", lengths[w]);
        }
        if (out) {
            fclose(out);
        }
        free(text);
        free(cps);
        free(lengths);
        free(scratch);
        free(cls);
    }
    fclose(list);
    if (def) {
        inf_pre_program_free(&prog);
    }
    return ok;
}

TEST(test_vocab_pretokenizers_match_the_original_regexes_run_by_hf_tokenizers)
{
    static const char *const pres[] = {"gpt-2", "llama-bpe", "qwen2", "smollm", "default"};
    const char *dir = vt_make_corpus("split_corpus");
    CHECK(dir);
    for (size_t i = 0; i < sizeof pres / sizeof pres[0]; i++) {
        CHECK_MSG(write_splits(dir, pres[i]), "writing the %s splits", pres[i]);
    }
    char *output = NULL;
    int status = test_run(&output, "python3 tests/vocab/py/hf_split_compare.py %s gpt-2 llama-bpe qwen2 smollm default", dir);
    CHECK_MSG(status == 0, "hf_split_compare.py exited %d:\n%s", status, output);
    fprintf(stderr, "    %s", output);
    free(output);
}
