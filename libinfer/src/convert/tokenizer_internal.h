/* tokenizer_internal.h - what the tokenizer converter's files share: the vocabulary being built,
 * reading and writing the JSON files of a Hugging Face folder, and the special-token rules of
 * gguf-py's SpecialVocab. Internal to libinfer/src/convert. */
#ifndef CONVERT_TOKENIZER_INTERNAL_H
#define CONVERT_TOKENIZER_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include <ggtk/error.h>
#include <ggtk/gguf.h>

#define CONV_SPM_SPACE "\xe2\x96\x81" /* U+2581, SentencePiece's visible space */
#define CONV_GPT2_SPACE "\xc4\xa0"    /* U+0120, byte-level BPE's space */

/* Token types as tokenizer.ggml.token_type stores them. */
enum { TOK_NORMAL = 1, TOK_UNKNOWN = 2, TOK_CONTROL = 3, TOK_USER_DEFINED = 4, TOK_UNUSED = 5, TOK_BYTE = 6 };

/* A vocabulary on its way into a GGUF file. `scores` is NULL for byte-level BPE (no scores key),
 * `merges` NULL for SentencePiece. Every string is malloc'd and owned. */
typedef struct conv_vocab {
    char **tokens;
    float *scores;
    int32_t *types;
    uint32_t n_tokens;
    char **merges;
    uint32_t n_merges;
} conv_vocab;

/* Allocate `n` tokens (all NULL, type 0, scores only when with_scores). false when out of memory. */
bool conv_vocab_alloc(conv_vocab *v, uint32_t n, bool with_scores);
void conv_vocab_free(conv_vocab *v);
/* Fill every id without a token with "[PAD<id>]", typed UNUSED (and score `pad_score`), as the
 * reference converter names the ids a tokenizer leaves out. */
bool conv_vocab_fill_pads(conv_vocab *v, float pad_score);

/* `text` with every `from` replaced by `to`, malloc'd; NULL when out of memory. */
char *conv_replace_all(const char *text, const char *from, const char *to);
/* Whether `name` is one of the '|'-separated names of `list`. */
bool conv_name_in_list(const char *list, const char *name);
/* "dir/name" into a malloc'd string; NULL when out of memory. */
char *conv_path(const char *dir, const char *name);
/* Whether `path` is a regular file. */
bool conv_is_file(const char *path);
/* Parse the JSON file `path`. When the file does not exist and `optional`, returns true with
 * *out = NULL. On a read or parse error: false, with *err naming the file, line and column. */
bool conv_json_load(const char *path, bool optional, json_t **out, ggtk_error *err);
/* Whether `s` is a JSON string equal to `text`. */
bool conv_json_is_string(const json_t *s, const char *text);

/* The choices of gguf-py's SpecialVocab for one folder: special token ids, add_*_token flags,
 * the chat template and the normalizer flags, added to a writer in the reference order. */
typedef struct conv_special_input {
    const json_t *tokenizer_json;   /* tokenizer.json or NULL */
    const json_t *tokenizer_config; /* tokenizer_config.json or NULL */
    const json_t *config;           /* config.json or NULL */
    const char *hf_dir;             /* for chat_template.jinja / chat_template.json */
    uint64_t n_vocab;               /* ids at or above are skipped; UINT64_MAX for no limit */
} conv_special_input;

bool conv_special_add(const conv_special_input *in, ggtk_writer *w, ggtk_error *err);

/* The chat template a folder gives besides tokenizer_config.json's key: chat_template.jinja's
 * text, else chat_template.json's "chat_template"; *out NULL when neither exists. */
bool conv_chat_template_alternative(const char *hf_dir, json_t **out, ggtk_error *err);
/* Add a chat template (a string, or a list of {"name", "template"} as tokenizer_config.json may
 * hold) as gguf-py writes it: tokenizer.chat_template, and for a list tokenizer.chat_template.NAME
 * and tokenizer.chat_templates. null and other types add nothing (the reference ignores them). */
bool conv_chat_template_add(const json_t *template, const char *source, ggtk_writer *w, ggtk_error *err);

/* A vocabulary from tokenizer.json (byte-level BPE, model "gpt2"), as convert_hf_to_gguf.py's
 * get_vocab_base() builds it; `vocab_size` is config.json's, 0 when absent. `pre` receives the
 * tokenizer.ggml.pre name (static). */
bool conv_bpe_from_tokenizer_json(const json_t *tokenizer_json, const json_t *tokenizer_config,
                                  uint64_t vocab_size, const char *json_path, conv_vocab *v,
                                  const char **pre, ggtk_error *err);

/* A vocabulary from a SentencePiece tokenizer.model (model "llama") as
 * _create_vocab_sentencepiece() builds it; `vocab_size` as above. With `phi3`, added tokens are
 * read as Phi-3's converter reads them instead: tokenizer_config.json's added_tokens_decoder, then
 * tokenizer.json's added_tokens, each USER_DEFINED or (special) CONTROL as written. */
bool conv_spm_from_model_file(const char *model_path, const json_t *tokenizer_config,
                              const json_t *added_tokens_json, const json_t *tokenizer_json, bool phi3,
                              uint64_t vocab_size, conv_vocab *v, ggtk_error *err);
/* The pieces of a serialized SentencePiece ModelProto held in data[0..size): text, score and
 * type of each (types as in tokenizer.ggml.token_type; USER_DEFINED pieces reported as 4). */
bool conv_spm_parse(const uint8_t *data, size_t size, const char *name, conv_vocab *v, ggtk_error *err);

/* Whether a token's text looks like a control token although not marked special (<|...|>,
 * <unused..>, <pad>, <mask>, ...), as the reference converter decides. */
bool conv_token_looks_special(const char *text);

#endif /* CONVERT_TOKENIZER_INTERNAL_H */
