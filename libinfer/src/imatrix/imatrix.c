/* imatrix.c - the importance matrix object: entries kept sorted by name (the order both file
 * formats use), the accessors, and the weights a quantizer derives from an entry. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <ggtk/gguf.h>

#include "imatrix_internal.h"

inf_imatrix *imatrix_alloc(inf_imatrix_format format)
{
    inf_imatrix *m = calloc(1, sizeof *m);
    if (m)
        m->format = format;
    return m;
}

static void free_slot(imatrix_slot *s)
{
    free(s->name);
    free(s->values);
    free(s->counts);
    free(s);
}

void inf_imatrix_free(inf_imatrix *m)
{
    if (!m)
        return;
    for (int64_t i = 0; i < m->n_slots; i++)
        free_slot(m->slots[i]);
    free(m->path);
    free(m->slots);
    for (int64_t i = 0; i < m->n_datasets; i++)
        free(m->datasets[i]);
    free(m->datasets);
    free(m);
}

/* Index of the first slot whose name is not below `name`. */
static int64_t lower_bound(const inf_imatrix *m, const char *name)
{
    int64_t lo = 0, hi = m->n_slots;
    while (lo < hi) {
        int64_t mid = lo + (hi - lo) / 2;
        if (strcmp(m->slots[mid]->name, name) < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

imatrix_slot *imatrix_lookup(const inf_imatrix *m, const char *name)
{
    int64_t i = lower_bound(m, name);
    return i < m->n_slots && strcmp(m->slots[i]->name, name) == 0 ? m->slots[i] : NULL;
}

static bool grow_slots(inf_imatrix *m)
{
    if (m->n_slots < m->capacity)
        return true;
    int64_t capacity = m->capacity ? 2 * m->capacity : 64;
    imatrix_slot **slots = realloc(m->slots, (size_t)capacity * sizeof *slots);
    if (!slots)
        return false;
    m->slots = slots;
    m->capacity = capacity;
    return true;
}

imatrix_slot *imatrix_insert(inf_imatrix *m, const char *name, size_t name_len, int64_t n_mat,
                             int64_t n_per_row, ggtk_status *status)
{
    imatrix_slot *s = calloc(1, sizeof *s);
    if (s) {
        s->name = malloc(name_len + 1);
        s->values = calloc((size_t)(n_mat * n_per_row), sizeof *s->values);
        s->counts = calloc((size_t)n_mat, sizeof *s->counts);
    }
    if (!s || !s->name || !s->values || !s->counts || !grow_slots(m)) {
        if (s)
            free_slot(s);
        *status = GGTK_ERR_NOMEM;
        return NULL;
    }
    memcpy(s->name, name, name_len);
    s->name[name_len] = '\0';
    int64_t at = lower_bound(m, s->name);
    if (at < m->n_slots && strcmp(m->slots[at]->name, s->name) == 0) {
        free_slot(s);
        *status = GGTK_ERR_DUPLICATE;
        return NULL;
    }
    memmove(m->slots + at + 1, m->slots + at, (size_t)(m->n_slots - at) * sizeof *m->slots);
    m->slots[at] = s;
    m->n_slots++;
    s->pub = (inf_imatrix_entry){s->name, n_per_row, n_mat, s->values, s->counts};
    return s;
}

bool imatrix_add_dataset(inf_imatrix *m, const char *name, size_t len)
{
    char **datasets = realloc(m->datasets, (size_t)(m->n_datasets + 1) * sizeof *datasets);
    if (!datasets)
        return false;
    m->datasets = datasets;
    char *copy = malloc(len + 1);
    if (!copy)
        return false;
    memcpy(copy, name, len);
    copy[len] = '\0';
    m->datasets[m->n_datasets++] = copy;
    return true;
}

const char *imatrix_escape(const char *text, size_t len, char *buf, size_t size)
{
    ggtk_escape(text, len, buf, size);
    return buf;
}

inf_imatrix *inf_imatrix_read(const char *path, ggtk_error *err)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        ggtk_error_set(err, GGTK_ERR_IO, GGTK_NO_OFFSET, "%s: cannot open: %m", path);
        return NULL;
    }
    char magic[4] = {0};
    size_t got = fread(magic, 1, sizeof magic, f);
    fclose(f);
    inf_imatrix *m = got == sizeof magic && memcmp(magic, "GGUF", 4) == 0
                         ? imatrix_read_gguf(path, err)
                         : imatrix_read_legacy(path, err);
    if (m && !(m->path = strdup(path))) {
        inf_imatrix_free(m);
        ggtk_error_set(err, GGTK_ERR_NOMEM, GGTK_NO_OFFSET, "%s: out of memory", path);
        return NULL;
    }
    return m;
}

ggtk_status inf_imatrix_write(const inf_imatrix *m, const char *path, inf_imatrix_format format,
                              ggtk_error *err)
{
    if (format == INF_IMATRIX_GGUF && m->format == INF_IMATRIX_LEGACY)
        return ggtk_error_set(err, GGTK_ERR_USAGE, GGTK_NO_OFFSET,
                              "%s: an imatrix read from a legacy file has no raw counts and can "
                              "only be written in the legacy format", path);
    if (format == INF_IMATRIX_LEGACY && m->format == INF_IMATRIX_GGUF && m->chunk_size < 1)
        return ggtk_error_set(err, GGTK_ERR_USAGE, GGTK_NO_OFFSET,
                              "%s: the legacy format needs the chunk size, which this imatrix "
                              "does not record (imatrix.chunk_size)", path);
    if (format == INF_IMATRIX_GGUF)
        return imatrix_write_gguf(m, path, err);
    if (format == INF_IMATRIX_LEGACY)
        return imatrix_write_legacy(m, path, err);
    return ggtk_error_set(err, GGTK_ERR_USAGE, GGTK_NO_OFFSET, "%s: unknown imatrix format %d",
                          path, (int)format);
}

inf_imatrix_format inf_imatrix_get_format(const inf_imatrix *m) { return m->format; }
int64_t inf_imatrix_n_entries(const inf_imatrix *m) { return m->n_slots; }
int32_t inf_imatrix_chunk_count(const inf_imatrix *m) { return m->chunk_count; }
int32_t inf_imatrix_chunk_size(const inf_imatrix *m) { return m->chunk_size; }
bool inf_imatrix_has_metadata(const inf_imatrix *m) { return m->has_metadata; }
int64_t inf_imatrix_n_datasets(const inf_imatrix *m) { return m->n_datasets; }

const inf_imatrix_entry *inf_imatrix_entry_at(const inf_imatrix *m, int64_t index)
{
    return index >= 0 && index < m->n_slots ? &m->slots[index]->pub : NULL;
}

const inf_imatrix_entry *inf_imatrix_find(const inf_imatrix *m, const char *name)
{
    imatrix_slot *s = imatrix_lookup(m, name);
    return s ? &s->pub : NULL;
}

const char *inf_imatrix_path(const inf_imatrix *m) { return m->path; }

static bool contains_any(const char *name, const char *const *parts, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (strstr(name, parts[i]))
            return true;
    return false;
}

void inf_imatrix_filter(inf_imatrix *m, const char *const *include, size_t n_include,
                        const char *const *exclude, size_t n_exclude)
{
    int64_t kept = 0;
    for (int64_t i = 0; i < m->n_slots; i++) {
        const char *name = m->slots[i]->name;
        if (contains_any(name, exclude, n_exclude) ||
            (n_include > 0 && !contains_any(name, include, n_include)))
            free_slot(m->slots[i]);
        else
            m->slots[kept++] = m->slots[i];
    }
    m->n_slots = kept;
}

const char *inf_imatrix_dataset(const inf_imatrix *m, int64_t index)
{
    return index >= 0 && index < m->n_datasets ? m->datasets[index] : NULL;
}

void inf_imatrix_weights(const inf_imatrix *m, const inf_imatrix_entry *e, float *weights)
{
    const int64_t n = e->n_per_row;
    for (int64_t mat = 0; mat < e->n_mat; mat++) {
        const float *v = e->values + mat * n;
        float *w = weights + mat * n;
        /* llama-quantize divides by the count converted to float. */
        const float count = (float)e->counts[mat];
        if (m->format == INF_IMATRIX_GGUF && count <= 0.0f) {
            for (int64_t j = 0; j < n; j++)
                w[j] = 1.0f;
        } else {
            for (int64_t j = 0; j < n; j++)
                w[j] = v[j] / count;
        }
    }
}

double inf_imatrix_coverage(const inf_imatrix_entry *e)
{
    int64_t covered = 0;
    for (int64_t mat = 0; mat < e->n_mat; mat++)
        covered += e->counts[mat] > 0;
    return e->n_mat > 0 ? (double)covered / (double)e->n_mat : 0.0;
}
