/* tokenizer_pre_table.h - the table from a tokenizer.json pre_tokenizer definition to llama.cpp's
 * tokenizer.ggml.pre name and back. Internal to libinfer/src/convert. */
#ifndef CONVERT_TOKENIZER_PRE_TABLE_H
#define CONVERT_TOKENIZER_PRE_TABLE_H

#include <stdbool.h>

#include <jansson.h>

/* The tokenizer.ggml.pre name of the pre-tokenizer `pre` (tokenizer.json's "pre_tokenizer"),
 * compared by what changes the split (regexes, behaviours, ByteLevel's prefix space and regex,
 * digit splitting; not trim_offsets). `clean_spaces` is tokenizer_config.json's
 * clean_up_tokenization_spaces (1, 0, or -1 when absent): it separates families whose
 * pre-tokenizers are identical and which llama.cpp tells apart only by that flag (smollm, whose
 * files say false, and starcoder). NULL when no row matches. */
const char *tokenizer_pre_name(const json_t *pre, int clean_spaces);

/* A new pre_tokenizer object for the tokenizer.ggml.pre name `name` (a canonical name or one of
 * llama.cpp's aliases of the same regexes); *clean_spaces receives the
 * clean_up_tokenization_spaces and *ignore_merges the BPE model's ignore_merges to write beside
 * it. NULL for a name the table does not have, or out of memory. */
json_t *tokenizer_pre_json(const char *name, bool *clean_spaces, bool *ignore_merges);

/* `pre` without the fields that do not change the split, as compact JSON (malloc'd), for
 * messages. */
char *tokenizer_pre_describe(const json_t *pre);

#endif /* CONVERT_TOKENIZER_PRE_TABLE_H */
