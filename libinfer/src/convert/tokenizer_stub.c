/* tokenizer_stub.c - TEMPORARY placeholder until the tokenizer converter (tokenizer_*.c, branch
 * convtok) is merged: both directions succeed without writing anything. Delete at that merge. */
#include "convert_tokenizer.h"

bool convert_tokenizer_from_hf(const char *hf_dir, ggtk_writer *w, ggtk_error *err)
{
    (void)hf_dir, (void)w, (void)err;
    return true;
}

bool convert_tokenizer_to_hf(const ggtk_file *gguf, const char *out_dir, ggtk_error *err)
{
    (void)gguf, (void)out_dir, (void)err;
    return true;
}
