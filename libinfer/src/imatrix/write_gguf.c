/* write_gguf.c - the GGUF imatrix format through libgguf's streaming writer, laid out as
 * llama-imatrix lays it out: four metadata pairs, then per entry (in name order) its sums and
 * its counts as F32 tensors whose dimension count drops trailing 1s, as ggml's writer does. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <ggtk/gguf.h>

#include "imatrix_internal.h"

/* ggml's tensor names hold 63 bytes. */
enum { MAX_TENSOR_NAME = 63 };

/* A 2-D shape [ne0, ne1] as ggml writes it: one dimension when ne1 is 1. */
static ggtk_status add_tensor(ggtk_writer *w, const char *name, const char *suffix, uint64_t ne0,
                              uint64_t ne1)
{
    char full[MAX_TENSOR_NAME + 1];
    snprintf(full, sizeof full, "%s%s", name, suffix);
    const uint64_t ne[2] = {ne0, ne1};
    return ggtk_writer_add_tensor(w, full, GGTK_TENSOR_F32, ne1 == 1 ? 1 : 2, ne);
}

static ggtk_status describe(const inf_imatrix *m, ggtk_writer *w, const char *path,
                            ggtk_error *err)
{
    ggtk_status st = ggtk_writer_set_string(w, "general.type", "imatrix");
    if (st == GGTK_OK)
        st = ggtk_writer_set_string_array(w, "imatrix.datasets",
                                          (const char *const *)m->datasets,
                                          (uint64_t)m->n_datasets);
    if (st == GGTK_OK)
        st = ggtk_writer_set_u32(w, "imatrix.chunk_count", (uint32_t)m->chunk_count);
    if (st == GGTK_OK)
        st = ggtk_writer_set_u32(w, "imatrix.chunk_size", (uint32_t)m->chunk_size);
    for (int64_t i = 0; st == GGTK_OK && i < m->n_slots; i++) {
        const inf_imatrix_entry *e = &m->slots[i]->pub;
        if (strlen(e->name) + strlen(".in_sum2") > MAX_TENSOR_NAME) {
            char esc[160];
            return ggtk_error_set(err, GGTK_ERR_USAGE, GGTK_NO_OFFSET,
                                  "%s: entry '%s' is too long for a GGUF tensor name (%d bytes "
                                  "with its suffix); use the legacy format", path,
                                  imatrix_escape(e->name, strlen(e->name), esc, sizeof esc),
                                  MAX_TENSOR_NAME);
        }
        st = add_tensor(w, e->name, ".in_sum2", (uint64_t)e->n_per_row, (uint64_t)e->n_mat);
        if (st == GGTK_OK)
            st = add_tensor(w, e->name, ".counts", 1, (uint64_t)e->n_mat);
    }
    if (st != GGTK_OK)
        return ggtk_error_set(err, st, GGTK_NO_OFFSET, "%s: cannot describe the imatrix: %s",
                              path, ggtk_strerror(st));
    return GGTK_OK;
}

/* The counts of one entry as the floats the file holds. */
static ggtk_status write_counts(ggtk_writer *w, const inf_imatrix_entry *e, ggtk_error *err)
{
    ggtk_status st = GGTK_OK;
    for (int64_t mat = 0; st == GGTK_OK && mat < e->n_mat; mat++) {
        const float count = (float)e->counts[mat];
        st = ggtk_writer_write_data(w, &count, sizeof count, err);
    }
    return st;
}

ggtk_status imatrix_write_gguf(const inf_imatrix *m, const char *path, ggtk_error *err)
{
    ggtk_writer *w = ggtk_writer_new();
    if (!w)
        return ggtk_error_set(err, GGTK_ERR_NOMEM, GGTK_NO_OFFSET, "%s: out of memory", path);
    ggtk_status st = describe(m, w, path, err);
    if (st == GGTK_OK)
        st = ggtk_writer_begin(w, path, err);
    for (int64_t i = 0; st == GGTK_OK && i < m->n_slots; i++) {
        const inf_imatrix_entry *e = &m->slots[i]->pub;
        st = ggtk_writer_write_data(w, e->values,
                                    (size_t)(e->n_mat * e->n_per_row) * sizeof *e->values, err);
        if (st == GGTK_OK)
            st = write_counts(w, e, err);
    }
    if (st == GGTK_OK)
        st = ggtk_writer_finish(w, err);
    ggtk_writer_free(w);
    return st;
}
