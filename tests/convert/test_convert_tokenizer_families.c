/* test_convert_tokenizer_families.c - HF -> GGUF on small folders of each family
 * (tests/convert/py/tokenizer_families.py: byte-level BPE with the gpt-2, llama3, qwen2, smollm,
 * starcoder, gpt-4o and tekken pre-tokenizers, RoBERTa post-processing, SentencePiece models of
 * the Gemma and Phi-3 kinds): every tokenizer key equals what llama.cpp's converter (its vocabulary
 * code reimplemented on tokenizers/sentencepiece, gguf-py's SpecialVocab as is) writes, and an
 * unknown pre-tokenizer is refused by name. Then the converted files go back to HF and again to
 * GGUF unchanged. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "convert_tokenizer_support.h"
#include "test.h"
#include "vocab/vocab_test_support.h"

static const char *families_dir(void)
{
    ct_need_sentencepiece();
    static char dir[1024];
    snprintf(dir, sizeof dir, "%s/families", test_tmpdir());
    char *output = NULL;
    int status = test_run(&output, "python3 tests/convert/py/tokenizer_families.py %s", dir);
    if (status != 0) {
        test_fail(__FILE__, __LINE__, "tokenizer_families.py exited %d: %s", status, output);
    }
    free(output);
    return status == 0 ? dir : NULL;
}

/* Convert one family and compare with its expected file; "" or the failure. */
static const char *check_family(const char *dir, const char *name, const char *pre)
{
    static char msg[1200];
    char folder[1100], expected_path[1100];
    snprintf(folder, sizeof folder, "%s/%s", dir, name);
    snprintf(expected_path, sizeof expected_path, "%s/%s.gguf", dir, name);
    ggtk_error err = {0};
    ggtk_file *got = ct_from_hf(folder, name, &err);
    if (strcmp(pre, "refuse") == 0) {
        bool named = !got && strstr(err.message, "tokenizer.json") && strstr(err.message, "pre_tokenizer") &&
                     strstr(err.message, "\\\\p{L}+|\\\\p{N}+");
        snprintf(msg, sizeof msg, "%s: %s", name, got ? "was converted" : named ? "" : err.message);
        ggtk_close(got);
        return got || !named ? msg : "";
    }
    if (!got) {
        snprintf(msg, sizeof msg, "%s: %s", name, err.message);
        return msg;
    }
    ggtk_file *expected = ggtk_open(expected_path, GGTK_OPEN_METADATA, &err);
    const char *diff = expected ? ct_tokenizer_keys_differ(expected, got) : err.message;
    snprintf(msg, sizeof msg, "%s%s%s", *diff ? name : "", *diff ? ": " : "", diff);
    if (!*diff) {
        /* back to HF and to GGUF again: the same keys. config.json (the model's, written by the
         * rest of the converter) comes along: its vocab_size restores the [PAD<id>] tail. */
        char back_dir[1200];
        snprintf(back_dir, sizeof back_dir, "%s/%s_back", dir, name);
        char cmd[5000];
        snprintf(cmd, sizeof cmd, "mkdir -p %s && { ! test -f %s/config.json || cp %s/config.json %s/; }", back_dir,
                 folder, folder, back_dir);
        ggtk_file *again = system(cmd) == 0 && ct_to_hf(got, back_dir, &err)
                               ? ct_from_hf(back_dir, "again", &err) : NULL;
        diff = again ? ct_tokenizer_keys_differ(got, again) : err.message;
        snprintf(msg, sizeof msg, "%s%s%s", *diff ? name : "", *diff ? " (GGUF -> HF -> GGUF): " : "", diff);
        ggtk_close(again);
    }
    ggtk_close(expected);
    ggtk_close(got);
    return msg;
}

/* The byte-level families whose pre-tokenizer our vocabulary runs: the GGUF converted from the
 * folder tokenizes the corpus as `tokenizers` does with the folder's own tokenizer.json, and as
 * it does with the tokenizer.json exported back from that GGUF. gpt-4o and tekken are left out:
 * there llama.cpp's ids, which ours equal, differ from HF's on non-ASCII letters (its \p{Lu} and
 * \p{Ll} mean any letter; docs/tokenize.md), so `tokenizers` is not their oracle. */
TEST(test_convert_tokenizer_families_tokenize_like_their_tokenizer_json)
{
    static const char *const families[] = {"gpt2", "llama3", "qwen2", "smollm", "starcoder"};
    const char *dir = families_dir();
    CHECK(dir);
    char families_path[1100], corpus[1024];
    snprintf(families_path, sizeof families_path, "%s", dir);
    CHECK(ct_make_corpus(corpus, sizeof corpus));
    int compared = 0;
    for (size_t i = 0; i < sizeof families / sizeof families[0]; i++) {
        char folder[1200], exported[1300], gguf_path[1300], err_text[512];
        snprintf(folder, sizeof folder, "%s/%s", families_path, families[i]);
        snprintf(exported, sizeof exported, "%s_exported", folder);
        ggtk_error err = {0};
        ggtk_file *f = ct_from_hf(folder, families[i], &err);
        CHECK_MSG(f, "%s: %s", families[i], err.message);
        snprintf(gguf_path, sizeof gguf_path, "%s", ggtk_path(f));
        mkdir(exported, 0777);
        bool ok = ct_to_hf(f, exported, &err);
        ggtk_close(f);
        CHECK_MSG(ok, "%s: %s", families[i], err.message);
        inf_vocab *v = vt_load(gguf_path, err_text, sizeof err_text);
        if (!v) {
            fprintf(stderr, "    %s: not compared, our vocabulary does not run it: %s\n", families[i], err_text);
            continue;
        }
        int texts = vt_write_ids(v, corpus, INF_TOKENIZE_PARSE_SPECIAL);
        inf_vocab_free(v);
        CHECK_MSG(texts > 100, "%s: tokenized %d texts", families[i], texts);
        for (int round = 0; round < 2; round++) {
            char *output = NULL;
            int status = test_run(&output, "python3 tests/convert/py/tokenizer_parity.py %s %s", round ? exported : folder,
                                  corpus);
            CHECK_MSG(status == 0, "%s (%s): tokenizer_parity.py exited %d:\n%s", families[i], round ? "exported" : "original",
                      status, output);
            fprintf(stderr, "    %s (%s): %s", families[i], round ? "exported" : "original", output);
            free(output);
        }
        compared++;
    }
    CHECK_MSG(compared >= 4, "only %d families compared", compared);
}

TEST(test_convert_tokenizer_families_match_the_reference_converter)
{
    const char *dir = families_dir();
    CHECK(dir);
    char path[1100];
    snprintf(path, sizeof path, "%s/families.txt", dir);
    FILE *f = fopen(path, "r");
    CHECK(f);
    char name[64], pre[64];
    int checked = 0, failed = 0;
    while (fscanf(f, "%63s %63s", name, pre) == 2) {
        const char *problem = check_family(dir, name, pre);
        if (*problem) {
            test_fail(__FILE__, __LINE__, "%s", problem);
            failed++;
        }
        checked++;
    }
    fclose(f);
    CHECK_MSG(checked == 11 && failed == 0, "%d families checked, %d failed", checked, failed);
}
