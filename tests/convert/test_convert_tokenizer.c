/* test_convert_tokenizer.c - the tokenizer converter on the real models: GGUF -> HF -> GGUF gives
 * the tokenizer keys of the original file, and PyPI `tokenizers` loading the exported
 * tokenizer.json gives our vocabulary's ids on a varied corpus. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <ggtk/inf_vocab.h>

#include "convert/convert_tokenizer.h"
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
    CHECK_MSG(convert_tokenizer_to_hf(original, dir, &err), "%s", err.message);
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

/* Our ids of every corpus text, tokenized with `flags`, into NAME.ids beside it; the number of
 * texts, or -1. */
static int write_our_ids(const inf_vocab *v, const char *dir, unsigned flags)
{
    char path[2048];
    size_t size;
    snprintf(path, sizeof path, "%s/list.txt", dir);
    char *list = vt_read_file(path, &size);
    int count = 0;
    for (char *name = list ? strtok(list, "\n") : NULL; name; name = strtok(NULL, "\n"), count++) {
        snprintf(path, sizeof path, "%s/%s", dir, name);
        char *text = vt_read_file(path, &size);
        inf_token *ids = NULL;
        size_t n = 0;
        if (!text || inf_vocab_tokenize(v, text, size, flags, &ids, &n, NULL) != GGTK_OK) {
            free(text);
            free(list);
            return -1;
        }
        snprintf(path, sizeof path, "%s/%s.ids", dir, name);
        FILE *f = fopen(path, "w");
        for (size_t i = 0; f && i < n; i++) {
            fprintf(f, "%d\n", (int)ids[i]);
        }
        if (f) {
            fclose(f);
        }
        free(ids);
        free(text);
    }
    bool read = list != NULL;
    free(list);
    return read ? count : -1;
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
    CHECK_MSG(convert_tokenizer_to_hf(file, dir, &err), "%s", err.message);
    const char *shared = vt_make_corpus("tokenizer_corpus");
    CHECK(shared);
    snprintf(corpus, sizeof corpus, "%s", shared);
    char *output = NULL;
    int status = test_run(&output, "python3 tests/convert/py/tokenizer_corpus.py %s", corpus);
    CHECK_MSG(status == 0, "tokenizer_corpus.py exited %d: %s", status, output);
    free(output);
    int texts = write_our_ids(v, corpus, flags);
    CHECK_MSG(texts > 100, "tokenized %d corpus texts", texts);
    status = test_run(&output, "python3 tests/convert/py/tokenizer_parity.py %s %s %s", dir, corpus, oracle);
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
