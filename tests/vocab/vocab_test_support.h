/* vocab_test_support.h - helpers shared by the tokenizer tests: loading a vocabulary from a GGUF
 * path, reading files, and small synthetic vocabularies written with libgguf's writer. */
#ifndef VOCAB_TEST_SUPPORT_H
#define VOCAB_TEST_SUPPORT_H

#include <stdbool.h>
#include <stddef.h>

#include <string.h>

#include <ggtk/gguf.h>
#include <ggtk/inf_vocab.h>
#include "test.h"

/* Load the vocabulary of the GGUF file at `path`; NULL on failure with the reason in err. */
inf_vocab *vt_load(const char *path, char *err, size_t err_size);
/* The whole file, NUL-terminated, in a malloc'd buffer (*size set), or NULL. */
char *vt_read_file(const char *path, size_t *size);
/* Tokenize a NUL-terminated string; returns the malloc'd ids (count in *n), NULL when empty. */
inf_token *vt_tokenize(const inf_vocab *vocab, const char *text, unsigned flags, size_t *n);
/* "1 2 3" for ids[0..n) into a static buffer (truncated past 4 KiB). */
const char *vt_ids_string(const inf_token *ids, size_t n);
/* The ids of a NUL-terminated string as vt_ids_string() writes them ("" when there are none). */
const char *vt_ids_of(const inf_vocab *vocab, const char *text, unsigned flags);
/* Write the tokenizer test corpus (tests/vocab/py/make_corpus.py) into the scratch folder `name`;
 * its path (static buffer), or NULL after test_fail when the script failed. */
const char *vt_make_corpus(const char *name);
/* Our ids of every text named in `dir`/list.txt, tokenized by `v` with `flags`, into NAME.ids
 * beside it (one id a line); the number of texts, or -1. */
int vt_write_ids(const inf_vocab *v, const char *dir, unsigned flags);

/* Check that `text` tokenizes with `flags` to the ids `want` ("1 2 3"). */
#define CHECK_IDS(vocab, text, flags, want)                                                       \
    do {                                                                                          \
        const char *got_ = vt_ids_of(vocab, text, flags);                                         \
        CHECK_MSG(strcmp(got_, want) == 0, "'%s': got %s, want %s", text, got_, want);            \
    } while (0)

/* A writer holding a tiny vocabulary: `model` ("gpt2"/"llama"), the tokens and, when not NULL,
 * the merges (gpt2) or scores (llama), all other keys absent. Add keys, then vt_finish(). */
ggtk_writer *vt_writer(const char *model, const char *const *tokens, size_t n_tokens,
                       const char *const *merges, size_t n_merges, const float *scores);
/* Write `writer` to a scratch file, free it, and load the vocabulary (NULL with err on failure). */
inf_vocab *vt_finish(ggtk_writer *writer, const char *name, char *err, size_t err_size);

#endif
