/* read_gguf.c - llama-imatrix's GGUF format (see inf_imatrix.h). libgguf validates the container
 * (header, metadata, tensor table, data bounds); here each "<name>.in_sum2" tensor is paired with
 * its "<name>.counts" and every value is checked to be one a collector can produce. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <ggtk/gguf.h>

#include "imatrix_internal.h"

static const char SUMS_SUFFIX[] = ".in_sum2";
static const char COUNTS_SUFFIX[] = ".counts";

typedef struct reader {
    const char *path;
    const ggtk_file *file;
    inf_imatrix *m;
    ggtk_error *err;
} reader;

/* Length of `name` without `suffix`, or -1 when it does not end in it (or is only the suffix). */
static int64_t base_length(const char *name, const char *suffix)
{
    size_t n = strlen(name), s = strlen(suffix);
    return n > s && strcmp(name + n - s, suffix) == 0 ? (int64_t)(n - s) : -1;
}

/* Byte offset in the file of float `i` of tensor `t`. */
static uint64_t value_offset(const reader *r, const ggtk_tensor_info *t, uint64_t i)
{
    return ggtk_data_offset(r->file) + t->offset + 4 * i;
}

static float tensor_value(const ggtk_tensor_info *t, uint64_t i)
{
    float v;
    memcpy(&v, (const unsigned char *)t->data + 4 * i, sizeof v);
    return v;
}

static bool check_f32(reader *r, const ggtk_tensor_info *t)
{
    if (t->type == GGTK_TENSOR_F32)
        return true;
    char esc[160];
    ggtk_error_set(r->err, GGTK_ERR_INVALID, t->info_offset,
                   "%s: tensor '%s' (offset %llu) has type %s, expected f32", r->path,
                   imatrix_escape(t->name, strlen(t->name), esc, sizeof esc),
                   (unsigned long long)t->info_offset, ggtk_tensor_type_name(t->type));
    return false;
}

/* The partner of tensor `t` (whose name's base is `base_len` bytes) with `suffix`, or NULL with
 * the error set. */
static const ggtk_tensor_info *partner(reader *r, const ggtk_tensor_info *t, int64_t base_len,
                                       const char *suffix)
{
    size_t len = (size_t)base_len + strlen(suffix);
    char *name = malloc(len + 1);
    if (!name) {
        ggtk_error_set(r->err, GGTK_ERR_NOMEM, GGTK_NO_OFFSET, "%s: out of memory", r->path);
        return NULL;
    }
    memcpy(name, t->name, (size_t)base_len);
    strcpy(name + base_len, suffix);
    int64_t index = ggtk_find_tensor(r->file, name);
    if (index < 0) {
        char esc[160];
        ggtk_error_set(r->err, GGTK_ERR_INVALID, t->info_offset,
                       "%s: tensor '%s' (offset %llu) has no partner '%s': sums and counts come "
                       "in pairs", r->path, imatrix_escape(t->name, strlen(t->name), esc, 80),
                       (unsigned long long)t->info_offset,
                       imatrix_escape(name, len, esc + 80, sizeof esc - 80));
    }
    free(name);
    return index < 0 ? NULL : ggtk_tensor(r->file, index);
}

/* Counts must be whole numbers >= 0 that an int64 holds. */
static bool read_counts(reader *r, const ggtk_tensor_info *t, int64_t *counts, int64_t n)
{
    for (int64_t i = 0; i < n; i++) {
        float v = tensor_value(t, (uint64_t)i);
        if (isfinite(v) && v >= 0 && v < 9.2e18f && v == floorf(v)) {
            counts[i] = (int64_t)v;
            continue;
        }
        char esc[160];
        ggtk_error_set(r->err, isfinite(v) ? GGTK_ERR_INVALID : GGTK_ERR_NONFINITE,
                       value_offset(r, t, (uint64_t)i),
                       "%s: count %lld of '%s' at offset %llu is %g, expected a whole number "
                       ">= 0 (tokens)", r->path, (long long)i,
                       imatrix_escape(t->name, strlen(t->name), esc, sizeof esc),
                       (unsigned long long)value_offset(r, t, (uint64_t)i), (double)v);
        return false;
    }
    return true;
}

/* Sums must be finite and >= 0, and 0 for a matrix no token reached. */
static bool read_sums(reader *r, const ggtk_tensor_info *t, imatrix_slot *s)
{
    const int64_t n = s->pub.n_per_row;
    for (int64_t mat = 0; mat < s->pub.n_mat; mat++) {
        for (int64_t j = 0; j < n; j++) {
            uint64_t i = (uint64_t)(mat * n + j);
            float v = tensor_value(t, i);
            s->values[i] = v;
            const char *why = !isfinite(v) ? "expected a finite sum of squares"
                              : v < 0      ? "expected a sum of squares >= 0"
                              : v != 0 && s->counts[mat] == 0
                                  ? "but the matrix's count is 0 (no token reached it)"
                                  : NULL;
            if (!why)
                continue;
            char esc[160];
            ggtk_error_set(r->err, isfinite(v) ? GGTK_ERR_INVALID : GGTK_ERR_NONFINITE,
                           value_offset(r, t, i), "%s: value %llu of '%s' at offset %llu is %g, %s",
                           r->path, (unsigned long long)i,
                           imatrix_escape(t->name, strlen(t->name), esc, sizeof esc),
                           (unsigned long long)value_offset(r, t, i), (double)v, why);
            return false;
        }
    }
    return true;
}

/* The entry whose sums are tensor `sums`. */
static bool read_entry(reader *r, const ggtk_tensor_info *sums, int64_t base_len)
{
    const ggtk_tensor_info *counts = partner(r, sums, base_len, COUNTS_SUFFIX);
    if (!counts || !check_f32(r, sums) || !check_f32(r, counts))
        return false;
    uint64_t n_values = ggtk_tensor_elements(sums), n_mat = ggtk_tensor_elements(counts);
    if (n_values % n_mat != 0) {
        char esc[160];
        ggtk_error_set(r->err, GGTK_ERR_INVALID, sums->info_offset,
                       "%s: tensor '%s' (offset %llu) holds %llu sums, not a whole number of rows "
                       "for its %llu counts", r->path,
                       imatrix_escape(sums->name, strlen(sums->name), esc, sizeof esc),
                       (unsigned long long)sums->info_offset, (unsigned long long)n_values,
                       (unsigned long long)n_mat);
        return false;
    }
    ggtk_status status;
    imatrix_slot *s = imatrix_insert(r->m, sums->name, (size_t)base_len, (int64_t)n_mat,
                                     (int64_t)(n_values / n_mat), &status);
    if (!s) {
        ggtk_error_set(r->err, status, GGTK_NO_OFFSET, "%s: out of memory", r->path);
        return false;
    }
    return read_counts(r, counts, s->counts, (int64_t)n_mat) && read_sums(r, sums, s);
}

/* Tensors named "<name>.in_sum2" make entries; a ".counts" tensor must have its sums; other
 * tensors are ignored, as llama.cpp does. */
static bool read_entries(reader *r)
{
    for (int64_t i = 0; i < ggtk_tensor_count(r->file); i++) {
        const ggtk_tensor_info *t = ggtk_tensor(r->file, i);
        int64_t base = base_length(t->name, SUMS_SUFFIX);
        if (base > 0 && !read_entry(r, t, base))
            return false;
        base = base_length(t->name, COUNTS_SUFFIX);
        if (base > 0 && !partner(r, t, base, SUMS_SUFFIX))
            return false;
    }
    if (r->m->n_slots > 0)
        return true;
    ggtk_error_set(r->err, GGTK_ERR_INVALID, GGTK_NO_OFFSET,
                   "%s: no importance matrix entries (no '<name>.in_sum2' tensors): not an "
                   "imatrix file", r->path);
    return false;
}

static bool type_error(reader *r, const char *key, const char *expected)
{
    int64_t index = ggtk_find_key(r->file, key);
    uint64_t at = ggtk_kv_offset(r->file, index);
    ggtk_error_set(r->err, GGTK_ERR_TYPE, at, "%s: %s at offset %llu: expected %s", r->path, key,
                   (unsigned long long)at, expected);
    return false;
}

/* imatrix.chunk_count / chunk_size: an integer in 0..INT32_MAX when present. */
static bool read_int_key(reader *r, const char *key, int32_t *out, bool *present)
{
    uint64_t v = 0;
    ggtk_status st = ggtk_get_uint(r->file, key, &v);
    *present = st != GGTK_ERR_NOT_FOUND;
    if (st == GGTK_ERR_NOT_FOUND)
        return true;
    if (st != GGTK_OK || v > INT32_MAX)
        return type_error(r, key, "an integer in 0..2147483647");
    *out = (int32_t)v;
    return true;
}

static bool read_metadata(reader *r)
{
    bool has_datasets = false, has_count, has_size;
    const ggtk_array *datasets;
    ggtk_status st = ggtk_get_array(r->file, "imatrix.datasets", &datasets);
    if (st == GGTK_OK) {
        if (datasets->elem_type != GGTK_VALUE_STRING)
            return type_error(r, "imatrix.datasets", "an array of strings");
        const ggtk_string *names = datasets->data;
        for (uint64_t i = 0; i < datasets->count; i++) {
            if (!imatrix_add_dataset(r->m, names[i].data, (size_t)names[i].len)) {
                ggtk_error_set(r->err, GGTK_ERR_NOMEM, GGTK_NO_OFFSET, "%s: out of memory",
                               r->path);
                return false;
            }
        }
        has_datasets = true;
    } else if (st != GGTK_ERR_NOT_FOUND) {
        return type_error(r, "imatrix.datasets", "an array of strings");
    }
    if (!read_int_key(r, "imatrix.chunk_count", &r->m->chunk_count, &has_count) ||
        !read_int_key(r, "imatrix.chunk_size", &r->m->chunk_size, &has_size))
        return false;
    r->m->has_metadata = has_datasets && has_count && has_size;
    return true;
}

inf_imatrix *imatrix_read_gguf(const char *path, ggtk_error *err)
{
    ggtk_file *file = ggtk_open(path, GGTK_OPEN_MMAP, err);
    if (!file)
        return NULL;
    reader r = {path, file, imatrix_alloc(INF_IMATRIX_GGUF), err};
    bool ok = r.m != NULL;
    if (!ok)
        ggtk_error_set(err, GGTK_ERR_NOMEM, GGTK_NO_OFFSET, "%s: out of memory", path);
    ok = ok && read_metadata(&r) && read_entries(&r);
    ggtk_close(file);
    if (!ok) {
        inf_imatrix_free(r.m);
        return NULL;
    }
    return r.m;
}
