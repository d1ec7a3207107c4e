/* kv_window.h - the KV caches of sliding-window layers (model_layer_is_swa): such a layer's
 * queries see only the last hparams.n_swa positions, so its cache keeps only the last
 * n_swa + n_batch positions, in position order (cell i holds position `first` + i). Before a
 * batch that would overflow it, the positions no query of the batch or later can see are dropped
 * and the rest moved to the front. llama.cpp keeps a separate SWA cache of n_swa + n_ubatch cells
 * rounded up to a multiple of 256 (at most n_ctx); this one is never larger. */
#ifndef KV_WINDOW_H
#define KV_WINDOW_H

#include "model_internal.h"

/* Cells of each sliding-window layer's cache: min(n_ctx, n_swa + n_batch). */
int32_t kv_window_cells(const inf_model *model, int32_t n_ctx, int32_t n_batch);

/* Make room for a batch of n_tokens at positions n_past.. in every sliding-window layer's cache
 * of `cache`, whose cell 0 holds position *first: when the batch would not fit, drop positions
 * before n_past - n_swa + 1 (the oldest key the batch's first query sees) and move the rest to
 * cell 0, updating *first. GGTK_OK, or the error of reading or writing the cache. */
ggtk_status kv_window_slide(const inf_model *model, const model_cache *cache, int32_t *first,
                            int32_t n_past, int32_t n_tokens, ggtk_error *err);

#endif
