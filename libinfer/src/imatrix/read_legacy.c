/* read_legacy.c - llama-imatrix's legacy binary format (see inf_imatrix.h). The whole file is
 * read into memory first, so every count and length is checked against the bytes that are left
 * before anything is allocated for it. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "imatrix_internal.h"

/* The smallest entry: name length, a 1-byte name, ncall, n_values, one value. */
enum { MIN_ENTRY_BYTES = 4 + 1 + 4 + 4 + 4 };

typedef struct cursor {
    const char *path;
    const unsigned char *data;
    uint64_t size;
    uint64_t pos;
    ggtk_error *err;
} cursor;

static uint64_t bytes_left(const cursor *c) { return c->size - c->pos; }

static bool truncated(cursor *c, const char *field, uint64_t need)
{
    ggtk_error_set(c->err, GGTK_ERR_TRUNCATED, c->pos,
                   "%s: %s at offset %llu needs %llu bytes, the file has %llu left", c->path,
                   field, (unsigned long long)c->pos, (unsigned long long)need,
                   (unsigned long long)bytes_left(c));
    return false;
}

static bool read_i32(cursor *c, const char *field, int32_t *out)
{
    if (bytes_left(c) < 4)
        return truncated(c, field, 4);
    uint32_t u = (uint32_t)c->data[c->pos] | (uint32_t)c->data[c->pos + 1] << 8 |
                 (uint32_t)c->data[c->pos + 2] << 16 | (uint32_t)c->data[c->pos + 3] << 24;
    memcpy(out, &u, sizeof u);
    c->pos += 4;
    return true;
}

static bool invalid(cursor *c, uint64_t offset, const char *field, long long v,
                    const char *expected)
{
    ggtk_error_set(c->err, GGTK_ERR_INVALID, offset, "%s: %s at offset %llu is %lld, expected %s",
                   c->path, field, (unsigned long long)offset, v, expected);
    return false;
}

/* A name or dataset of `len` bytes (already read) at the cursor; no NUL inside. */
static bool read_text(cursor *c, const char *field, int32_t len, bool allow_empty,
                      const char **text)
{
    uint64_t at = c->pos - 4;
    if (len < 0 || (len == 0 && !allow_empty))
        return invalid(c, at, field, len, allow_empty ? "0 or more" : "1 or more");
    if (bytes_left(c) < (uint64_t)len)
        return truncated(c, field, (uint64_t)len);
    *text = (const char *)c->data + c->pos;
    if (memchr(*text, '\0', (size_t)len)) {
        ggtk_error_set(c->err, GGTK_ERR_INVALID, c->pos,
                       "%s: %s at offset %llu holds a NUL byte", c->path, field,
                       (unsigned long long)c->pos);
        return false;
    }
    c->pos += (uint64_t)len;
    return true;
}

/* n floats at the cursor into `out`, each finite and not negative. */
static bool read_values(cursor *c, const char *name, float *out, int64_t n)
{
    for (int64_t i = 0; i < n; i++) {
        uint64_t at = c->pos + 4 * (uint64_t)i;
        uint32_t u = (uint32_t)c->data[at] | (uint32_t)c->data[at + 1] << 8 |
                     (uint32_t)c->data[at + 2] << 16 | (uint32_t)c->data[at + 3] << 24;
        memcpy(&out[i], &u, sizeof u);
        if (!isfinite(out[i]) || out[i] < 0) {
            char esc[160];
            ggtk_error_set(c->err, isfinite(out[i]) ? GGTK_ERR_INVALID : GGTK_ERR_NONFINITE, at,
                           "%s: value %lld of entry '%s' at offset %llu is %g, expected a finite "
                           "value >= 0 (a mean of squares)", c->path, (long long)i,
                           imatrix_escape(name, strlen(name), esc, sizeof esc),
                           (unsigned long long)at, (double)out[i]);
            return false;
        }
    }
    c->pos += 4 * (uint64_t)n;
    return true;
}

static bool read_entry(cursor *c, inf_imatrix *m, int32_t index)
{
    int32_t len, ncall, n_values;
    const char *name;
    char field[64];
    snprintf(field, sizeof field, "name of entry %d", index);
    if (!read_i32(c, "name length", &len) || !read_text(c, field, len, false, &name))
        return false;
    char esc[160];
    imatrix_escape(name, (size_t)len, esc, sizeof esc);
    uint64_t ncall_at = c->pos;
    if (!read_i32(c, "ncall", &ncall))
        return false;
    if (ncall < 1)
        return invalid(c, ncall_at, "ncall", ncall, "1 or more (chunks collected)");
    uint64_t n_at = c->pos;
    if (!read_i32(c, "value count", &n_values))
        return false;
    if (n_values < 1)
        return invalid(c, n_at, "value count", n_values, "1 or more");
    if (bytes_left(c) / 4 < (uint64_t)n_values)
        return truncated(c, "values", 4 * (uint64_t)n_values);
    ggtk_status status;
    imatrix_slot *s = imatrix_insert(m, name, (size_t)len, 1, n_values, &status);
    if (!s) {
        ggtk_error_set(c->err, status, ncall_at - 4 - (uint64_t)len,
                       status == GGTK_ERR_DUPLICATE ? "%s: entry '%s' appears twice"
                                                    : "%s: out of memory for entry '%s'",
                       c->path, esc);
        return false;
    }
    s->counts[0] = ncall;
    return read_values(c, s->name, s->values, n_values);
}

/* The optional trailer: chunk count, then the dataset name; nothing may follow. */
static bool read_trailer(cursor *c, inf_imatrix *m)
{
    if (bytes_left(c) == 0)
        return true;
    uint64_t at = c->pos;
    int32_t chunks, len;
    if (!read_i32(c, "chunk count", &chunks))
        return false;
    if (chunks < 0)
        return invalid(c, at, "chunk count", chunks, "0 or more");
    m->chunk_count = chunks;
    if (bytes_left(c) == 0)
        return true; /* llama-imatrix's reader also accepts a file ending here */
    const char *dataset;
    if (!read_i32(c, "dataset name length", &len) ||
        !read_text(c, "dataset name", len, true, &dataset))
        return false;
    if (len > 0 && !imatrix_add_dataset(m, dataset, (size_t)len)) {
        ggtk_error_set(c->err, GGTK_ERR_NOMEM, GGTK_NO_OFFSET, "%s: out of memory", c->path);
        return false;
    }
    if (bytes_left(c) != 0) {
        ggtk_error_set(c->err, GGTK_ERR_LAYOUT, c->pos,
                       "%s: %llu unexpected bytes after the dataset name at offset %llu", c->path,
                       (unsigned long long)bytes_left(c), (unsigned long long)c->pos);
        return false;
    }
    return true;
}

static bool parse(cursor *c, inf_imatrix *m)
{
    int32_t n_entries;
    if (!read_i32(c, "entry count", &n_entries))
        return false;
    if (n_entries < 1)
        return invalid(c, 0, "entry count", n_entries, "1 or more");
    if ((uint64_t)n_entries > bytes_left(c) / MIN_ENTRY_BYTES) {
        ggtk_error_set(c->err, GGTK_ERR_TRUNCATED, 0,
                       "%s: entry count at offset 0 is %d, but the %llu bytes that follow hold "
                       "at most %llu entries", c->path, n_entries,
                       (unsigned long long)bytes_left(c),
                       (unsigned long long)(bytes_left(c) / MIN_ENTRY_BYTES));
        return false;
    }
    for (int32_t i = 0; i < n_entries; i++)
        if (!read_entry(c, m, i))
            return false;
    return read_trailer(c, m);
}

/* The whole file in memory. */
static unsigned char *slurp(const char *path, uint64_t *size, ggtk_error *err)
{
    FILE *f = fopen(path, "rb");
    struct stat st;
    if (!f || fstat(fileno(f), &st) != 0) {
        ggtk_error_set(err, GGTK_ERR_IO, GGTK_NO_OFFSET, "%s: cannot open: %s", path,
                       strerror(errno));
        if (f)
            fclose(f);
        return NULL;
    }
    *size = (uint64_t)st.st_size;
    unsigned char *data = malloc(*size ? (size_t)*size : 1);
    if (!data)
        ggtk_error_set(err, GGTK_ERR_NOMEM, GGTK_NO_OFFSET, "%s: out of memory for %llu bytes",
                       path, (unsigned long long)*size);
    else if (fread(data, 1, (size_t)*size, f) != (size_t)*size) {
        ggtk_error_set(err, GGTK_ERR_IO, GGTK_NO_OFFSET, "%s: read failed", path);
        free(data);
        data = NULL;
    }
    fclose(f);
    return data;
}

inf_imatrix *imatrix_read_legacy(const char *path, ggtk_error *err)
{
    uint64_t size;
    unsigned char *data = slurp(path, &size, err);
    if (!data)
        return NULL;
    inf_imatrix *m = imatrix_alloc(INF_IMATRIX_LEGACY);
    cursor c = {path, data, size, 0, err};
    bool ok = m != NULL;
    if (!ok)
        ggtk_error_set(err, GGTK_ERR_NOMEM, GGTK_NO_OFFSET, "%s: out of memory", path);
    else
        ok = parse(&c, m);
    free(data);
    if (!ok) {
        inf_imatrix_free(m);
        return NULL;
    }
    m->has_metadata = true;
    return m;
}
