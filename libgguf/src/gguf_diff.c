/* gguf_diff.c - what differs between two GGUF files: metadata keys, tensor presence, types,
 * shapes and (by XXH64 content hashes) data. Items are matched by name, never by position. */
#include "gguf_internal.h"
#include <ggtk/gguf_util.h>

#include <stdlib.h>
#include <string.h>

static bool string_equal(const ggtk_string *a, const ggtk_string *b)
{
    return a->len == b->len && memcmp(a->data, b->data, (size_t)a->len) == 0;
}

static bool array_equal(const ggtk_array *a, const ggtk_array *b)
{
    if (a->elem_type != b->elem_type || a->count != b->count)
        return false;
    size_t size = ggtk_value_type_size(a->elem_type);
    /* The reader holds count * element size bytes in memory, so the product cannot overflow. */
    if (size != 0) /* an empty array has no data pointer to compare */
        return a->count == 0 || memcmp(a->data, b->data, (size_t)a->count * size) == 0;
    bool strings = a->elem_type == GGTK_VALUE_STRING;
    for (uint64_t i = 0; i < a->count; i++) {
        bool same = strings ? string_equal((const ggtk_string *)a->data + i,
                                           (const ggtk_string *)b->data + i)
                            : ggtk_value_equal((const ggtk_value *)a->data + i,
                                               (const ggtk_value *)b->data + i);
        if (!same)
            return false;
    }
    return true;
}

bool ggtk_value_equal(const ggtk_value *a, const ggtk_value *b)
{
    if (a->type != b->type)
        return false;
    if (a->type == GGTK_VALUE_STRING)
        return string_equal(&a->v.str, &b->v.str);
    if (a->type == GGTK_VALUE_ARRAY)
        return array_equal(&a->v.arr, &b->v.arr);
    /* Every scalar member starts at the union's first byte and spans its on-disk size. */
    return memcmp(&a->v, &b->v, ggtk_value_type_size(a->type)) == 0;
}

/* The diff under construction; `failed` records an allocation failure once. */
typedef struct diff_builder {
    ggtk_diff *diff;
    int64_t capacity;
    bool failed;
} diff_builder;

static ggtk_diff_entry *add_entry(diff_builder *b, ggtk_diff_kind kind, const char *name,
                                  int64_t index_a, int64_t index_b)
{
    if (b->failed)
        return NULL;
    if (b->diff->count == b->capacity) {
        int64_t capacity = b->capacity ? b->capacity * 2 : 16;
        ggtk_diff_entry *grown = realloc(b->diff->entries, (size_t)capacity * sizeof *grown);
        if (!grown) {
            b->failed = true;
            return NULL;
        }
        b->diff->entries = grown;
        b->capacity = capacity;
    }
    ggtk_diff_entry *e = &b->diff->entries[b->diff->count++];
    *e = (ggtk_diff_entry){kind, name, index_a, index_b, 0, 0};
    return e;
}

static void diff_keys(diff_builder *b, const ggtk_file *fa, const ggtk_file *fb)
{
    for (int64_t i = 0; i < ggtk_kv_count(fa); i++)
        if (ggtk_find_key(fb, ggtk_kv_key(fa, i)) < 0)
            add_entry(b, GGTK_DIFF_KEY_REMOVED, ggtk_kv_key(fa, i), i, -1);
    for (int64_t j = 0; j < ggtk_kv_count(fb); j++)
        if (ggtk_find_key(fa, ggtk_kv_key(fb, j)) < 0)
            add_entry(b, GGTK_DIFF_KEY_ADDED, ggtk_kv_key(fb, j), -1, j);
    for (int64_t i = 0; i < ggtk_kv_count(fa); i++) {
        int64_t j = ggtk_find_key(fb, ggtk_kv_key(fa, i));
        if (j >= 0 && !ggtk_value_equal(ggtk_kv_value(fa, i), ggtk_kv_value(fb, j)))
            add_entry(b, GGTK_DIFF_KEY_CHANGED, ggtk_kv_key(fa, i), i, j);
    }
}

static bool same_shape(const ggtk_tensor_info *a, const ggtk_tensor_info *b)
{
    if (a->n_dims != b->n_dims)
        return false;
    for (uint32_t d = 0; d < a->n_dims; d++)
        if (a->ne[d] != b->ne[d])
            return false;
    return true;
}

/* Presence, type and shape differences; the pairs left with equal type and shape are stored in
 * same_a/same_b (n_same of them) for the data comparison. */
static void diff_tensor_infos(diff_builder *b, const ggtk_file *fa, const ggtk_file *fb,
                              int64_t *same_a, int64_t *same_b, int64_t *n_same)
{
    for (int64_t i = 0; i < ggtk_tensor_count(fa); i++)
        if (ggtk_find_tensor(fb, ggtk_tensor(fa, i)->name) < 0)
            add_entry(b, GGTK_DIFF_TENSOR_REMOVED, ggtk_tensor(fa, i)->name, i, -1);
    for (int64_t j = 0; j < ggtk_tensor_count(fb); j++)
        if (ggtk_find_tensor(fa, ggtk_tensor(fb, j)->name) < 0)
            add_entry(b, GGTK_DIFF_TENSOR_ADDED, ggtk_tensor(fb, j)->name, -1, j);
    for (int64_t i = 0; i < ggtk_tensor_count(fa); i++) {
        int64_t j = ggtk_find_tensor(fb, ggtk_tensor(fa, i)->name);
        if (j >= 0 && ggtk_tensor(fa, i)->type != ggtk_tensor(fb, j)->type)
            add_entry(b, GGTK_DIFF_TENSOR_TYPE, ggtk_tensor(fa, i)->name, i, j);
    }
    *n_same = 0;
    for (int64_t i = 0; i < ggtk_tensor_count(fa); i++) {
        int64_t j = ggtk_find_tensor(fb, ggtk_tensor(fa, i)->name);
        if (j < 0)
            continue;
        if (!same_shape(ggtk_tensor(fa, i), ggtk_tensor(fb, j)))
            add_entry(b, GGTK_DIFF_TENSOR_SHAPE, ggtk_tensor(fa, i)->name, i, j);
        else if (ggtk_tensor(fa, i)->type == ggtk_tensor(fb, j)->type) {
            same_a[*n_same] = i;
            same_b[*n_same] = j;
            (*n_same)++;
        }
    }
}

static ggtk_status diff_tensor_data(diff_builder *b, const ggtk_file *fa, const ggtk_file *fb,
                                    const int64_t *same_a, const int64_t *same_b, int64_t n_same,
                                    ggtk_error *err)
{
    uint64_t *hashes = malloc((size_t)(n_same ? n_same : 1) * 2 * sizeof *hashes);
    if (!hashes)
        return ggtk_fail(err, GGTK_ERR_NOMEM, ggtk_path(fa), UINT64_MAX,
                         "out of memory comparing %lld tensors", (long long)n_same);
    uint64_t *hash_a = hashes, *hash_b = hashes + n_same;
    ggtk_status status = ggtk_hash_tensors(fa, same_a, n_same, hash_a, err);
    if (status == GGTK_OK)
        status = ggtk_hash_tensors(fb, same_b, n_same, hash_b, err);
    for (int64_t k = 0; status == GGTK_OK && k < n_same; k++) {
        if (hash_a[k] == hash_b[k])
            continue;
        ggtk_diff_entry *e = add_entry(b, GGTK_DIFF_TENSOR_DATA, ggtk_tensor(fa, same_a[k])->name,
                                       same_a[k], same_b[k]);
        if (e) {
            e->hash_a = hash_a[k];
            e->hash_b = hash_b[k];
        }
    }
    b->diff->tensors_compared = status == GGTK_OK ? n_same : 0;
    free(hashes);
    return status;
}

ggtk_status ggtk_diff_files(const ggtk_file *a, const ggtk_file *b, bool compare_data,
                            ggtk_diff *out, ggtk_error *err)
{
    memset(out, 0, sizeof *out);
    diff_builder builder = {out, 0, false};
    int64_t n = ggtk_tensor_count(a);
    int64_t *pairs = malloc((size_t)(n ? n : 1) * 2 * sizeof *pairs);
    if (!pairs)
        return ggtk_fail(err, GGTK_ERR_NOMEM, ggtk_path(a), UINT64_MAX,
                         "out of memory comparing %lld tensors", (long long)n);
    if (ggtk_version(a) != ggtk_version(b))
        add_entry(&builder, GGTK_DIFF_VERSION, NULL, -1, -1);
    diff_keys(&builder, a, b);
    int64_t n_same = 0;
    diff_tensor_infos(&builder, a, b, pairs, pairs + n, &n_same);
    ggtk_status status = GGTK_OK;
    if (compare_data)
        status = diff_tensor_data(&builder, a, b, pairs, pairs + n, n_same, err);
    free(pairs);
    if (status == GGTK_OK && builder.failed)
        status = ggtk_fail(err, GGTK_ERR_NOMEM, ggtk_path(a), UINT64_MAX,
                           "out of memory listing differences");
    if (status != GGTK_OK)
        ggtk_diff_free(out);
    return status;
}

void ggtk_diff_free(ggtk_diff *diff)
{
    if (!diff)
        return;
    free(diff->entries);
    memset(diff, 0, sizeof *diff);
}
