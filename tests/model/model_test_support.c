/* model_test_support.c - see model_test_support.h. */
#include "model_test_support.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "test.h"

const char *tiny_model(const char *variant)
{
    static char path[512];
    char name[64];
    snprintf(name, sizeof name, "tiny_%s.gguf", variant);
    snprintf(path, sizeof path, "%s", test_tmpfile(name));
    if (access(path, R_OK) == 0)
        return path;
    char *out = NULL;
    int rc = test_run(&out, "python3 tests/model/py/tiny_llama.py make '%s' --variant %s", path,
                      variant);
    if (rc != 0)
        fprintf(stderr, "    tiny_llama.py make %s failed: %s\n", variant, out ? out : "");
    free(out);
    return rc == 0 ? path : NULL;
}

const char *tiny_arch_model(const char *name)
{
    static char path[512];
    char file[64];
    snprintf(file, sizeof file, "arch_%s.gguf", name);
    snprintf(path, sizeof path, "%s", test_tmpfile(file));
    if (access(path, R_OK) == 0)
        return path;
    char *out = NULL;
    int rc = test_run(&out, "python3 tests/model/py/tiny_arch.py make '%s' %s", path, name);
    if (rc != 0)
        fprintf(stderr, "    tiny_arch.py make %s failed: %s\n", name, out ? out : "");
    free(out);
    return rc == 0 ? path : NULL;
}

void oracle_tokens(inf_token *tokens, int32_t n)
{
    for (int32_t i = 0; i < n; i++)
        tokens[i] = (inf_token)((i * 7919 + 13) % 265);
}

/* Decode the tokens in `pieces` calls; the last call's logit rows go to `all`. */
static bool decode_pieces(inf_session *s, const inf_token *tokens, int32_t n_tokens, int pieces,
                          int32_t first, float *all, int32_t n_vocab, int32_t *rows_out,
                          ggtk_error *err)
{
    int32_t done = 0;
    for (int p = 0; p < pieces; p++) {
        bool last = p + 1 == pieces;
        int32_t n = last ? n_tokens - done : n_tokens / pieces;
        int32_t out = last ? first - done : 0, rows = 0;
        if (inf_session_decode(s, tokens + done, n, out, err) != GGTK_OK)
            return false;
        const float *logits = inf_session_logits(s, &rows);
        if (rows != n - out)
            return false;
        if (last)
            memcpy(all, logits, (size_t)rows * n_vocab * sizeof *all);
        *rows_out = rows;
        done += n;
    }
    return true;
}

bool decode_to_file(const char *model_path, int32_t n_tokens, int32_t n_batch,
                    ggtk_tensor_type kv, int pieces, int32_t first, const char *logits_path)
{
    ggtk_error err = {0};
    inf_model *model = inf_model_open(model_path, NULL, &err);
    if (!model) {
        fprintf(stderr, "    %s\n", err.message);
        return false;
    }
    inf_session_params sp = {.n_ctx = 512, .n_batch = n_batch, .n_threads = 2, .kv_type = kv};
    inf_session *s = inf_session_new(model, &sp, &err);
    int32_t n_vocab = (int32_t)inf_model_get_hparams(model)->n_vocab, rows = 0;
    inf_token *tokens = malloc((size_t)n_tokens * sizeof *tokens);
    float *all = malloc((size_t)n_tokens * n_vocab * sizeof *all);
    bool ok = s && all && tokens;
    if (ok)
        oracle_tokens(tokens, n_tokens);
    ok = ok && decode_pieces(s, tokens, n_tokens, pieces, first, all, n_vocab, &rows, &err);
    if (!ok)
        fprintf(stderr, "    decode failed: %s\n", err.message);
    FILE *f = ok ? fopen(logits_path, "wb") : NULL;
    ok = ok && f && fwrite(all, sizeof *all, (size_t)rows * n_vocab, f) == (size_t)rows * n_vocab;
    if (f)
        fclose(f);
    free(all);
    free(tokens);
    inf_session_free(s);
    inf_model_close(model);
    return ok;
}

int model_load_fails_with(const char *path, const char *needle, bool names_file)
{
    if (!path)
        return 0;
    ggtk_error err = {0};
    inf_model *m = inf_model_open(path, NULL, &err);
    inf_session *s = NULL;
    if (m) {
        inf_session_params sp = inf_session_params_default();
        sp.n_ctx = sp.n_batch = 64; /* the tiny models' context is 512 */
        s = inf_session_new(m, &sp, &err);
        inf_session_free(s);
        inf_model_close(m);
    }
    int ok = !s && strstr(err.message, needle) && !strchr(err.message, '\n') &&
             (!names_file || strstr(err.message, path));
    if (!ok)
        fprintf(stderr, "    %s: '%s' (wanted '%s')\n", path, err.message, needle);
    return ok;
}

const char *edited_model(const char *source, const char *name, model_edit_fn edit)
{
    static char path[512];
    snprintf(path, sizeof path, "%s", test_tmpfile(name));
    ggtk_error err;
    ggtk_file *file = ggtk_open(source, GGTK_OPEN_MMAP, &err);
    if (!file)
        return NULL;
    ggtk_writer *writer = ggtk_writer_new_from_file(file);
    bool ok = writer && edit(writer) && ggtk_writer_write_from(writer, path, file, &err) == GGTK_OK;
    if (!ok)
        fprintf(stderr, "    could not write %s\n", path);
    ggtk_writer_free(writer);
    ggtk_close(file);
    return ok ? path : NULL;
}

const char *truncated_model(const char *source, const char *name, long size)
{
    static char path[512];
    snprintf(path, sizeof path, "%s", test_tmpfile(name));
    return test_run(NULL, "head -c %ld '%s' > '%s'", size, source, path) == 0 ? path : NULL;
}
