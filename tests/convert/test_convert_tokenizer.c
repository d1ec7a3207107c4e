/* test_convert_tokenizer.c - the tokenizer converter on the real models: GGUF -> HF -> GGUF gives
 * the tokenizer keys of the original file, and PyPI `tokenizers` loading the exported
 * tokenizer.json gives our vocabulary's ids on a varied corpus. */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <ggtk/inf_vocab.h>

#include "convert_tokenizer_support.h"
#include "test.h"
#include "vocab/vocab_test_support.h"

static ggtk_file *open_model(const char *path)
{
    if (!path) {
        SKIP("the model is absent (make models)");
    }
    ggtk_error err = {0};
    ggtk_file *f = ggtk_open(path, GGTK_OPEN_METADATA, &err);
    if (!f) {
        test_fail(__FILE__, __LINE__, "%s", err.message);
    }
    return f;
}

static void check_round_trip(const char *model, const char *name)
{
    ggtk_file *original = open_model(model);
    CHECK(original);
    const char *dir = ct_dir(name);
    ggtk_error err = {0};
    CHECK_MSG(ct_to_hf(original, dir, &err), "%s", err.message);
    ggtk_file *back = ct_from_hf(dir, name, &err);
    CHECK_MSG(back, "%s", err.message);
    const char *diff = ct_tokenizer_keys_differ(original, back);
    CHECK_MSG(*diff == '\0', "%s", diff);
    ggtk_close(back);
    ggtk_close(original);
}

TEST(test_convert_tokenizer_smollm_round_trip_keeps_every_tokenizer_key)
{
    check_round_trip(test_model_path(), "smollm_round_trip");
}

/* SentencePiece: tokenizer.model, added_tokens_decoder and the flags carry the file's keys */
TEST(test_convert_tokenizer_gemma3_round_trip_keeps_every_tokenizer_key)
{
    check_round_trip(ct_gemma_path(), "gemma3_round_trip");
}

/* Export `model`'s tokenizer and compare the ids of `tokenizers` (or of sentencepiece, `oracle`
 * "--sentencepiece") with ours tokenizing with `flags`, on the shared tokenizer corpus plus this
 * folder's own texts (tests/convert/py/tokenizer_corpus.py). */
static void check_parity(const char *model, const char *name, unsigned flags, const char *oracle)
{
    ggtk_file *file = open_model(model);
    CHECK(file);
    char err_text[512];
    inf_vocab *v = vt_load(model, err_text, sizeof err_text);
    CHECK_MSG(v, "%s", err_text);
    char dir[1024], corpus[1024];
    snprintf(dir, sizeof dir, "%s", ct_dir(name));
    ggtk_error err = {0};
    CHECK_MSG(ct_to_hf(file, dir, &err), "%s", err.message);
    CHECK(ct_make_corpus(corpus, sizeof corpus));
    char *output = NULL;
    int texts = vt_write_ids(v, corpus, flags);
    CHECK_MSG(texts > 100, "tokenized %d corpus texts", texts);
    int status = test_run(&output, "python3 tests/convert/py/tokenizer_parity.py %s %s %s", dir, corpus, oracle);
    CHECK_MSG(status == 0, "tokenizer_parity.py exited %d:\n%s", status, output);
    fprintf(stderr, "    %s", output);
    free(output);
    inf_vocab_free(v);
    ggtk_close(file);
}

TEST(test_convert_tokenizer_smollm_export_tokenizes_like_our_vocabulary)
{
    check_parity(test_model_path(), "smollm_parity", INF_TOKENIZE_PARSE_SPECIAL, "");
}

TEST(test_convert_tokenizer_gemma3_export_tokenizes_like_our_vocabulary)
{
    check_parity(ct_gemma_path(), "gemma3_parity", INF_TOKENIZE_PARSE_SPECIAL | INF_TOKENIZE_ADD_SPECIAL, "--add-special");
}

/* the exported tokenizer.model is a SentencePiece model that tokenizes as our vocabulary does */
TEST(test_convert_tokenizer_gemma3_sentencepiece_export_tokenizes_like_our_vocabulary)
{
    ct_need_sentencepiece();
    check_parity(ct_gemma_path(), "gemma3_spm_parity", 0, "--sentencepiece");
}

static int unknown_tokens(const ggtk_file *f)
{
    const ggtk_array *types;
    int count = 0;
    if (ggtk_get_array(f, "tokenizer.ggml.token_type", &types) == GGTK_OK && types->elem_type == GGTK_VALUE_INT32) {
        for (uint64_t i = 0; i < types->count; i++) {
            count += ((const int32_t *)types->data)[i] == INF_TOKEN_UNKNOWN;
        }
    }
    return count;
}

/* The vocabulary files of llama.cpp's tokenizer tests (../shared/testdata/vocab, or the folder
 * named by CONVERT_TOKENIZER_VOCABS): each goes GGUF -> HF -> GGUF unchanged, and its export
 * tokenizes the corpus as our vocabulary does (and, for SentencePiece, so does its
 * tokenizer.model). */
TEST(test_convert_tokenizer_llama_cpp_vocab_files_round_trip_and_tokenize_alike)
{
    const char *dir = getenv("CONVERT_TOKENIZER_VOCABS");
    char shared[1024];
    if (!dir && test_shared_data()) {
        snprintf(shared, sizeof shared, "%s/vocab", test_shared_data());
        dir = shared;
    }
    DIR *d = dir ? opendir(dir) : NULL;
    if (!d) {
        SKIP("no vocabulary folder (../shared/testdata/vocab or CONVERT_TOKENIZER_VOCABS)");
    }
    struct dirent *e;
    int files = 0;
    while ((e = readdir(d))) {
        size_t n = strlen(e->d_name);
        if (n < 6 || strcmp(e->d_name + n - 5, ".gguf") != 0) {
            continue;
        }
        char path[2048], name[300];
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        snprintf(name, sizeof name, "%.*s", (int)(n - 5), e->d_name);
        fprintf(stderr, "    %s\n", e->d_name);
        check_round_trip(path, name);
        ggtk_file *f = ggtk_open(path, GGTK_OPEN_METADATA, NULL);
        const char *model = NULL;
        bool spm = f && ggtk_get_string(f, "tokenizer.ggml.model", &model) == GGTK_OK && strcmp(model, "llama") == 0 &&
                   unknown_tokens(f) <= 1; /* SentencePiece refuses a model with two UNKNOWN pieces */
        ggtk_close(f);
        strcat(name, "_parity");
        check_parity(path, name, INF_TOKENIZE_PARSE_SPECIAL, "");
        if (spm) {
            ct_need_sentencepiece();
            strcat(name, "_spm");
            check_parity(path, name, 0, "--sentencepiece");
        }
        files++;
    }
    closedir(d);
    CHECK_MSG(files > 0, "no .gguf file in %s", dir);
}
