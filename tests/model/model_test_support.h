/* model_test_support.h - tiny Llama models for the model, eval and tool tests: written by the
 * numpy oracle's generator (tests/model/py/tiny_llama.py), and broken copies made with libgguf's
 * copy-with-edits writer. */
#ifndef MODEL_TEST_SUPPORT_H
#define MODEL_TEST_SUPPORT_H

#include <ggtk/gguf.h>

/* Path of the tiny model `variant` ("default", "tied", "rope_freqs", "q5_0", "q8_0"; see the
 * script), made on first use in the test's scratch folder; NULL when Python fails. Static buffer
 * per call. */
const char *tiny_model(const char *variant);

/* An edit of a copy: return false to report a failure. */
typedef bool (*model_edit_fn)(ggtk_writer *writer);

/* Write `name` (in the scratch folder) as a copy of `source` with `edit` applied to its metadata
 * or tensor list. Returns the path (static buffer) or NULL on failure. */
const char *edited_model(const char *source, const char *name, model_edit_fn edit);

/* A copy of the first `size` bytes of `source` as `name`; returns the path or NULL. */
const char *truncated_model(const char *source, const char *name, long size);

#endif
