/* convert_tokenizer_support.c - see convert_tokenizer_support.h. */
#include "convert_tokenizer_support.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <ggtk/gguf_util.h>

#include "convert/convert_tokenizer.h"
#include "test.h"
#include "vocab/vocab_test_support.h"

ggtk_file *ct_from_hf(const char *dir, const char *name, ggtk_error *err)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/%s.gguf", test_tmpdir(), name);
    ggtk_writer *w = ggtk_writer_new();
    bool ok = w && convert_tokenizer_from_hf(dir, w, err) && ggtk_writer_begin(w, path, err) == GGTK_OK &&
              ggtk_writer_finish(w, err) == GGTK_OK;
    ggtk_writer_free(w);
    return ok ? ggtk_open(path, GGTK_OPEN_METADATA, err) : NULL;
}

bool ct_to_hf(const ggtk_file *gguf, const char *dir, ggtk_error *err)
{
    output_set files = {0};
    bool ok = convert_tokenizer_to_hf(gguf, &files, dir, err) && output_set_commit(&files, err) == GGTK_OK;
    output_set_free(&files);
    return ok;
}

const char *ct_dir(const char *name)
{
    static char dir[1024];
    snprintf(dir, sizeof dir, "%s/%s", test_tmpdir(), name);
    mkdir(dir, 0777);
    return dir;
}

bool ct_write(const char *dir, const char *file, const char *text)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/%s", dir, file);
    FILE *f = fopen(path, "wb");
    if (!f) {
        return false;
    }
    bool ok = fwrite(text, 1, strlen(text), f) == strlen(text);
    return fclose(f) == 0 && ok;
}

static const char *missing_key(const ggtk_file *a, const ggtk_file *b, const char *b_name)
{
    static char msg[512];
    for (int64_t i = 0; i < ggtk_kv_count(a); i++) {
        const char *key = ggtk_kv_key(a, i);
        if (strncmp(key, "tokenizer.", 10) == 0 && ggtk_find_key(b, key) < 0) {
            snprintf(msg, sizeof msg, "%s lacks %s", b_name, key);
            return msg;
        }
    }
    return "";
}

const char *ct_tokenizer_keys_differ(const ggtk_file *a, const ggtk_file *b)
{
    const char *m = missing_key(a, b, "the converted file");
    if (*m) {
        return m;
    }
    if (*(m = missing_key(b, a, "the original file"))) {
        return m;
    }
    static char msg[1024];
    for (int64_t i = 0; i < ggtk_kv_count(a); i++) {
        const char *key = ggtk_kv_key(a, i);
        if (strncmp(key, "tokenizer.", 10) != 0) {
            continue;
        }
        const ggtk_value *va = ggtk_kv_value(a, i), *vb = ggtk_get(b, key);
        if (!ggtk_value_equal(va, vb)) {
            char fa[300], fb[300];
            ggtk_value_format(va, fa, sizeof fa, 4, 60);
            ggtk_value_format(vb, fb, sizeof fb, 4, 60);
            snprintf(msg, sizeof msg, "%s: original %s, converted %s", key, fa, fb);
            return msg;
        }
    }
    return "";
}

const char *ct_gemma_path(void)
{
    static const char *path = "models/gemma-3-270m-q4_k_m.gguf";
    return access(path, R_OK) == 0 ? path : NULL;
}

void ct_need_sentencepiece(void)
{
    if (test_run(NULL, "python3 -c 'import sentencepiece'") != 0) {
        SKIP("PyPI sentencepiece is not installed (pip install -r tests/requirements.txt)");
    }
}

bool ct_make_corpus(char *dir, size_t size)
{
    const char *shared = vt_make_corpus("tokenizer_corpus");
    if (!shared) {
        return false;
    }
    snprintf(dir, size, "%s", shared);
    char *output = NULL;
    int status = test_run(&output, "python3 tests/convert/py/tokenizer_corpus.py %s", dir);
    if (status != 0) {
        test_fail(__FILE__, __LINE__, "tokenizer_corpus.py exited %d: %s", status, output);
    }
    free(output);
    return status == 0;
}
