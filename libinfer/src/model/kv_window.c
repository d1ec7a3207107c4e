/* kv_window.c - sliding-window layers' caches (see kv_window.h). The cells move through
 * inf_tensor_read/write, so any buffer kind works; a slide moves n_swa - 1 positions once per
 * n_batch + 1 new ones at most, a small cost beside the batch's compute. */
#include <stdlib.h>
#include <string.h>

#include <ggtk/inf_backend.h>

#include "kv_window.h"

int32_t kv_window_cells(const inf_model *model, int32_t n_ctx, int32_t n_batch)
{
    const int64_t cells = (int64_t)model->hparams.n_swa + n_batch;
    return cells < n_ctx ? (int32_t)cells : n_ctx;
}

/* Move `n` runs of `run` bytes, `stride` apart, from `from` to `to` bytes into tensor t (the
 * runs of K are its rows of positions; V is transposed, so each of its rows holds one run). */
static ggtk_status move_runs(inf_tensor *t, size_t from, size_t to, size_t run, int64_t n,
                             size_t stride, char *scratch, ggtk_error *err)
{
    ggtk_status st = GGTK_OK;
    for (int64_t r = 0; r < n && st == GGTK_OK; r++) {
        st = inf_tensor_read(t, scratch, from + (size_t)r * stride, run, err);
        if (st == GGTK_OK)
            st = inf_tensor_write(t, scratch, to + (size_t)r * stride, run, err);
    }
    return st;
}

/* Cells of the sliding-window layers' caches, or 0 when the model has none. */
static int64_t window_cells(const inf_model *model, const model_cache *cache)
{
    for (uint32_t il = 0; il < model->hparams.n_layer; il++)
        if (model_layer_is_swa(model, il))
            return cache->k[il]->ne[1];
    return 0;
}

ggtk_status kv_window_slide(const inf_model *model, const model_cache *cache, int32_t *first,
                            int32_t n_past, int32_t n_tokens, ggtk_error *err)
{
    const int64_t cells = window_cells(model, cache);
    if (cells == 0 || n_past + n_tokens - *first <= cells)
        return GGTK_OK;
    /* A cache this short has n_swa + n_batch cells, so keep_from is past *first. */
    const int32_t keep_from = n_past - (int32_t)model->hparams.n_swa + 1;
    const int64_t drop = keep_from - *first, kept = n_past - keep_from;
    for (uint32_t il = 0; il < model->hparams.n_layer && kept > 0; il++) {
        if (!model_layer_is_swa(model, il))
            continue;
        inf_tensor *k = cache->k[il], *v = cache->v[il];
        char *scratch = malloc(k->nb[1] * (size_t)kept);
        if (!scratch)
            return ggtk_error_set(err, GGTK_ERR_NOMEM, GGTK_NO_OFFSET,
                                  "out of memory sliding the KV cache window");
        ggtk_status st = move_runs(k, (size_t)drop * k->nb[1], 0, k->nb[1] * (size_t)kept, 1, 0,
                                   scratch, err);
        if (st == GGTK_OK)
            st = move_runs(v, (size_t)drop * v->nb[0], 0, v->nb[0] * (size_t)kept, v->ne[1],
                           v->nb[1], scratch, err);
        free(scratch);
        if (st != GGTK_OK)
            return st;
    }
    *first = keep_from;
    return GGTK_OK;
}
