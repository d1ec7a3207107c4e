/* convert_tokenizer.h - the tokenizer part of gguf-convert: Hugging Face tokenizer files to the
 * tokenizer.* metadata of a GGUF file and back (internal to libinfer; see docs/convert.md,
 * "Tokenizers").
 *
 * HF -> GGUF writes the keys llama.cpp's convert_hf_to_gguf.py writes for the same folder (with
 * gguf-py's SpecialVocab deciding special ids, add_*_token flags and the chat template);
 * GGUF -> HF writes tokenizer.json, tokenizer_config.json and special_tokens_map.json that PyPI
 * `tokenizers` loads and that tokenize text to the ids libinfer's inf_vocab gives. Errors follow
 * <ggtk/error.h>: one line naming the file and the field at fault.
 */
#ifndef CONVERT_TOKENIZER_H
#define CONVERT_TOKENIZER_H

#include <stdbool.h>

#include <ggtk/error.h>
#include <ggtk/gguf.h>

#include "convert/output_set.h"

/* Read the tokenizer of the Hugging Face model folder `hf_dir` (tokenizer.model, else
 * tokenizer.json; tokenizer_config.json, config.json, chat_template.jinja when present) and add
 * every tokenizer.* key and tokenizer.chat_template to `w`. On failure returns false with *err
 * set; `w` may then hold some of the keys (the caller abandons it). */
bool convert_tokenizer_from_hf(const char *hf_dir, ggtk_writer *w, ggtk_error *err);

/* Add `gguf`'s tokenizer to `files` as out_dir/tokenizer.json, tokenizer_config.json and
 * special_tokens_map.json, and for a SentencePiece vocabulary also tokenizer.model (and
 * added_tokens.json when it has user-defined added tokens). The files are temporary files of the
 * set until the caller commits it with the rest of its output (output_set_commit), so a failure
 * anywhere, here or later, leaves none of them. The folder must exist. Returns false with *err
 * set on failure (files already added stay in the set, which the caller abandons). */
bool convert_tokenizer_to_hf(const ggtk_file *gguf, output_set *files, const char *out_dir,
                             ggtk_error *err);

#endif /* CONVERT_TOKENIZER_H */
