/* inf_vocab.h - tokenizers of GGUF language models: text to token ids and back.
 *
 * A vocabulary is loaded from a GGUF file's tokenizer.* metadata. Two kinds are supported, chosen
 * by tokenizer.ggml.model:
 *  - "llama": SentencePiece-style (scores decide the merges, <0xXX> byte fallback, spaces written
 *    as U+2581 with a space prefix), as in Llama 1/2 and Mistral;
 *  - "gpt2": byte-level BPE (merge ranks from tokenizer.ggml.merges, a regex pre-tokenizer chosen
 *    by tokenizer.ggml.pre), as in GPT-2, Llama 3, Qwen 2/3, SmolLM, DeepSeek, Falcon, GPT-4o and
 *    every other family whose tokenizer.ggml.pre llama.cpp knows for byte-level BPE (see
 *    docs/tokenize.md for the list and the few it refuses).
 * Token ids agree with llama.cpp's llama_tokenize() for the same text and flags.
 *
 * Errors: see <ggtk/error.h>; offsets are GGTK_NO_OFFSET (messages name the metadata key).
 * Lifecycle: a vocabulary is built in memory from the file's metadata (inf_vocab_new /
 * inf_vocab_free) and keeps nothing of the file.
 *
 * Thread-safety: an inf_vocab is immutable after inf_vocab_new() returns; every function below
 * may be called from many threads at once on the same vocabulary.
 */
#ifndef INF_VOCAB_H
#define INF_VOCAB_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <ggtk/gguf.h>

#ifdef __cplusplus
extern "C" {
#endif

/* A token id: 0 <= id < inf_vocab_n_tokens(). */
typedef int32_t inf_token;

/* "No such token" (a special token the vocabulary does not define). */
#define INF_TOKEN_NONE ((inf_token)-1)

/* An opened vocabulary. Opaque; owns all its memory (it keeps no pointer into the ggtk_file). */
typedef struct inf_vocab inf_vocab;

/* The tokenizer algorithm of a vocabulary. */
typedef enum inf_vocab_type {
    INF_VOCAB_SPM = 1, /* tokenizer.ggml.model = "llama" */
    INF_VOCAB_BPE = 2, /* tokenizer.ggml.model = "gpt2" */
} inf_vocab_type;

/* Token types as stored in tokenizer.ggml.token_type (the numbers are the on-disk codes). */
typedef enum inf_token_type {
    INF_TOKEN_UNDEFINED = 0,
    INF_TOKEN_NORMAL = 1,
    INF_TOKEN_UNKNOWN = 2,      /* <unk> */
    INF_TOKEN_CONTROL = 3,      /* <s>, </s>, <|im_start|>: matched in text only with PARSE_SPECIAL */
    INF_TOKEN_USER_DEFINED = 4, /* always matched in text before tokenizing */
    INF_TOKEN_UNUSED = 5,
    INF_TOKEN_BYTE = 6,         /* <0xXX> byte-fallback tokens */
} inf_token_type;

/* ---------------------------------------------------------------------------------------------
 * Loading
 * ------------------------------------------------------------------------------------------- */

/* Build the vocabulary from `file`'s metadata (a file opened with GGTK_OPEN_METADATA is enough;
 * the file may be closed afterwards). Reads tokenizer.ggml.model, .pre, .tokens, .scores,
 * .token_type, .merges, .bos/eos/unknown/padding/seperator_token_id, .add_bos_token,
 * .add_eos_token and .add_space_prefix. Defaults follow llama.cpp (SPM: BOS 1, EOS 2, UNK 0,
 * add BOS; BPE: BOS = EOS = 11 (no BOS for ChatGLM), add BOS only for the Llama 3, Tekken and
 * Chameleon pre-tokenizer families).
 *
 * Returns NULL on failure with `err` naming the file and key at fault: a missing key
 * (GGTK_ERR_NOT_FOUND) or mistyped one (GGTK_ERR_TYPE), an unsupported model or pre-tokenizer
 * (GGTK_ERR_UNSUPPORTED), array lengths that disagree with tokenizer.ggml.tokens, a token type
 * outside 0..6, a merge without a space, a special token id outside the vocabulary, a malformed
 * <0xXX> byte token (GGTK_ERR_INVALID), or out of memory (GGTK_ERR_NOMEM). Free with
 * inf_vocab_free(). */
GGTK_API inf_vocab *inf_vocab_new(const ggtk_file *file, ggtk_error *err);

/* Release the vocabulary. NULL is allowed. */
GGTK_API void inf_vocab_free(inf_vocab *vocab);

/* ---------------------------------------------------------------------------------------------
 * Properties
 * ------------------------------------------------------------------------------------------- */

/* The tokenizer algorithm, from tokenizer.ggml.model. */
GGTK_API inf_vocab_type inf_vocab_get_type(const inf_vocab *vocab);
/* The pre-tokenizer name in effect ("default" when tokenizer.ggml.pre is absent; "" for SPM).
 * Owned by the vocabulary. */
GGTK_API const char *inf_vocab_pre_name(const inf_vocab *vocab);
/* Number of tokens (> 0). */
GGTK_API int32_t inf_vocab_n_tokens(const inf_vocab *vocab);

/* Special token ids, INF_TOKEN_NONE when the vocabulary has none. */
GGTK_API inf_token inf_vocab_bos(const inf_vocab *vocab);
GGTK_API inf_token inf_vocab_eos(const inf_vocab *vocab);
GGTK_API inf_token inf_vocab_unk(const inf_vocab *vocab);
GGTK_API inf_token inf_vocab_pad(const inf_vocab *vocab);
GGTK_API inf_token inf_vocab_sep(const inf_vocab *vocab);
/* Whether tokenizing with INF_TOKENIZE_ADD_SPECIAL prepends BOS / appends EOS. */
GGTK_API bool inf_vocab_adds_bos(const inf_vocab *vocab);
GGTK_API bool inf_vocab_adds_eos(const inf_vocab *vocab);
/* Whether `token` ends generation: EOS, tokenizer.ggml.eot_token_id / eom_token_id, or a token
 * whose text is a known end-of-turn marker (<|im_end|>, <|eot_id|>, <|endoftext|>, ...), as in
 * llama.cpp. False for ids out of range. */
GGTK_API bool inf_vocab_is_eog(const inf_vocab *vocab, inf_token token);

/* The stored text of `token` (byte-level BPE texts are in GPT-2's printable alphabet; SPM texts
 * use U+2581 for spaces), with its length in *len (may be NULL); NUL-terminated, owned by the
 * vocabulary. NULL (and *len = 0) for ids out of range. */
GGTK_API const char *inf_vocab_token_text(const inf_vocab *vocab, inf_token token, size_t *len);
/* Score of `token` (0 when the file has no scores or the id is out of range). */
GGTK_API float inf_vocab_token_score(const inf_vocab *vocab, inf_token token);
/* Type of `token` (INF_TOKEN_UNDEFINED for ids out of range). Tokens whose text marks an end of
 * turn are reported CONTROL even when the file says otherwise, as llama.cpp treats them. */
GGTK_API inf_token_type inf_vocab_token_type(const inf_vocab *vocab, inf_token token);
/* The token whose stored text is exactly text[0..len), or INF_TOKEN_NONE. */
GGTK_API inf_token inf_vocab_find(const inf_vocab *vocab, const char *text, size_t len);

/* ---------------------------------------------------------------------------------------------
 * Tokenizing
 * ------------------------------------------------------------------------------------------- */

/* Options of inf_vocab_tokenize(), combined with |. */
typedef enum inf_tokenize_flags {
    /* Add BOS/EOS as the vocabulary asks (inf_vocab_adds_bos/eos). */
    INF_TOKENIZE_ADD_SPECIAL = 1u << 0,
    /* Text equal to a CONTROL or UNKNOWN token's text ("<|im_start|>", "</s>") becomes that token;
     * without this flag such text is tokenized as ordinary characters. USER_DEFINED tokens are
     * matched either way. */
    INF_TOKENIZE_PARSE_SPECIAL = 1u << 1,
} inf_tokenize_flags;

/* Tokenize text[0..len) (UTF-8; invalid bytes are tokenized as U+FFFD by BPE vocabularies and as
 * byte tokens by SPM ones, like llama.cpp). On success stores a malloc'd array in *tokens (the
 * caller frees it; NULL when the count is 0) and the count in *n_tokens, and returns GGTK_OK.
 * Fails only when out of memory (GGTK_ERR_NOMEM) or when len exceeds 4 GiB - 1
 * (GGTK_ERR_OVERFLOW), leaving *tokens NULL and *n_tokens 0. `flags` is a set of
 * inf_tokenize_flags. */
GGTK_API ggtk_status inf_vocab_tokenize(const inf_vocab *vocab, const char *text, size_t len,
                                        unsigned flags, inf_token **tokens, size_t *n_tokens,
                                        ggtk_error *err);

/* ---------------------------------------------------------------------------------------------
 * Detokenizing
 * ------------------------------------------------------------------------------------------- */

/* The bytes `token` stands for in output text: byte-level BPE texts mapped back to bytes, U+2581
 * turned back into spaces, <0xXX> into the byte, CONTROL/UNKNOWN tokens as their text. Stores the
 * length in *len (may be NULL). Owned by the vocabulary; may contain NUL bytes and may be a
 * partial UTF-8 sequence. NULL (and *len = 0) for ids out of range. */
GGTK_API const char *inf_vocab_token_piece(const inf_vocab *vocab, inf_token token, size_t *len);

/* Options of inf_vocab_detokenize(), combined with |. */
typedef enum inf_detokenize_flags {
    /* Render CONTROL and UNKNOWN tokens as their text; by default they produce nothing. */
    INF_DETOKENIZE_RENDER_SPECIAL = 1u << 0,
    /* Drop the space that SPM tokenization put before the text (when the vocabulary adds a space
     * prefix): the first piece loses one leading space, so that detokenizing the tokens of a text
     * gives the text back. */
    INF_DETOKENIZE_STRIP_SPACE_PREFIX = 1u << 1,
} inf_detokenize_flags;

/* Concatenate the pieces of tokens[0..n) into buf (at most `cap` bytes written, no terminator
 * added) and return the total length the whole text needs (which may exceed cap, as snprintf
 * does); -1 when a token id is out of range (nothing useful is in buf then). `flags` is a set of
 * inf_detokenize_flags. */
GGTK_API int64_t inf_vocab_detokenize(const inf_vocab *vocab, const inf_token *tokens, size_t n, unsigned flags,
                             char *buf, size_t cap);

#ifdef __cplusplus
}
#endif

#endif /* INF_VOCAB_H */
