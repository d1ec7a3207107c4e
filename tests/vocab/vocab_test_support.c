/* vocab_test_support.c - see vocab_test_support.h. */
#include "vocab_test_support.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "test.h"

inf_vocab *vt_load(const char *path, char *err, size_t err_size)
{
    ggtk_error gerr;
    ggtk_file *file = ggtk_open(path, GGTK_OPEN_METADATA, &gerr);
    if (!file) {
        snprintf(err, err_size, "%s", gerr.message);
        return NULL;
    }
    ggtk_error verr;
    inf_vocab *vocab = inf_vocab_new(file, &verr);
    if (!vocab)
        snprintf(err, err_size, "%s", verr.message);
    ggtk_close(file);
    return vocab;
}

char *vt_read_file(const char *path, size_t *size)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        return NULL;
    }
    size_t cap = 1 << 16, len = 0, got;
    char *buf = malloc(cap + 1);
    while (buf && (got = fread(buf + len, 1, cap - len, f)) > 0) {
        len += got;
        if (len == cap) {
            char *grown = realloc(buf, 2 * cap + 1);
            if (!grown) {
                free(buf);
                buf = NULL;
                break;
            }
            buf = grown;
            cap *= 2;
        }
    }
    fclose(f);
    if (buf) {
        buf[len] = '\0';
        *size = len;
    }
    return buf;
}

inf_token *vt_tokenize(const inf_vocab *vocab, const char *text, unsigned flags, size_t *n)
{
    inf_token *ids = NULL;
    if (inf_vocab_tokenize(vocab, text, strlen(text), flags, &ids, n, NULL) != GGTK_OK) {
        *n = 0;
        return NULL;
    }
    return ids;
}

const char *vt_ids_string(const inf_token *ids, size_t n)
{
    static char buf[4096];
    size_t pos = 0;
    buf[0] = '\0';
    for (size_t i = 0; i < n && pos + 16 < sizeof buf; i++) {
        pos += (size_t)snprintf(buf + pos, sizeof buf - pos, i ? " %d" : "%d", (int)ids[i]);
    }
    return buf;
}

const char *vt_ids_of(const inf_vocab *vocab, const char *text, unsigned flags)
{
    size_t n;
    inf_token *ids = vt_tokenize(vocab, text, flags, &n);
    const char *string = vt_ids_string(ids, n);
    free(ids);
    return string;
}

const char *vt_make_corpus(const char *name)
{
    static char dir[512];
    snprintf(dir, sizeof dir, "%s", test_tmpfile(name));
    char *output = NULL;
    int status = test_run(&output, "python3 tests/vocab/py/make_corpus.py %s", dir);
    if (status != 0) {
        test_fail(__FILE__, __LINE__, "make_corpus.py exited %d: %s", status, output);
    }
    free(output);
    return status == 0 ? dir : NULL;
}

ggtk_writer *vt_writer(const char *model, const char *const *tokens, size_t n_tokens,
                       const char *const *merges, size_t n_merges, const float *scores)
{
    ggtk_writer *w = ggtk_writer_new();
    if (!w) {
        return NULL;
    }
    ggtk_writer_set_string(w, "tokenizer.ggml.model", model);
    ggtk_writer_set_string_array(w, "tokenizer.ggml.tokens", tokens, n_tokens);
    if (merges) {
        ggtk_writer_set_string_array(w, "tokenizer.ggml.merges", merges, n_merges);
    }
    if (scores) {
        ggtk_writer_set_array(w, "tokenizer.ggml.scores", GGTK_VALUE_FLOAT32, n_tokens, scores);
    }
    return w;
}

inf_vocab *vt_finish(ggtk_writer *writer, const char *name, char *err, size_t err_size)
{
    char path[512];
    snprintf(path, sizeof path, "%s", test_tmpfile(name));
    ggtk_error gerr;
    if (ggtk_writer_begin(writer, path, &gerr) != GGTK_OK || ggtk_writer_finish(writer, &gerr) != GGTK_OK) {
        snprintf(err, err_size, "writing %s: %s", path, gerr.message);
        ggtk_writer_free(writer);
        return NULL;
    }
    ggtk_writer_free(writer);
    return vt_load(path, err, err_size);
}

int vt_write_ids(const inf_vocab *v, const char *dir, unsigned flags)
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
