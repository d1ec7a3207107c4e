/* main.c - gguf-tokenize: the token ids of a text under a GGUF model's vocabulary, printed as
 * llama-tokenize prints them (see --help and docs/tokenize.md). Only the metadata is read. */
#include "signals.h"
#include "tokenize_tool.h"
#include "tool_stdout.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <ggtk/gguf.h>
#include <ggtk/inf_vocab.h>

static int fail(const ggtk_error *err)
{
    fprintf(stderr, "gguf-tokenize: error: %s\n", err->message);
    return EXIT_FAILED;
}

static inf_vocab *load_vocab(const char *path, ggtk_error *err)
{
    ggtk_file *file = ggtk_open(path, GGTK_OPEN_METADATA, err);
    if (!file) {
        return NULL;
    }
    inf_vocab *vocab = inf_vocab_new(file, err);
    ggtk_close(file);
    return vocab;
}

/* "[1, 2, 3]" on one line. */
static void print_ids(const inf_token *ids, size_t n)
{
    putchar('[');
    for (size_t i = 0; i < n; i++) {
        printf(i ? ", %d" : "%d", (int)ids[i]);
    }
    puts("]");
}

/* "    id -> 'piece'" per token, special tokens shown as their text. Like llama-tokenize, which
 * prints the piece as a C string, a piece stops at its first NUL byte. */
static void print_pieces(const inf_vocab *vocab, const inf_token *ids, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        size_t len;
        const char *piece = inf_vocab_token_piece(vocab, ids[i], &len);
        printf("%6d -> '%.*s'\n", (int)ids[i], (int)strnlen(piece, len), piece);
    }
}

static int run(const tokenize_args *args)
{
    ggtk_error err;
    inf_vocab *vocab = load_vocab(args->model, &err);
    if (!vocab) {
        return fail(&err);
    }
    size_t len = 0;
    char *text = tokenize_read_text(args, &len);
    if (!text) {
        inf_vocab_free(vocab);
        return EXIT_FAILED;
    }
    unsigned flags = (args->no_bos ? 0 : INF_TOKENIZE_ADD_SPECIAL) | (args->parse_special ? INF_TOKENIZE_PARSE_SPECIAL : 0);
    inf_token *ids = NULL;
    size_t n = 0;
    int rc = 0;
    if (inf_vocab_tokenize(vocab, text, len, flags, &ids, &n, &err) != GGTK_OK) {
        rc = fail(&err);
    } else if (args->ids_only) {
        print_ids(ids, n);
    } else {
        print_pieces(vocab, ids, n);
    }
    if (rc == 0 && args->show_count) {
        printf("Total number of tokens: %zu\n", n);
    }
    free(ids);
    free(text);
    inf_vocab_free(vocab);
    return rc;
}

int main(int argc, char **argv)
{
    tool_signals_install();
    tokenize_args args;
    bool exit_now = false;
    int rc = tokenize_args_parse(&args, argc, argv, &exit_now);
    if (rc == 0 && !exit_now) {
        rc = run(&args);
    }
    return tool_stdout_close("gguf-tokenize: error: ") ? rc : EXIT_FAILED;
}
