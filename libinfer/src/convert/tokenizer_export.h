/* tokenizer_export.h - GGUF -> HF for the tokenizer: the tokenizer.* keys of a GGUF file as
 * read once, and the builders of the files written from them. Internal to libinfer/src/convert. */
#ifndef CONVERT_TOKENIZER_EXPORT_H
#define CONVERT_TOKENIZER_EXPORT_H

#include <stdbool.h>
#include <stdint.h>

#include <jansson.h>

#include <ggtk/error.h>
#include <ggtk/gguf.h>

#include "convert/output_set.h"

/* The special tokens a GGUF file names by id and tokenizer_config.json by text. */
enum { SPECIAL_BOS, SPECIAL_EOS, SPECIAL_UNK, SPECIAL_SEP, SPECIAL_PAD, SPECIAL_MASK, SPECIAL_COUNT };
extern const char *const export_special_gguf_keys[SPECIAL_COUNT]; /* tokenizer.ggml.bos_token_id ... */
extern const char *const export_special_hf_names[SPECIAL_COUNT];  /* bos_token ... */

/* A GGUF file's tokenizer; arrays point into the file. Flags are -1 when the key is absent. */
typedef struct gguf_tokenizer {
    const char *path;
    bool spm;           /* tokenizer.ggml.model "llama"; else "gpt2" */
    const char *pre;    /* tokenizer.ggml.pre for gpt2 */
    uint64_t n_tokens;
    const ggtk_string *tokens;
    const int32_t *types;   /* NULL: all NORMAL */
    const float *scores;    /* NULL when absent */
    const ggtk_string *merges;
    uint64_t n_merges;
    int64_t special[SPECIAL_COUNT]; /* -1 when absent */
    int add_bos, add_eos, add_sep, add_space_prefix;
} gguf_tokenizer;

/* Read and check `file`'s tokenizer keys (types, lengths, ids in range). */
bool export_read_gguf(const ggtk_file *file, gguf_tokenizer *t, ggtk_error *err);
/* The type of token `id` (NORMAL when the file has no types). */
int32_t export_token_type(const gguf_tokenizer *t, uint64_t id);
/* Token `id`'s text as a JSON string; NULL with *err set when it is not UTF-8 without NUL. */
json_t *export_token_string(const gguf_tokenizer *t, uint64_t id, ggtk_error *err);
/* Whether token `id` is listed in tokenizer.json's added_tokens (and how, in *special). */
bool export_token_is_added(const gguf_tokenizer *t, uint64_t id, bool *special);

/* Where a SentencePiece token that came from added tokens is listed so that reading the folder
 * back types it again: tokens with the reference's added-token score (-1000) go to
 * tokenizer_config.json's added_tokens_decoder (CONTROL) or added_tokens.json (USER_DEFINED, kept
 * verbatim); every other token is a piece of tokenizer.model only. */
typedef enum export_added_list { EXPORT_NOT_LISTED, EXPORT_IN_DECODER, EXPORT_IN_ADDED_TOKENS_JSON } export_added_list;
export_added_list export_spm_listed_added(const gguf_tokenizer *t, uint64_t id);
/* Add dir/tokenizer.model (SentencePiece ModelProto) for `t` to `files`. */
bool export_spm_model(const gguf_tokenizer *t, output_set *files, const char *dir, ggtk_error *err);

/* tokenizer.json for the vocabulary (BPE model; for SentencePiece the Gemma kind: byte fallback,
 * merges ranked by the merged piece's score). */
json_t *export_tokenizer_json(const gguf_tokenizer *t, ggtk_error *err);
/* The SentencePiece merges of `vocab` (token text -> id) ranked as llama.cpp's SPM tokenizer
 * merges: the merged piece's score, higher first; appended to `merges` as ["left", "right"]. */
bool export_spm_merges(const gguf_tokenizer *t, const json_t *vocab, json_t *merges, ggtk_error *err);

#endif /* CONVERT_TOKENIZER_EXPORT_H */
