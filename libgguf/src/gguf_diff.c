/* gguf_diff.c - what differs between two GGUF files: metadata keys, tensor presence, types,
 * shapes and (by XXH64 content hashes) data. Items are matched by name, never by position. */
#include "gguf_internal.h"
#include "gguf_util.h"

#include <stdlib.h>
#include <string.h>

static bool string_equal(const gguf_string *a, const gguf_string *b)
{
    return a->len == b->len && memcmp(a->data, b->data, (size_t)a->len) == 0;
}

static bool array_equal(const gguf_array *a, const gguf_array *b)
{
    if (a->elem_type != b->elem_type || a->count != b->count)
        return false;
    size_t size = gguf_value_type_size(a->elem_type);
    /* The reader holds count * element size bytes in memory, so the product cannot overflow. */
    if (size != 0) /* an empty array has no data pointer to compare */
        return a->count == 0 || memcmp(a->data, b->data, (size_t)a->count * size) == 0;
    bool strings = a->elem_type == GGUF_VALUE_STRING;
    for (uint64_t i = 0; i < a->count; i++) {
        bool same = strings ? string_equal((const gguf_string *)a->data + i,
                                           (const gguf_string *)b->data + i)
                            : gguf_value_equal((const gguf_value *)a->data + i,
                                               (const gguf_value *)b->data + i);
        if (!same)
            return false;
    }
    return true;
}

bool gguf_value_equal(const gguf_value *a, const gguf_value *b)
{
    if (a->type != b->type)
        return false;
    if (a->type == GGUF_VALUE_STRING)
        return string_equal(&a->v.str, &b->v.str);
    if (a->type == GGUF_VALUE_ARRAY)
        return array_equal(&a->v.arr, &b->v.arr);
    /* Every scalar member starts at the union's first byte and spans its on-disk size. */
    return memcmp(&a->v, &b->v, gguf_value_type_size(a->type)) == 0;
}

/* The diff under construction; `failed` records an allocation failure once. */
typedef struct diff_builder {
    gguf_diff *diff;
    int64_t capacity;
    bool failed;
} diff_builder;

static gguf_diff_entry *add_entry(diff_builder *b, gguf_diff_kind kind, const char *name,
                                  int64_t index_a, int64_t index_b)
{
    if (b->failed)
        return NULL;
    if (b->diff->count == b->capacity) {
        int64_t capacity = b->capacity ? b->capacity * 2 : 16;
        gguf_diff_entry *grown = realloc(b->diff->entries, (size_t)capacity * sizeof *grown);
        if (!grown) {
            b->failed = true;
            return NULL;
        }
        b->diff->entries = grown;
        b->capacity = capacity;
    }
    gguf_diff_entry *e = &b->diff->entries[b->diff->count++];
    *e = (gguf_diff_entry){kind, name, index_a, index_b, 0, 0};
    return e;
}

static void diff_keys(diff_builder *b, const gguf_file *fa, const gguf_file *fb)
{
    for (int64_t i = 0; i < gguf_kv_count(fa); i++)
        if (gguf_find_key(fb, gguf_kv_key(fa, i)) < 0)
            add_entry(b, GGUF_DIFF_KEY_REMOVED, gguf_kv_key(fa, i), i, -1);
    for (int64_t j = 0; j < gguf_kv_count(fb); j++)
        if (gguf_find_key(fa, gguf_kv_key(fb, j)) < 0)
            add_entry(b, GGUF_DIFF_KEY_ADDED, gguf_kv_key(fb, j), -1, j);
    for (int64_t i = 0; i < gguf_kv_count(fa); i++) {
        int64_t j = gguf_find_key(fb, gguf_kv_key(fa, i));
        if (j >= 0 && !gguf_value_equal(gguf_kv_value(fa, i), gguf_kv_value(fb, j)))
            add_entry(b, GGUF_DIFF_KEY_CHANGED, gguf_kv_key(fa, i), i, j);
    }
}

static bool same_shape(const gguf_tensor_info *a, const gguf_tensor_info *b)
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
static void diff_tensor_infos(diff_builder *b, const gguf_file *fa, const gguf_file *fb,
                              int64_t *same_a, int64_t *same_b, int64_t *n_same)
{
    for (int64_t i = 0; i < gguf_tensor_count(fa); i++)
        if (gguf_find_tensor(fb, gguf_tensor(fa, i)->name) < 0)
            add_entry(b, GGUF_DIFF_TENSOR_REMOVED, gguf_tensor(fa, i)->name, i, -1);
    for (int64_t j = 0; j < gguf_tensor_count(fb); j++)
        if (gguf_find_tensor(fa, gguf_tensor(fb, j)->name) < 0)
            add_entry(b, GGUF_DIFF_TENSOR_ADDED, gguf_tensor(fb, j)->name, -1, j);
    for (int64_t i = 0; i < gguf_tensor_count(fa); i++) {
        int64_t j = gguf_find_tensor(fb, gguf_tensor(fa, i)->name);
        if (j >= 0 && gguf_tensor(fa, i)->type != gguf_tensor(fb, j)->type)
            add_entry(b, GGUF_DIFF_TENSOR_TYPE, gguf_tensor(fa, i)->name, i, j);
    }
    *n_same = 0;
    for (int64_t i = 0; i < gguf_tensor_count(fa); i++) {
        int64_t j = gguf_find_tensor(fb, gguf_tensor(fa, i)->name);
        if (j < 0)
            continue;
        if (!same_shape(gguf_tensor(fa, i), gguf_tensor(fb, j)))
            add_entry(b, GGUF_DIFF_TENSOR_SHAPE, gguf_tensor(fa, i)->name, i, j);
        else if (gguf_tensor(fa, i)->type == gguf_tensor(fb, j)->type) {
            same_a[*n_same] = i;
            same_b[*n_same] = j;
            (*n_same)++;
        }
    }
}

static gguf_status diff_tensor_data(diff_builder *b, const gguf_file *fa, const gguf_file *fb,
                                    const int64_t *same_a, const int64_t *same_b, int64_t n_same,
                                    gguf_error *err)
{
    uint64_t *hashes = malloc((size_t)(n_same ? n_same : 1) * 2 * sizeof *hashes);
    if (!hashes)
        return gguf_fail(err, GGUF_ERR_NOMEM, gguf_path(fa), UINT64_MAX,
                         "out of memory comparing %lld tensors", (long long)n_same);
    uint64_t *hash_a = hashes, *hash_b = hashes + n_same;
    gguf_status status = gguf_hash_tensors(fa, same_a, n_same, hash_a, err);
    if (status == GGUF_OK)
        status = gguf_hash_tensors(fb, same_b, n_same, hash_b, err);
    for (int64_t k = 0; status == GGUF_OK && k < n_same; k++) {
        if (hash_a[k] == hash_b[k])
            continue;
        gguf_diff_entry *e = add_entry(b, GGUF_DIFF_TENSOR_DATA, gguf_tensor(fa, same_a[k])->name,
                                       same_a[k], same_b[k]);
        if (e) {
            e->hash_a = hash_a[k];
            e->hash_b = hash_b[k];
        }
    }
    b->diff->tensors_compared = status == GGUF_OK ? n_same : 0;
    free(hashes);
    return status;
}

gguf_status gguf_diff_files(const gguf_file *a, const gguf_file *b, bool compare_data,
                            gguf_diff *out, gguf_error *err)
{
    memset(out, 0, sizeof *out);
    diff_builder builder = {out, 0, false};
    int64_t n = gguf_tensor_count(a);
    int64_t *pairs = malloc((size_t)(n ? n : 1) * 2 * sizeof *pairs);
    if (!pairs)
        return gguf_fail(err, GGUF_ERR_NOMEM, gguf_path(a), UINT64_MAX,
                         "out of memory comparing %lld tensors", (long long)n);
    if (gguf_version(a) != gguf_version(b))
        add_entry(&builder, GGUF_DIFF_VERSION, NULL, -1, -1);
    diff_keys(&builder, a, b);
    int64_t n_same = 0;
    diff_tensor_infos(&builder, a, b, pairs, pairs + n, &n_same);
    gguf_status status = GGUF_OK;
    if (compare_data)
        status = diff_tensor_data(&builder, a, b, pairs, pairs + n, n_same, err);
    free(pairs);
    if (status == GGUF_OK && builder.failed)
        status = gguf_fail(err, GGUF_ERR_NOMEM, gguf_path(a), UINT64_MAX,
                           "out of memory listing differences");
    if (status != GGUF_OK)
        gguf_diff_free(out);
    return status;
}

void gguf_diff_free(gguf_diff *diff)
{
    if (!diff)
        return;
    free(diff->entries);
    memset(diff, 0, sizeof *diff);
}
