/* collect.c - collecting an importance matrix while a model runs: a node observer picks the
 * matrix products llama-imatrix picks and adds the squares of their activations, token after
 * token in float, so that the same activations give the same sums as llama-imatrix's. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <ggtk/inf_backend.h>

#include "imatrix_internal.h"

/* llama-imatrix ignores products with fewer activation rows (small batches). */
enum { MIN_ROWS = 16 };

inf_imatrix *inf_imatrix_new(int32_t chunk_size, const char *dataset, ggtk_error *err)
{
    if (chunk_size < 1) {
        ggtk_error_set(err, GGTK_ERR_USAGE, GGTK_NO_OFFSET,
                       "an imatrix needs a chunk size of at least 1 token, got %d", chunk_size);
        return NULL;
    }
    inf_imatrix *m = imatrix_alloc(INF_IMATRIX_GGUF);
    if (!m || (dataset && !imatrix_add_dataset(m, dataset, strlen(dataset)))) {
        inf_imatrix_free(m);
        ggtk_error_set(err, GGTK_ERR_NOMEM, GGTK_NO_OFFSET, "out of memory");
        return NULL;
    }
    m->chunk_size = chunk_size;
    m->has_metadata = true;
    return m;
}

static void add_squares(float *restrict sums, const float *restrict x, int64_t n)
{
#pragma omp simd
    for (int64_t j = 0; j < n; j++)
        sums[j] += x[j] * x[j];
}

/* *out = the entry `name` with n_mat x n_per_row values, created when new. */
static ggtk_status entry_for(inf_imatrix *m, const char *name, int64_t n_mat, int64_t n_per_row,
                             imatrix_slot **out, ggtk_error *err)
{
    imatrix_slot *s = imatrix_lookup(m, name);
    if (s && (s->pub.n_mat != n_mat || s->pub.n_per_row != n_per_row))
        return ggtk_error_set(err, GGTK_ERR_INVALID, GGTK_NO_OFFSET,
                              "imatrix entry %s has %lld x %lld values, the activations need "
                              "%lld x %lld", name, (long long)s->pub.n_mat,
                              (long long)s->pub.n_per_row, (long long)n_mat, (long long)n_per_row);
    ggtk_status st = GGTK_OK;
    if (!s)
        s = imatrix_insert(m, name, strlen(name), n_mat, n_per_row, &st);
    if (!s)
        return ggtk_error_set(err, st, GGTK_NO_OFFSET, "out of memory for imatrix entry %s", name);
    *out = s;
    return GGTK_OK;
}

/* After adding, every sum must still be finite (llama-imatrix stops the same way). */
static ggtk_status check_sums(const imatrix_slot *s, int64_t first, int64_t n, ggtk_error *err)
{
    for (int64_t j = first; j < first + n; j++)
        if (!isfinite(s->values[j]))
            return ggtk_error_set(err, GGTK_ERR_NONFINITE, GGTK_NO_OFFSET,
                                  "imatrix entry %s: the sum of squares of value %lld became %s "
                                  "(the activations hold a NaN or overflow)", s->name,
                                  (long long)j, isnan(s->values[j]) ? "nan" : "inf");
    return GGTK_OK;
}

static void count_tokens(inf_imatrix *m, imatrix_slot *s, int64_t mat, int64_t n)
{
    s->counts[mat] += n;
    int64_t chunks = s->counts[mat] / m->chunk_size;
    if (chunks > m->chunk_count)
        m->chunk_count = chunks > INT32_MAX ? INT32_MAX : (int32_t)chunks;
}

ggtk_status inf_imatrix_accumulate(inf_imatrix *m, const char *name, int64_t n_mat, int64_t mat,
                                   const float *x, int64_t n_per_row, int64_t n_rows,
                                   int64_t row_stride, ggtk_error *err)
{
    if (m->format != INF_IMATRIX_GGUF)
        return ggtk_error_set(err, GGTK_ERR_USAGE, GGTK_NO_OFFSET,
                              "cannot add activations to an imatrix read from a legacy file");
    if (!name || !*name || n_mat < 1 || mat < 0 || mat >= n_mat || n_per_row < 1 || n_rows < 0 ||
        row_stride < n_per_row || (n_rows > 0 && !x) || n_per_row > INT64_MAX / n_mat)
        return ggtk_error_set(err, GGTK_ERR_USAGE, GGTK_NO_OFFSET,
                              "bad arguments to inf_imatrix_accumulate");
    imatrix_slot *s;
    ggtk_status st = entry_for(m, name, n_mat, n_per_row, &s, err);
    if (st != GGTK_OK)
        return st;
    float *sums = s->values + mat * n_per_row;
    for (int64_t r = 0; r < n_rows; r++)
        add_squares(sums, x + r * row_stride, n_per_row);
    count_tokens(m, s, mat, n_rows);
    return check_sums(s, mat * n_per_row, n_per_row, err);
}

/* A product llama-imatrix collects: a model weight ("blk.*", a leaf) times at least MIN_ROWS rows
 * of F32 activations. */
static bool is_collected(const inf_tensor *node)
{
    if (node->op != INF_OP_MUL_MAT)
        return false;
    const inf_tensor *w = node->src[0], *a = node->src[1];
    return w && a && w->op == INF_OP_NONE && strncmp(w->name, "blk.", 4) == 0 &&
           a->type == GGTK_TENSOR_F32 && a->ne[1] >= MIN_ROWS;
}

/* Whether the CPU can read `t` where it lies. */
static bool in_host_memory(const inf_tensor *t)
{
    const inf_tensor *owner = t->view_src ? t->view_src : t;
    const inf_buffer *buffer = t->buffer ? t->buffer : owner->buffer;
    return t->data && (!buffer || buffer->host);
}

/* Every activation row of `node` into its weight's entry. A weight of several matrices used by
 * a plain product (not one per expert) has one count for all of them, as in llama-imatrix: its
 * entry is one row of ne2 * ne3 matrices' values, and row i2, i3 of the activations goes to
 * matrix (i3 % ne3) * ne2 + (i2 % ne2). */
static ggtk_status collect_node(inf_imatrix *m, const inf_tensor *node, ggtk_error *err)
{
    const inf_tensor *w = node->src[0], *a = node->src[1];
    if (a->nb[0] != sizeof(float) || !in_host_memory(a))
        return ggtk_error_set(err, GGTK_ERR_UNSUPPORTED, GGTK_NO_OFFSET,
                              "imatrix: the activations of %s are not contiguous rows in host "
                              "memory", w->name);
    const int64_t n_per_row = a->ne[0], n_matrices = w->ne[2] * w->ne[3];
    imatrix_slot *s;
    ggtk_status st = entry_for(m, w->name, 1, n_per_row * n_matrices, &s, err);
    if (st != GGTK_OK)
        return st;
    for (int64_t i3 = 0; i3 < a->ne[3]; i3++) {
        for (int64_t i2 = 0; i2 < a->ne[2]; i2++) {
            const int64_t mat = (i3 % w->ne[3]) * w->ne[2] + (i2 % w->ne[2]);
            const char *base = (const char *)a->data + i2 * a->nb[2] + i3 * a->nb[3];
            for (int64_t r = 0; r < a->ne[1]; r++)
                add_squares(s->values + mat * n_per_row, (const float *)(base + r * a->nb[1]),
                            n_per_row);
        }
    }
    count_tokens(m, s, 0, inf_tensor_nrows(a) / n_matrices);
    return check_sums(s, 0, n_per_row * n_matrices, err);
}

bool inf_imatrix_wants(const inf_tensor *node, void *imatrix)
{
    (void)imatrix;
    return is_collected(node);
}

bool inf_imatrix_observe(const inf_graph *graph, int node_index, void *user)
{
    inf_imatrix *m = user;
    if (m->failed)
        return false;
    const inf_tensor *node = inf_graph_node(graph, node_index);
    if (!node || !is_collected(node))
        return true;
    if (m->format != INF_IMATRIX_GGUF) {
        ggtk_error_set(&m->failure, GGTK_ERR_USAGE, GGTK_NO_OFFSET,
                       "cannot collect into an imatrix read from a legacy file");
        m->failed = true;
    } else if (collect_node(m, node, &m->failure) != GGTK_OK) {
        m->failed = true;
    }
    return !m->failed;
}

ggtk_status inf_imatrix_status(const inf_imatrix *m, ggtk_error *err)
{
    if (!m->failed)
        return GGTK_OK;
    if (err)
        *err = m->failure;
    return m->failure.status;
}
