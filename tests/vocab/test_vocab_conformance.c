/* test_vocab_conformance.c - llama.cpp's tokenizer test vectors (../shared/testdata/vocab): every
 * text must give exactly the expected ids (no BOS/EOS, special tokens not parsed, as llama.cpp's
 * test-tokenizer-0 runs them), and detokenizing must give the text back. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "test.h"
#include "vocab_test_support.h"

#define SEPARATOR "\n__ggml_vocab_test__\n"

typedef struct vectors {
    inf_vocab *vocab;
    char *inp, *out;   /* whole files */
    char *texts[256];  /* NUL-terminated in place inside inp */
    char *expected[256];
    int count;
} vectors;

/* Load "<shared>/vocab/<name>.gguf" with its .inp/.out; false (with a test failure) on error. */
static bool load_vectors(const char *name, vectors *vec)
{
    const char *shared = test_shared_data();
    if (!shared) {
        SKIP("../shared/testdata is absent");
    }
    char path[512], err[512];
    size_t size;
    snprintf(path, sizeof path, "%s/vocab/%s.gguf", shared, name);
    vec->vocab = vt_load(path, err, sizeof err);
    if (!vec->vocab) {
        test_fail(__FILE__, __LINE__, "loading %s: %s", path, err);
        return false;
    }
    snprintf(path, sizeof path, "%s/vocab/%s.gguf.inp", shared, name);
    vec->inp = vt_read_file(path, &size);
    snprintf(path, sizeof path, "%s/vocab/%s.gguf.out", shared, name);
    vec->out = vt_read_file(path, &size);
    if (!vec->inp || !vec->out) {
        test_fail(__FILE__, __LINE__, "cannot read the .inp/.out files of %s", name);
        return false;
    }
    /* Texts end with SEPARATOR; the .out file has one line of ids per text. */
    vec->count = 0;
    char *line = vec->out;
    for (char *p = vec->inp; *p && vec->count < 256;) {
        char *end = strstr(p, SEPARATOR);
        char *nl = strchr(line, '\n');
        if (!end || !nl) {
            break;
        }
        *end = '\0';
        *nl = '\0';
        vec->texts[vec->count] = p;
        vec->expected[vec->count++] = line;
        p = end + strlen(SEPARATOR);
        line = nl + 1;
    }
    if (vec->count < 40) {
        test_fail(__FILE__, __LINE__, "only %d test texts in %s", vec->count, name);
        return false;
    }
    return true;
}

static void free_vectors(vectors *vec)
{
    inf_vocab_free(vec->vocab);
    free(vec->inp);
    free(vec->out);
}

/* Failures over all texts; each mismatch is reported. */
static int check_ids(const vectors *vec)
{
    int failures = 0;
    for (int i = 0; i < vec->count; i++) {
        size_t n;
        inf_token *ids = vt_tokenize(vec->vocab, vec->texts[i], 0, &n);
        const char *got = vt_ids_string(ids, n);
        const char *want = vec->expected[i] + strspn(vec->expected[i], " ");
        if (strcmp(got, want) != 0) {
            test_fail(__FILE__, __LINE__, "text %d '%s':\n      got  %s\n      want %s", i, vec->texts[i], got, want);
            failures++;
        }
        free(ids);
    }
    return failures;
}

/* Texts that do not come back are counted; SPM strips its space prefix. */
static int check_round_trip(const vectors *vec, unsigned flags)
{
    int failures = 0;
    for (int i = 0; i < vec->count; i++) {
        size_t n;
        inf_token *ids = vt_tokenize(vec->vocab, vec->texts[i], 0, &n);
        size_t len = strlen(vec->texts[i]);
        char *back = malloc(len + 64);
        int64_t got = inf_vocab_detokenize(vec->vocab, ids, n, flags, back, len + 64);
        if (got != (int64_t)len || memcmp(back, vec->texts[i], len) != 0) {
            test_fail(__FILE__, __LINE__, "text %d '%s' came back as '%.*s'", i, vec->texts[i],
                      (int)(got > 0 ? got : 0), back);
            failures++;
        }
        free(back);
        free(ids);
    }
    return failures;
}

TEST(test_vocab_gpt2_gives_llama_cpp_ids_for_every_test_text)
{
    vectors vec;
    if (!load_vectors("ggml-vocab-gpt-2", &vec)) {
        return;
    }
    CHECK(inf_vocab_get_type(vec.vocab) == INF_VOCAB_BPE);
    CHECK(strcmp(inf_vocab_pre_name(vec.vocab), "gpt-2") == 0);
    CHECK(inf_vocab_n_tokens(vec.vocab) == 50257);
    int failures = check_ids(&vec);
    CHECK_MSG(failures == 0, "%d of %d texts differ", failures, vec.count);
    free_vectors(&vec);
}

TEST(test_vocab_llama_spm_gives_llama_cpp_ids_for_every_test_text)
{
    vectors vec;
    if (!load_vectors("ggml-vocab-llama-spm", &vec)) {
        return;
    }
    CHECK(inf_vocab_get_type(vec.vocab) == INF_VOCAB_SPM);
    CHECK(inf_vocab_n_tokens(vec.vocab) == 32000);
    int failures = check_ids(&vec);
    CHECK_MSG(failures == 0, "%d of %d texts differ", failures, vec.count);
    free_vectors(&vec);
}

TEST(test_vocab_gpt2_detokenizes_every_test_text_back)
{
    vectors vec;
    if (!load_vectors("ggml-vocab-gpt-2", &vec)) {
        return;
    }
    int failures = check_round_trip(&vec, 0);
    CHECK_MSG(failures == 0, "%d of %d texts differ", failures, vec.count);
    free_vectors(&vec);
}

TEST(test_vocab_llama_spm_detokenizes_every_test_text_back_without_space_prefix)
{
    vectors vec;
    if (!load_vectors("ggml-vocab-llama-spm", &vec)) {
        return;
    }
    int failures = check_round_trip(&vec, INF_DETOKENIZE_STRIP_SPACE_PREFIX);
    CHECK_MSG(failures == 0, "%d of %d texts differ", failures, vec.count);
    free_vectors(&vec);
}

TEST(test_vocab_llama_spm_adds_bos_and_parses_control_tokens_on_request)
{
    vectors vec;
    if (!load_vectors("ggml-vocab-llama-spm", &vec)) {
        return;
    }
    inf_vocab *v = vec.vocab;
    CHECK(inf_vocab_bos(v) == 1 && inf_vocab_eos(v) == 2 && inf_vocab_unk(v) == 0);
    CHECK(inf_vocab_adds_bos(v) && !inf_vocab_adds_eos(v));
    /* "Hello world" is 15043 3186 with the space prefix; BOS comes first. */
    CHECK_IDS(v, "Hello world", INF_TOKENIZE_ADD_SPECIAL, "1 15043 3186");
    /* With parsing, "</s>" is EOS and the text after it gets its own space prefix. */
    CHECK_IDS(v, "Hello</s>world", INF_TOKENIZE_PARSE_SPECIAL, "15043 2 3186");
    size_t n;
    inf_token *ids = vt_tokenize(v, "Hello</s>", 0, &n);
    CHECK_MSG(n > 2 && ids[1] != 2, "</s> must stay text without PARSE_SPECIAL: %s", vt_ids_string(ids, n));
    free(ids);
    CHECK(inf_vocab_is_eog(v, 2) && !inf_vocab_is_eog(v, 1));
    CHECK(inf_vocab_token_type(v, 1) == INF_TOKEN_CONTROL && inf_vocab_token_type(v, 13) == INF_TOKEN_BYTE);
    free_vectors(&vec);
}

/* Deterministic pseudo-random bytes (xorshift) without 0xE2 (no U+2581 in the input) and without
 * spaces: SPM writes a space as U+2581, and an invalid lead byte before it swallows those 3 bytes
 * into one malformed character that falls back to byte tokens (llama.cpp does the same), so such
 * text does not come back unchanged. */
static void random_bytes(char *buf, size_t n, uint32_t seed)
{
    for (size_t i = 0; i < n; i++) {
        seed ^= seed << 13;
        seed ^= seed >> 17;
        seed ^= seed << 5;
        unsigned char b = (unsigned char)(seed & 0xFF);
        buf[i] = (char)(b == 0xE2 || b == ' ' ? b + 1 : b);
    }
}

TEST(test_vocab_random_bytes_tokenize_and_spm_gives_them_back)
{
    vectors spm, gpt2;
    if (!load_vectors("ggml-vocab-llama-spm", &spm) || !load_vectors("ggml-vocab-gpt-2", &gpt2)) {
        return;
    }
    char text[4096], back[4096 + 64];
    for (uint32_t seed = 1; seed <= 20; seed++) {
        size_t len = 64 + seed * 200;
        random_bytes(text, len, seed * 2654435761u);
        inf_token *ids = NULL;
        size_t n = 0;
        unsigned flags = INF_TOKENIZE_PARSE_SPECIAL | INF_TOKENIZE_ADD_SPECIAL;
        CHECK(inf_vocab_tokenize(gpt2.vocab, text, len, flags, &ids, &n, NULL) == GGTK_OK && n > 0);
        CHECK(inf_vocab_detokenize(gpt2.vocab, ids, n, 0, back, sizeof back) > 0);
        free(ids);
        /* SPM keeps raw bytes (byte fallback), so they come back exactly. */
        CHECK(inf_vocab_tokenize(spm.vocab, text, len, 0, &ids, &n, NULL) == GGTK_OK && n > 0);
        int64_t got = inf_vocab_detokenize(spm.vocab, ids, n, INF_DETOKENIZE_STRIP_SPACE_PREFIX, back, sizeof back);
        CHECK_MSG(got == (int64_t)len && memcmp(back, text, len) == 0, "seed %u: %lld of %zu bytes back",
                  (unsigned)seed, (long long)got, len);
        free(ids);
    }
    free_vectors(&spm);
    free_vectors(&gpt2);
}
