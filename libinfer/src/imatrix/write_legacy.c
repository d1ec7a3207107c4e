/* write_legacy.c - the legacy binary imatrix format, written as llama-imatrix writes it. From the
 * raw form every entry is turned into means times ncall on the way out; an object read from a
 * legacy file is written back unchanged. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <ggtk/atomic_file.h>

#include "imatrix_internal.h"

static void put_i32(FILE *f, int32_t v) { fwrite(&v, sizeof v, 1, f); }

/* An entry of the raw form that some token reached (llama-imatrix leaves out the others). */
static bool has_data(const inf_imatrix_entry *e)
{
    for (int64_t mat = 0; mat < e->n_mat; mat++)
        if (e->counts[mat] > 0)
            return true;
    return false;
}

/* ncall: the chunks of the most-used matrix, rounded up so that it is never 0. */
static int32_t entry_ncall(const inf_imatrix *m, const inf_imatrix_entry *e)
{
    if (m->format == INF_IMATRIX_LEGACY)
        return (int32_t)e->counts[0];
    int64_t most = 0;
    for (int64_t mat = 0; mat < e->n_mat; mat++)
        most = e->counts[mat] > most ? e->counts[mat] : most;
    return (int32_t)((most + m->chunk_size - 1) / m->chunk_size);
}

/* The stored values of a raw entry: (sum / count) * ncall, and 1 * ncall for a matrix without
 * tokens, computed in float as llama-imatrix does. */
static void write_values(FILE *f, const inf_imatrix *m, const inf_imatrix_entry *e, int32_t ncall)
{
    const int64_t n = e->n_per_row * e->n_mat;
    if (m->format == INF_IMATRIX_LEGACY) {
        fwrite(e->values, sizeof *e->values, (size_t)n, f);
        return;
    }
    for (int64_t mat = 0; mat < e->n_mat; mat++) {
        for (int64_t j = 0; j < e->n_per_row; j++) {
            float count = (float)e->counts[mat], value = e->values[mat * e->n_per_row + j];
            if (count == 0.0f)
                value = count = 1.0f;
            const float stored = (value / count) * (float)ncall;
            fwrite(&stored, sizeof stored, 1, f);
        }
    }
}

static int32_t count_stored(const inf_imatrix *m)
{
    int32_t n = 0;
    for (int64_t i = 0; i < m->n_slots; i++)
        n += has_data(&m->slots[i]->pub);
    return n;
}

static void write_body(FILE *f, const inf_imatrix *m)
{
    put_i32(f, count_stored(m));
    for (int64_t i = 0; i < m->n_slots; i++) {
        const inf_imatrix_entry *e = &m->slots[i]->pub;
        if (!has_data(e))
            continue;
        const int32_t ncall = entry_ncall(m, e);
        put_i32(f, (int32_t)strlen(e->name));
        fputs(e->name, f);
        put_i32(f, ncall);
        put_i32(f, (int32_t)(e->n_per_row * e->n_mat));
        write_values(f, m, e, ncall);
    }
    put_i32(f, m->chunk_count);
    /* llama-imatrix names the last dataset (its own text, else the last one it loaded). */
    const char *dataset = m->n_datasets > 0 ? m->datasets[m->n_datasets - 1] : "";
    put_i32(f, (int32_t)strlen(dataset));
    fputs(dataset, f);
}

ggtk_status imatrix_write_legacy(const inf_imatrix *m, const char *path, ggtk_error *err)
{
    for (int64_t i = 0; i < m->n_slots; i++) {
        const inf_imatrix_entry *e = &m->slots[i]->pub;
        if (strlen(e->name) > INT32_MAX || e->n_per_row * e->n_mat > INT32_MAX)
            return ggtk_error_set(err, GGTK_ERR_USAGE, GGTK_NO_OFFSET,
                                  "%s: an entry is too large for the legacy format", path);
    }
    ggtk_error open_err;
    ggtk_atomic_file *out = ggtk_atomic_file_open(path, &open_err);
    if (!out) {
        if (err)
            *err = open_err;
        return open_err.status;
    }
    write_body(ggtk_atomic_file_stream(out), m);
    ggtk_status st = ggtk_atomic_file_commit(out, err);
    ggtk_atomic_file_close(out);
    return st;
}
