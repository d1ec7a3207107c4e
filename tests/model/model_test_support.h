/* model_test_support.h - tiny Llama models for the model, eval and tool tests: written by the
 * numpy oracle's generator (tests/model/py/tiny_llama.py), and broken copies made with libgguf's
 * copy-with-edits writer. */
#ifndef MODEL_TEST_SUPPORT_H
#define MODEL_TEST_SUPPORT_H

#include <ggtk/gguf.h>
#include <ggtk/inf_model.h>

/* Path of the tiny model `variant` ("default", "tied", "moe_router", "q5_0", "q8_0"; see the
 * script), made on first use in the test's scratch folder; NULL when Python fails. Static buffer
 * per call. */
const char *tiny_model(const char *variant);

/* Path of tiny_arch.py's model `name` ("llama", "qwen2", "phi3", ...; see the script), made on
 * first use in the test's scratch folder; NULL when Python fails. Static buffer per call. */
const char *tiny_arch_model(const char *name);

/* The tokens the oracle tests decode: a deterministic spread over the 265-token vocabulary. */
void oracle_tokens(inf_token *tokens, int32_t n);

/* Open `model_path`, decode oracle_tokens(n_tokens) in a session of n_ctx 512 with the given
 * n_batch and KV type, in `pieces` decode calls (logits from `first` on in the last one), and
 * write the logit rows as float32 to `logits_path`. False (reason on stderr) on any failure. */
bool decode_to_file(const char *model_path, int32_t n_tokens, int32_t n_batch,
                    ggtk_tensor_type kv, int pieces, int32_t first, const char *logits_path);

/* Expect loading `path` (and, when it loads, opening a session of 64 positions) to fail with
 * `needle` in the message, which must be one line and, with names_file, name the file. Prints
 * what it got when not. */
int model_load_fails_with(const char *path, const char *needle, bool names_file);

/* An edit of a copy: return false to report a failure. */
typedef bool (*model_edit_fn)(ggtk_writer *writer);

/* Write `name` (in the scratch folder) as a copy of `source` with `edit` applied to its metadata
 * or tensor list. Returns the path (static buffer) or NULL on failure. */
const char *edited_model(const char *source, const char *name, model_edit_fn edit);

/* A copy of the first `size` bytes of `source` as `name`; returns the path or NULL. */
const char *truncated_model(const char *source, const char *name, long size);

#endif
