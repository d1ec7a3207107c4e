/* convert_tokenizer.h - the tokenizer half of the converters (tokenizer_*.c): tokenizer.json,
 * tokenizer.model and tokenizer_config.json to the tokenizer.* keys of a GGUF file and back;
 * not public. */
#ifndef INF_CONVERT_TOKENIZER_H
#define INF_CONVERT_TOKENIZER_H

#include <ggtk/error.h>
#include <ggtk/gguf.h>

#include <stdbool.h>

/* Add every tokenizer.* key (and the chat template) of the Hugging Face folder `hf_dir` to `w`. */
bool convert_tokenizer_from_hf(const char *hf_dir, ggtk_writer *w, ggtk_error *err);

/* Write tokenizer.json, tokenizer_config.json and special_tokens_map.json for `gguf` into
 * `out_dir`. */
bool convert_tokenizer_to_hf(const ggtk_file *gguf, const char *out_dir, ggtk_error *err);

#endif
