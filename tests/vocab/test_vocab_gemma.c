/* test_vocab_gemma.c - SentencePiece at Gemma 3's scale (262,144 tokens): special tokens, byte
 * fallback, identical ids to llama.cpp's llama-tokenize on the varied corpus (REF_BIN), and speed
 * on the licence texts. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "test.h"
#include "vocab_test_support.h"

#define GEMMA3_PATH "models/gemma-3-270m-q4_k_m.gguf"

static inf_vocab *load_gemma(void)
{
    struct stat st;
    if (stat(GEMMA3_PATH, &st) != 0) {
        SKIP(GEMMA3_PATH " is missing (make models)");
    }
    char err[512];
    inf_vocab *v = vt_load(GEMMA3_PATH, err, sizeof err);
    if (!v) {
        test_fail(__FILE__, __LINE__, "%s", err);
    }
    return v;
}

TEST(test_vocab_gemma_loads_its_262144_tokens_and_special_tokens)
{
    inf_vocab *v = load_gemma();
    CHECK(v);
    CHECK(inf_vocab_get_type(v) == INF_VOCAB_SPM);
    CHECK(inf_vocab_n_tokens(v) == 262144);
    CHECK(inf_vocab_bos(v) == 2 && inf_vocab_eos(v) == 1);
    CHECK(inf_vocab_adds_bos(v) && !inf_vocab_adds_eos(v));
    CHECK(inf_vocab_find(v, "<start_of_turn>", 15) == 105 && inf_vocab_find(v, "<end_of_turn>", 13) == 106);
    CHECK(inf_vocab_is_eog(v, 106) && inf_vocab_token_type(v, 105) == INF_TOKEN_CONTROL);
    inf_vocab_free(v);
}

TEST(test_vocab_gemma_parses_turn_markers_and_falls_back_to_bytes)
{
    inf_vocab *v = load_gemma();
    CHECK(v);
    /* ids as llama-tokenize gives them */
    CHECK_IDS(v, "<start_of_turn>user\nHi<end_of_turn>", INF_TOKENIZE_PARSE_SPECIAL | INF_TOKENIZE_ADD_SPECIAL,
              "2 105 2364 107 10979 106");
    const char *plain = vt_ids_of(v, "<start_of_turn>", 0);
    CHECK_MSG(strcmp(plain, "105") != 0 && strchr(plain, ' '), "without parsing the marker is text: %s", plain);
    /* the llama emoji is no token: four byte tokens, <0xF0> <0x9F> <0xA6> <0x99> */
    size_t n;
    inf_token *ids = vt_tokenize(v, "\xf0\x9f\xa6\x99", 0, &n);
    CHECK_MSG(n == 4, "got %s", vt_ids_string(ids, n));
    for (size_t i = 0; i < n; i++) {
        size_t len;
        const char *piece = inf_vocab_token_piece(v, ids[i], &len);
        CHECK(inf_vocab_token_type(v, ids[i]) == INF_TOKEN_BYTE && len == 1 &&
              (unsigned char)piece[0] == (unsigned char)"\xf0\x9f\xa6\x99"[i]);
    }
    free(ids);
    inf_vocab_free(v);
}

TEST(test_vocab_gemma_gives_llama_tokenize_ids_on_varied_text)
{
    const char *bin = getenv("REF_BIN");
    if (!bin || !*bin) {
        SKIP("REF_BIN is not set (llama.cpp's build/bin)");
    }
    inf_vocab *v = load_gemma(); /* skips when the model is absent */
    inf_vocab_free(v);
    char dir[512];
    snprintf(dir, sizeof dir, "%s", test_tmpfile("gemma_corpus"));
    CHECK(test_run(NULL, "python3 tests/vocab/py/make_corpus.py %s --joined 6", dir) == 0);
    char *output = NULL;
    int status = test_run(&output, "python3 tests/vocab/py/ref_compare.py %s %s %s %s/llama-tokenize %s -", GEMMA3_PATH,
                          dir, test_tool("gguf-tokenize"), bin, test_tmpdir());
    CHECK_MSG(status == 0, "ref_compare.py exited %d:\n%s", status, output);
    fprintf(stderr, "    %s", output);
    free(output);
}

static double cpu_seconds(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* CPU time, not wall time, so that other jobs on the machine do not fail the test. */
TEST(test_vocab_gemma_tokenizes_the_licence_texts_fast)
{
    inf_vocab *v = load_gemma();
    CHECK(v);
    char *text = NULL;
    CHECK(test_run(&text, "cat /usr/share/common-licenses/* 2>/dev/null") == 0 && text);
    size_t len = strlen(text);
    if (len < 100000) {
        free(text);
        inf_vocab_free(v);
        SKIP("/usr/share/common-licenses holds only %zu bytes", len);
    }
    double best = 1e9;
    size_t n = 0;
    for (int round = 0; round < 3; round++) {
        inf_token *ids = NULL;
        double start = cpu_seconds();
        CHECK(inf_vocab_tokenize(v, text, len, INF_TOKENIZE_ADD_SPECIAL, &ids, &n, NULL) == GGTK_OK);
        double took = cpu_seconds() - start;
        best = took < best ? took : best;
        free(ids);
    }
    fprintf(stderr, "    %zu bytes -> %zu tokens in %.3f s CPU: %.0f tokens/s\n", len, n, best, n / best);
    CHECK_MSG(n / best > 250000, "%.0f tokens/s", n / best);
    free(text);
    inf_vocab_free(v);
}
