/* test_vocab_smollm.c - the real model's tokenizer (SmolLM2: byte-level BPE, pre-tokenizer
 * "smollm"): its properties, chat markers, digit splitting, agreement with an independent HF
 * `tokenizers` build on ~750 KB of varied text, and speed. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "test.h"
#include "vocab_test_support.h"

static inf_vocab *load_model_vocab(void)
{
    const char *model = test_model_path();
    if (!model) {
        SKIP("the model is absent (make models)");
    }
    char err[512];
    inf_vocab *v = vt_load(model, err, sizeof err);
    if (!v) {
        test_fail(__FILE__, __LINE__, "%s", err);
    }
    return v;
}

TEST(test_vocab_smollm_loads_with_its_special_tokens_and_flags)
{
    inf_vocab *v = load_model_vocab();
    CHECK(v);
    CHECK(inf_vocab_get_type(v) == INF_VOCAB_BPE);
    CHECK(strcmp(inf_vocab_pre_name(v), "smollm") == 0);
    CHECK(inf_vocab_n_tokens(v) == 49152);
    CHECK(inf_vocab_bos(v) == 1 && inf_vocab_eos(v) == 2 && inf_vocab_unk(v) == 0 && inf_vocab_pad(v) == 2);
    CHECK(!inf_vocab_adds_bos(v) && !inf_vocab_adds_eos(v));
    CHECK(inf_vocab_is_eog(v, 2) && inf_vocab_is_eog(v, 0) && !inf_vocab_is_eog(v, 1));
    size_t len;
    CHECK(strcmp(inf_vocab_token_text(v, 1, &len), "<|im_start|>") == 0 && len == 12);
    CHECK(inf_vocab_find(v, "<|im_end|>", 10) == 2);
    CHECK(inf_vocab_token_text(v, 49152, &len) == NULL && len == 0);
    inf_vocab_free(v);
}

TEST(test_vocab_smollm_turns_chat_markers_into_ids_only_when_parsing_special)
{
    inf_vocab *v = load_model_vocab();
    CHECK(v);
    size_t n;
    inf_token *ids = vt_tokenize(v, "<|im_start|>user\nHi<|im_end|>", INF_TOKENIZE_PARSE_SPECIAL, &n);
    CHECK_MSG(n >= 4 && ids[0] == 1 && ids[n - 1] == 2, "got %s", vt_ids_string(ids, n));
    char text[64];
    int64_t back = inf_vocab_detokenize(v, ids, n, INF_DETOKENIZE_RENDER_SPECIAL, text, sizeof text);
    CHECK(back == 29 && memcmp(text, "<|im_start|>user\nHi<|im_end|>", 29) == 0);
    back = inf_vocab_detokenize(v, ids, n, 0, text, sizeof text);
    CHECK(back == 7 && memcmp(text, "user\nHi", 7) == 0);
    free(ids);
    ids = vt_tokenize(v, "<|im_start|>", 0, &n);
    CHECK_MSG(n > 1, "without PARSE_SPECIAL the marker is text: %s", vt_ids_string(ids, n));
    free(ids);
    inf_vocab_free(v);
}

TEST(test_vocab_smollm_splits_numbers_into_single_digits)
{
    inf_vocab *v = load_model_vocab();
    CHECK(v);
    size_t n;
    inf_token *ids = vt_tokenize(v, "12345", 0, &n);
    CHECK_MSG(n == 5, "got %s", vt_ids_string(ids, n));
    for (size_t i = 0; i < n; i++) {
        size_t len;
        const char *piece = inf_vocab_token_piece(v, ids[i], &len);
        CHECK(len == 1 && piece[0] == "12345"[i]);
    }
    free(ids);
    inf_vocab_free(v);
}

TEST(test_vocab_smollm_matches_hf_tokenizers_on_varied_text)
{
    inf_vocab *v = load_model_vocab();
    CHECK(v);
    const char *dir = vt_make_corpus("hf_corpus");
    CHECK(dir);
    char *output = NULL;
    int texts = vt_write_ids(v, dir, INF_TOKENIZE_PARSE_SPECIAL);
    CHECK_MSG(texts > 100, "tokenized %d corpus texts", texts);
    int status = test_run(&output, "python3 tests/vocab/py/hf_compare.py %s %s", test_model_path(), dir);
    CHECK_MSG(status == 0, "hf_compare.py exited %d:\n%s", status, output);
    fprintf(stderr, "    %s", output); /* the bytes and tokens compared */
    free(output);
    inf_vocab_free(v);
}

static double seconds_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

TEST(test_vocab_tokenizes_a_megabyte_well_under_a_second)
{
    inf_vocab *v = load_model_vocab();
    CHECK(v);
    /* Mixed prose, code and numbers, repeated to 1 MiB. */
    static const char sample[] =
        "The quick brown fox jumps over the lazy dog; it's 3.14159 times faster in 2024!\n"
        "    for (size_t i = 0; i < n; i++) { total += values[i] * 0x1F; }\n"
        "Grüße aus Köln, привет мир, 你好世界 — naïve café résumé 😀 🎉\n\n\tIndented\ttabs  and   spaces.\n";
    size_t size = 1 << 20;
    char *text = malloc(size);
    CHECK(text);
    for (size_t i = 0; i < size; i++) {
        text[i] = sample[i % (sizeof sample - 1)];
    }
    double start = seconds_now();
    inf_token *ids = NULL;
    size_t n = 0;
    CHECK(inf_vocab_tokenize(v, text, size, 0, &ids, &n, NULL) == GGTK_OK);
    double elapsed = seconds_now() - start;
    fprintf(stderr, "    1 MiB -> %zu tokens in %.3f s\n", n, elapsed);
    CHECK(n > 200000);
#if !defined(__SANITIZE_ADDRESS__)
    CHECK_MSG(elapsed < 0.5, "took %.3f s", elapsed);
#endif
    free(ids);
    free(text);
    inf_vocab_free(v);
}
