/* installed_api.c - a user's program that tests/build/test_install.c builds against the installed
 * tree alone (pkg-config flags, no source folders). It reaches the code that needs each private
 * dependency (xxHash hashes, OpenMP threads, libm), so a static link fails when the pkg-config
 * files leave one out. */
#include <ggtk/gguf.h>
#include <ggtk/gguf_util.h>
#include <ggtk/inf_eval.h>
#include <ggtk/inf_model.h>
#include <ggtk/inf_vocab.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* libgguf: a key, and every tensor hashed (xxHash, OpenMP) against the file's checksums if any. */
static int read_with_libgguf(const char *path)
{
    ggtk_error err;
    ggtk_file *file = ggtk_open(path, GGTK_OPEN_MMAP, &err);
    if (!file) {
        fprintf(stderr, "%s\n", err.message);
        return 1;
    }
    const char *arch = "?";
    ggtk_get_string(file, "general.architecture", &arch);
    printf("architecture %s\n", arch);
    ggtk_status status = ggtk_check_contents(file, &err);
    printf("contents %s\n", status == GGTK_OK ? "ok" : err.message);
    ggtk_close(file);
    return status == GGTK_OK ? 0 : 1;
}

/* The most likely token after `tokens`, or -1 (message on stderr). */
static inf_token predict(inf_model *model, const inf_token *tokens, int32_t n_tokens)
{
    inf_session_params params = inf_session_params_default();
    params.n_ctx = 32;
    params.n_batch = 32;
    params.n_threads = 2;
    ggtk_error err;
    inf_session *session = inf_session_new(model, &params, &err);
    if (!session) {
        fprintf(stderr, "%s\n", err.message);
        return -1;
    }
    inf_token best = -1;
    float best_logit;
    int32_t n_vocab = (int32_t)inf_vocab_n_tokens(inf_model_get_vocab(model));
    if (inf_session_decode(session, tokens, n_tokens, n_tokens - 1, &err) != GGTK_OK ||
        inf_logits_top_k(inf_session_logits(session, NULL), n_vocab, 1, &best, &best_logit,
                         &err) != GGTK_OK) {
        fprintf(stderr, "%s\n", err.message);
        best = -1;
    }
    inf_session_free(session);
    return best;
}

/* libinfer: open the model, tokenize a prompt and run one forward pass on two threads. */
static int run_with_libinfer(const char *path)
{
    ggtk_error err;
    inf_model *model = inf_model_open(path, NULL, &err);
    if (!model) {
        fprintf(stderr, "%s\n", err.message);
        return 1;
    }
    const char *prompt = "The capital of France is";
    const inf_vocab *vocab = inf_model_get_vocab(model);
    inf_token *tokens = NULL;
    size_t n_tokens = 0;
    inf_token next = -1;
    if (inf_vocab_tokenize(vocab, prompt, strlen(prompt), 0, &tokens, &n_tokens, &err) == GGTK_OK &&
        n_tokens > 0)
        next = predict(model, tokens, (int32_t)n_tokens);
    free(tokens);
    if (next >= 0) {
        size_t len = 0;
        const char *piece = inf_vocab_token_piece(vocab, next, &len);
        printf("next token '%.*s'\n", (int)len, piece);
    }
    inf_model_close(model);
    return next >= 0 ? 0 : 1;
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: installed_api MODEL\n");
        return 2;
    }
    if (read_with_libgguf(argv[1]) != 0 || run_with_libinfer(argv[1]) != 0)
        return 1;
    int same = ggtk_version_number() == GGTK_VERSION_NUMBER &&
               strcmp(ggtk_version_string(), GGTK_VERSION_STRING) == 0;
    printf("version %s %s\n", ggtk_version_string(), same ? "matches the headers" : "differs");
    return same ? 0 : 1;
}
