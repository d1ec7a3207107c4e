/* test_vocab_errors.c - loading refuses broken tokenizer metadata with one line naming the file
 * and the key, and small hand-made vocabularies pin down merge order, byte fallback, special-token
 * matching and detokenizing limits. */
#include <stdlib.h>
#include <string.h>

#include "test.h"
#include "vocab_test_support.h"

/* Byte-level texts: GPT-2 writes ' ' as U+0120 'Ġ'. */
static const char *const bpe_tokens[] = {"a", "b", "c", "ab", "bc", "abc", "\xc4\xa0", "\xc4\xa0" "a", "<|end|>", "<x>"};
static const char *const bpe_merges[] = {"b c", "a b", "ab c", "\xc4\xa0 a"};
enum { N_BPE_TOKENS = sizeof bpe_tokens / sizeof bpe_tokens[0], N_BPE_MERGES = sizeof bpe_merges / sizeof bpe_merges[0] };

static ggtk_writer *bpe_writer(void)
{
    ggtk_writer *w = vt_writer("gpt2", bpe_tokens, N_BPE_TOKENS, bpe_merges, N_BPE_MERGES, NULL);
    ggtk_writer_set_string(w, "tokenizer.ggml.pre", "gpt-2");
    int32_t types[N_BPE_TOKENS] = {1, 1, 1, 1, 1, 1, 1, 1, 3, 4};
    ggtk_writer_set_array(w, "tokenizer.ggml.token_type", GGTK_VALUE_INT32, N_BPE_TOKENS, types);
    ggtk_writer_set_u32(w, "tokenizer.ggml.bos_token_id", 8);
    ggtk_writer_set_u32(w, "tokenizer.ggml.eos_token_id", 8);
    return w;
}

/* Load must fail with a message containing each of the NULL-terminated `needles`. */
static void expect_refusal(ggtk_writer *w, const char *name, const char *const *needles)
{
    char err[512];
    inf_vocab *v = vt_finish(w, name, err, sizeof err);
    CHECK_MSG(v == NULL, "%s loaded", name);
    CHECK_MSG(strstr(err, name) != NULL, "the message does not name the file: %s", err);
    for (const char *const *n = needles; *n; n++) {
        CHECK_MSG(strstr(err, *n) != NULL, "'%s' not in: %s", *n, err);
    }
    CHECK_MSG(strchr(err, '\n') == NULL, "not one line: %s", err);
}

TEST(test_vocab_refuses_gpt2_vocab_without_merges)
{
    ggtk_writer *w = vt_writer("gpt2", bpe_tokens, N_BPE_TOKENS, NULL, 0, NULL);
    expect_refusal(w, "no_merges.gguf", (const char *const[]){"tokenizer.ggml.merges", "missing", NULL});
}

TEST(test_vocab_refuses_scores_and_types_of_another_length)
{
    float scores[3] = {0};
    ggtk_writer *w = bpe_writer();
    ggtk_writer_set_array(w, "tokenizer.ggml.scores", GGTK_VALUE_FLOAT32, 3, scores);
    expect_refusal(w, "short_scores.gguf", (const char *const[]){"tokenizer.ggml.scores", "3 scores for 10 tokens", NULL});
    int32_t types[2] = {1, 1};
    w = bpe_writer();
    ggtk_writer_set_array(w, "tokenizer.ggml.token_type", GGTK_VALUE_INT32, 2, types);
    expect_refusal(w, "short_types.gguf", (const char *const[]){"tokenizer.ggml.token_type", "2 types", NULL});
}

TEST(test_vocab_refuses_token_ids_and_types_out_of_range)
{
    ggtk_writer *w = bpe_writer();
    ggtk_writer_set_u32(w, "tokenizer.ggml.eos_token_id", 10);
    expect_refusal(w, "eos_range.gguf", (const char *const[]){"tokenizer.ggml.eos_token_id", "10", "outside", NULL});
    w = bpe_writer();
    ggtk_writer_set_i32(w, "tokenizer.ggml.padding_token_id", -1);
    expect_refusal(w, "pad_range.gguf", (const char *const[]){"tokenizer.ggml.padding_token_id", "-1", NULL});
    int32_t types[N_BPE_TOKENS] = {1, 1, 1, 1, 1, 1, 1, 9, 3, 4};
    w = bpe_writer();
    ggtk_writer_set_array(w, "tokenizer.ggml.token_type", GGTK_VALUE_INT32, N_BPE_TOKENS, types);
    expect_refusal(w, "bad_type.gguf", (const char *const[]){"tokenizer.ggml.token_type[7]", "token type 9", NULL});
}

TEST(test_vocab_refuses_unknown_models_pre_tokenizers_and_malformed_entries)
{
    ggtk_writer *w = bpe_writer();
    ggtk_writer_set_string(w, "tokenizer.ggml.model", "t5");
    expect_refusal(w, "model_t5.gguf", (const char *const[]){"tokenizer.ggml.model", "'t5'", NULL});
    w = bpe_writer();
    ggtk_writer_set_string(w, "tokenizer.ggml.pre", "martian");
    expect_refusal(w, "pre_martian.gguf", (const char *const[]){"tokenizer.ggml.pre", "'martian'", NULL});
    w = bpe_writer();
    ggtk_writer_set_string_array(w, "tokenizer.ggml.merges", (const char *const[]){"a b", "abc"}, 2);
    expect_refusal(w, "bad_merge.gguf", (const char *const[]){"tokenizer.ggml.merges[1]", "'abc'", NULL});
    w = bpe_writer();
    ggtk_writer_set_u32(w, "tokenizer.ggml.tokens", 5);
    expect_refusal(w, "tokens_type.gguf", (const char *const[]){"tokenizer.ggml.tokens", "array of string", NULL});
    w = ggtk_writer_new();
    ggtk_writer_set_string(w, "general.architecture", "llama");
    expect_refusal(w, "no_tokenizer.gguf", (const char *const[]){"tokenizer.ggml.model", "missing", NULL});
    static const char *const spm_tokens[] = {"<unk>", "<s>", "</s>", "<0x4G>"};
    int32_t spm_types[] = {2, 3, 3, 6};
    w = vt_writer("llama", spm_tokens, 4, NULL, 0, NULL);
    ggtk_writer_set_array(w, "tokenizer.ggml.token_type", GGTK_VALUE_INT32, 4, spm_types);
    expect_refusal(w, "bad_byte.gguf", (const char *const[]){"tokenizer.ggml.tokens[3]", "<0x4G>", NULL});
}

TEST(test_vocab_bpe_merges_lowest_rank_first)
{
    char err[512];
    inf_vocab *v = vt_finish(bpe_writer(), "bpe_ok.gguf", err, sizeof err);
    CHECK_MSG(v, "%s", err);
    /* "b c" (rank 0) beats "a b" (rank 1): a + bc, and "ab c" never applies. */
    CHECK_IDS(v, "abc", 0, "0 4");
    /* "ab" then "ab c" needs no "b c" to compete: "abab" -> ab ab. */
    CHECK_IDS(v, "abab", 0, "3 3");
    /* " a" is one word for the GPT-2 regex and merges into "Ġa"; a byte with no token is dropped. */
    CHECK_IDS(v, " a z", 0, "7 6");
    inf_vocab_free(v);
}

TEST(test_vocab_user_defined_tokens_always_match_and_control_ones_on_request)
{
    char err[512];
    inf_vocab *v = vt_finish(bpe_writer(), "bpe_special.gguf", err, sizeof err);
    CHECK_MSG(v, "%s", err);
    /* Unparsed, "<|end|>" is text whose characters have no tokens here, so it vanishes. */
    CHECK_IDS(v, "a<x>b<|end|>", 0, "0 9 1");
    size_t n;
    inf_token *ids = vt_tokenize(v, "a<x>b<|end|>", INF_TOKENIZE_PARSE_SPECIAL | INF_TOKENIZE_ADD_SPECIAL, &n);
    CHECK_MSG(strcmp(vt_ids_string(ids, n), "0 9 1 8") == 0, "got %s", vt_ids_string(ids, n));
    CHECK(!inf_vocab_adds_bos(v) && inf_vocab_is_eog(v, 8));
    char buf[8];
    CHECK(inf_vocab_detokenize(v, ids, n, 0, buf, sizeof buf) == 5 && memcmp(buf, "a<x>b", 5) == 0);
    CHECK(inf_vocab_detokenize(v, ids, n, INF_DETOKENIZE_RENDER_SPECIAL, buf, 3) == 12 && memcmp(buf, "a<x", 3) == 0);
    inf_token bad[] = {0, 10};
    CHECK(inf_vocab_detokenize(v, bad, 2, 0, buf, sizeof buf) == -1);
    free(ids);
    inf_vocab_free(v);
}

TEST(test_vocab_spm_falls_back_to_byte_tokens_and_merges_by_score)
{
    static const char *const tokens[] = {"<unk>", "<s>", "</s>", "<0xC3>", "<0xA9>", "<0x21>",
                                         "\xe2\x96\x81", "h", "i", "\xe2\x96\x81h", "hi", "\xe2\x96\x81hi"};
    float scores[] = {0, 0, 0, 0, 0, 0, -1, -1, -1, -3, -2, -4};
    int32_t types[] = {2, 3, 3, 6, 6, 6, 1, 1, 1, 1, 1, 1};
    ggtk_writer *w = vt_writer("llama", tokens, 12, NULL, 0, scores);
    ggtk_writer_set_array(w, "tokenizer.ggml.token_type", GGTK_VALUE_INT32, 12, types);
    char err[512];
    inf_vocab *v = vt_finish(w, "spm_small.gguf", err, sizeof err);
    CHECK_MSG(v, "%s", err);
    size_t n;
    /* "▁hi": "hi" (-2) merges before "▁h" (-3), then "▁"+"hi" -> "▁hi"; "é" has no token: bytes. */
    inf_token *ids = vt_tokenize(v, "hi\xc3\xa9!", INF_TOKENIZE_ADD_SPECIAL, &n);
    CHECK_MSG(strcmp(vt_ids_string(ids, n), "1 11 3 4 5") == 0, "got %s", vt_ids_string(ids, n));
    char buf[16];
    int64_t len = inf_vocab_detokenize(v, ids, n, INF_DETOKENIZE_STRIP_SPACE_PREFIX, buf, sizeof buf);
    CHECK(len == 5 && memcmp(buf, "hi\xc3\xa9!", 5) == 0);
    free(ids);
    inf_vocab_free(v);
}

TEST(test_vocab_llama3_family_takes_whole_word_tokens_and_adds_bos_by_default)
{
    static const char *const tokens[] = {"a", "b", "c", "ab", "abc", "<|begin_of_text|>"};
    static const char *const merges[] = {"a b"};
    int32_t types[] = {1, 1, 1, 1, 1, 3};
    char err[512];
    for (int llama3 = 0; llama3 < 2; llama3++) {
        ggtk_writer *w = vt_writer("gpt2", tokens, 6, merges, 1, NULL);
        ggtk_writer_set_string(w, "tokenizer.ggml.pre", llama3 ? "llama-bpe" : "gpt-2");
        ggtk_writer_set_array(w, "tokenizer.ggml.token_type", GGTK_VALUE_INT32, 6, types);
        ggtk_writer_set_u32(w, "tokenizer.ggml.bos_token_id", 5);
        inf_vocab *v = vt_finish(w, llama3 ? "llama3.gguf" : "gpt2_small.gguf", err, sizeof err);
        CHECK_MSG(v, "%s", err);
        /* Merging alone gives ab + c; Llama 3 takes a word that is a token whole. */
        CHECK_IDS(v, "abc", INF_TOKENIZE_ADD_SPECIAL, llama3 ? "5 4" : "3 2");
        CHECK(inf_vocab_adds_bos(v) == (llama3 == 1));
        inf_vocab_free(v);
    }
}
