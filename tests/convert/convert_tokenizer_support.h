/* convert_tokenizer_support.h - helpers of the tokenizer converter tests: HF folders converted
 * to a GGUF file, GGUF tokenizers exported to folders, tokenizer keys compared. */
#ifndef CONVERT_TOKENIZER_SUPPORT_H
#define CONVERT_TOKENIZER_SUPPORT_H

#include <stdbool.h>
#include <stddef.h>

#include <ggtk/error.h>
#include <ggtk/gguf.h>
#include <ggtk/inf_vocab.h>

/* Convert the HF folder `dir` to a metadata-only GGUF file "<tmp>/<name>.gguf" and open it
 * (NULL with *err set when the conversion or the write failed). */
ggtk_file *ct_from_hf(const char *dir, const char *name, ggtk_error *err);
/* Export `gguf`'s tokenizer into the existing folder `dir` (convert_tokenizer_to_hf, the files
 * then committed together); false with *err set on failure, nothing written then. */
bool ct_to_hf(const ggtk_file *gguf, const char *dir, ggtk_error *err);
/* A fresh scratch folder "<tmp>/<name>" (static buffer). */
const char *ct_dir(const char *name);
/* Write `text` to dir/file; false on an I/O error. */
bool ct_write(const char *dir, const char *file, const char *text);
/* Compare every tokenizer.* key of a and b; "" when equal, else the first difference (static). */
const char *ct_tokenizer_keys_differ(const ggtk_file *a, const ggtk_file *b);
/* Write the tokenizer corpus (tests/vocab/py/make_corpus.py plus
 * tests/convert/py/tokenizer_corpus.py) into a scratch folder, its path into dir[0..size). */
bool ct_make_corpus(char *dir, size_t size);
/* Skip the running test when PyPI sentencepiece (tests/requirements.txt) cannot be imported. */
void ct_need_sentencepiece(void);
/* The GGUF Gemma 3 test model, or NULL when absent. */
const char *ct_gemma_path(void);

#endif
