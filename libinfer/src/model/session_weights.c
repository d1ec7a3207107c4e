/* session_weights.c - see session_weights.h. The view is a struct copy of the model; the slots to
 * move are found through the architecture's tensor lists (the rows the loader bound them by), so
 * a family's new slot moves with no change here. A tensor bound to two slots (output tied to
 * token_embd) gets one copy. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model_arch.h"
#include "session_weights.h"

/* Originals and their copies, in the order they were first met. */
typedef struct twin_table {
    const inf_tensor **original;
    inf_tensor **copy;
    int n, capacity;
} twin_table;

/* The copy of `t` (made now when it has none yet), or NULL for a NULL slot or out of memory. */
static inf_tensor *twin_of(twin_table *table, inf_context *ctx, const inf_tensor *t)
{
    if (!t)
        return NULL;
    for (int i = 0; i < table->n; i++)
        if (table->original[i] == t)
            return table->copy[i];
    if (table->n == table->capacity)
        return NULL;
    inf_tensor *copy = inf_tensor_new(ctx, t->type, 2, t->ne);
    if (!copy)
        return NULL;
    inf_tensor_set_name(copy, "%s", t->name);
    table->original[table->n] = t;
    table->copy[table->n++] = copy;
    return copy;
}

/* Point each slot of `specs` in `base` (the view or one of its blocks) at its copy. */
static bool move_slots(twin_table *table, inf_context *ctx, const tensor_spec *specs, size_t n,
                       void *base)
{
    for (size_t i = 0; i < n; i++) {
        inf_tensor **slot = (inf_tensor **)((char *)base + specs[i].slot);
        if (*slot && !(*slot = twin_of(table, ctx, *slot)))
            return false;
    }
    return true;
}

/* The model-level slots a split moves: the embedding's, the rope factors every moved block reads,
 * the output's. */
static bool move_model_slots(twin_table *table, inf_context *ctx, device_weights *w,
                             weights_split split)
{
    inf_model *v = &w->view;
    const bool blocks = split.first_layer < v->hparams.n_layer;
    struct {
        bool moves;
        inf_tensor **slot;
    } slots[] = {{split.embedding, &v->tok_embd}, {blocks, &v->rope_freqs},
                 {blocks, &v->rope_long},          {blocks, &v->rope_short},
                 {split.output, &v->output_norm},  {split.output, &v->output},
                 {split.output, &v->output_b}};
    for (size_t i = 0; i < sizeof slots / sizeof slots[0]; i++)
        if (slots[i].moves && *slots[i].slot && !(*slots[i].slot = twin_of(table, ctx, *slots[i].slot)))
            return false;
    return true;
}

/* Copy every original's bytes into its copy. */
static bool upload_all(const twin_table *table, ggtk_error *err)
{
    for (int i = 0; i < table->n; i++) {
        const inf_tensor *t = table->original[i];
        ggtk_error inner;
        if (inf_tensor_write(table->copy[i], t->data, 0, inf_tensor_nbytes(t), &inner) != GGTK_OK) {
            ggtk_error_set(err, inner.status, GGTK_NO_OFFSET, "uploading %s failed: %s", t->name,
                           inner.message);
            return false;
        }
    }
    return true;
}

bool device_weights_upload(device_weights *w, const inf_model *model, weights_split split,
                           inf_backend *backend, ggtk_error *err)
{
    const model_arch *arch = model->arch;
    const uint32_t n_layer = model->hparams.n_layer;
    const int capacity = (int)ggtk_split_tensor_count(model->split) + 1;
    twin_table table = {malloc((size_t)capacity * sizeof *table.original),
                        malloc((size_t)capacity * sizeof *table.copy), 0, capacity};
    w->view = *model;
    w->layers = malloc(n_layer * sizeof *w->layers);
    w->ctx = inf_context_new((size_t)capacity * inf_tensor_overhead(), true);
    bool ok = table.original && table.copy && w->layers && w->ctx;
    if (ok) {
        memcpy(w->layers, model->layers, n_layer * sizeof *w->layers);
        w->view.layers = w->layers;
        ok = move_model_slots(&table, w->ctx, w, split);
        for (uint32_t il = split.first_layer; ok && il < n_layer; il++)
            ok = move_slots(&table, w->ctx, arch->layer_tensors, arch->n_layer_tensors,
                            &w->layers[il]);
    }
    if (!ok) {
        ggtk_error_set(err, GGTK_ERR_NOMEM, GGTK_NO_OFFSET, "out of memory for the weights' copies");
    } else {
        size_t bytes = 0;
        for (int i = 0; i < table.n; i++)
            bytes += inf_tensor_nbytes(table.original[i]);
        ggtk_error inner;
        w->buffer = inf_backend_alloc_context_tensors(backend, w->ctx, &inner);
        if (!w->buffer)
            ggtk_error_set(err, inner.status, GGTK_NO_OFFSET,
                           "the weights (%.1f MiB) do not fit: %s", bytes / 1048576.0,
                           inner.message);
        ok = w->buffer && upload_all(&table, err);
        w->bytes = w->buffer ? w->buffer->size : 0;
    }
    free(table.original);
    free(table.copy);
    return ok;
}

void device_weights_free(device_weights *w)
{
    inf_buffer_free(w->buffer);
    inf_context_free(w->ctx);
    free(w->layers);
    memset(w, 0, sizeof *w);
}
