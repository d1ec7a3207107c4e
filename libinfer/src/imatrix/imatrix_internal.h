/* imatrix_internal.h - the importance matrix object shared by the reader, writer and collector
 * of libinfer/src/imatrix/; not public. */
#ifndef INF_IMATRIX_INTERNAL_H
#define INF_IMATRIX_INTERNAL_H

#include <ggtk/inf_imatrix.h>

/* An entry and the memory it owns; `pub` points into it. */
typedef struct imatrix_slot {
    inf_imatrix_entry pub;
    char *name;
    float *values;
    int64_t *counts;
} imatrix_slot;

struct inf_imatrix {
    inf_imatrix_format format;
    imatrix_slot **slots; /* sorted by strcmp of the names */
    int64_t n_slots;
    int64_t capacity;
    char **datasets;
    int64_t n_datasets;
    int32_t chunk_count;
    int32_t chunk_size;
    bool has_metadata;
    char *path;           /* the file read, NULL for a collected one */
    bool failed;          /* the collector met an error, kept in `failure` */
    ggtk_error failure;
};

/* An empty object in `format`. NULL when out of memory. */
inf_imatrix *imatrix_alloc(inf_imatrix_format format);

/* Insert a zeroed entry `name` (name_len bytes, no NUL inside) of n_mat x n_per_row values;
 * returns it, or NULL (GGTK_ERR_DUPLICATE when the name exists, GGTK_ERR_NOMEM) with *status
 * set. Sizes must have been checked by the caller. */
imatrix_slot *imatrix_insert(inf_imatrix *m, const char *name, size_t name_len, int64_t n_mat,
                             int64_t n_per_row, ggtk_status *status);

/* The slot named `name`, or NULL. */
imatrix_slot *imatrix_lookup(const inf_imatrix *m, const char *name);

/* Append a copy of `len` bytes as a dataset name. false when out of memory. */
bool imatrix_add_dataset(inf_imatrix *m, const char *name, size_t len);

/* The GGUF and legacy readers; `path` names the file in messages. */
inf_imatrix *imatrix_read_gguf(const char *path, ggtk_error *err);
inf_imatrix *imatrix_read_legacy(const char *path, ggtk_error *err);

/* The writers (formats checked by the caller). */
ggtk_status imatrix_write_gguf(const inf_imatrix *m, const char *path, ggtk_error *err);
ggtk_status imatrix_write_legacy(const inf_imatrix *m, const char *path, ggtk_error *err);

/* `text` (len bytes from a file) escaped for a message into buf. */
const char *imatrix_escape(const char *text, size_t len, char *buf, size_t size);

#endif
