/* gguf_hash.c - XXH64 content hashes of tensor data, computed in parallel, the whole-model hash
 * derived from them, and hashes of metadata pairs in their on-disk form. */
#include "gguf_internal.h"
#include <ggtk/gguf_util.h>

#include <stdlib.h>
#include <string.h>
/* The state is kept on the stack, which needs the structure definition. */
#define XXH_STATIC_LINKING_ONLY
#include <xxhash.h>

/* Bytes hashed between releases of the pages read: a thread's resident share of a mapped model
 * (one tensor can be larger than memory). */
enum { HASH_WINDOW_BYTES = 16 << 20 };

/* XXH64 (seed 0) of tensor `t`'s data, read in windows whose pages are handed back once hashed,
 * so that the resident memory stays bounded whatever the model's size. */
static uint64_t hash_data(const ggtk_file *file, const ggtk_tensor_info *t)
{
    const unsigned char *data = t->data;
    XXH64_state_t state;
    XXH64_reset(&state, 0);
    for (uint64_t done = 0; done < t->size; done += HASH_WINDOW_BYTES) {
        uint64_t left = t->size - done;
        size_t window = left < HASH_WINDOW_BYTES ? (size_t)left : HASH_WINDOW_BYTES;
        XXH64_update(&state, data + done, window);
        ggtk_release_data(file, data + done, window);
    }
    return XXH64_digest(&state);
}

static ggtk_status check_tensor_data(const ggtk_file *file, int64_t index, ggtk_error *err)
{
    if (index < 0 || index >= ggtk_tensor_count(file))
        return ggtk_fail(err, GGTK_ERR_USAGE, ggtk_path(file), UINT64_MAX,
                         "tensor index %lld out of range (%lld tensors)", (long long)index,
                         (long long)ggtk_tensor_count(file));
    if (ggtk_tensor(file, index)->data == NULL)
        return ggtk_fail(err, GGTK_ERR_USAGE, ggtk_path(file), UINT64_MAX,
                         "tensor data is not in memory (file opened with GGUF_OPEN_METADATA)");
    return GGTK_OK;
}

ggtk_status ggtk_hash_tensor(const ggtk_file *file, int64_t index, uint64_t *hash, ggtk_error *err)
{
    ggtk_status status = check_tensor_data(file, index, err);
    if (status != GGTK_OK)
        return status;
    *hash = hash_data(file, ggtk_tensor(file, index));
    return GGTK_OK;
}

/* A unit of work: position in the caller's arrays and the bytes to hash. */
typedef struct hash_job {
    int64_t position;
    uint64_t size;
} hash_job;

static int larger_first(const void *a, const void *b)
{
    uint64_t sa = ((const hash_job *)a)->size, sb = ((const hash_job *)b)->size;
    return sa < sb ? 1 : sa > sb ? -1 : 0;
}

ggtk_status ggtk_hash_tensors(const ggtk_file *file, const int64_t *indices, int64_t n,
                              uint64_t *hashes, ggtk_error *err)
{
    if (!indices)
        n = ggtk_tensor_count(file);
    if (n <= 0)
        return GGTK_OK;
    hash_job *jobs = malloc((size_t)n * sizeof *jobs);
    if (!jobs)
        return ggtk_fail(err, GGTK_ERR_NOMEM, ggtk_path(file), UINT64_MAX,
                         "out of memory planning %lld tensor hashes", (long long)n);
    for (int64_t i = 0; i < n; i++) {
        int64_t index = indices ? indices[i] : i;
        ggtk_status status = check_tensor_data(file, index, err);
        if (status != GGTK_OK) {
            free(jobs);
            return status;
        }
        jobs[i].position = i;
        jobs[i].size = ggtk_tensor(file, index)->size;
    }
    /* Largest tensors first: an embedding table can be a third of a model, and starting it last
     * would leave one thread hashing it while the others idle. */
    qsort(jobs, (size_t)n, sizeof *jobs, larger_first);
#pragma omp parallel for schedule(dynamic, 1)
    for (int64_t j = 0; j < n; j++) {
        int64_t position = jobs[j].position;
        int64_t index = indices ? indices[position] : position;
        hashes[position] = hash_data(file, ggtk_tensor(file, index));
    }
    free(jobs);
    return GGTK_OK;
}

uint64_t ggtk_hash_combine(const uint64_t *hashes, int64_t n)
{
    XXH64_state_t state;
    XXH64_reset(&state, 0);
    for (int64_t i = 0; i < n; i++) {
        XXH64_canonical_t canonical;
        XXH64_canonicalFromHash(&canonical, hashes[i]);
        XXH64_update(&state, canonical.digest, sizeof canonical.digest);
    }
    return XXH64_digest(&state);
}

/* The pieces of a pair's on-disk form (the host is little-endian, like the file). */
static void hash_u32(XXH64_state_t *state, uint32_t value) { XXH64_update(state, &value, 4); }
static void hash_u64(XXH64_state_t *state, uint64_t value) { XXH64_update(state, &value, 8); }

static void hash_string(XXH64_state_t *state, const char *data, uint64_t len)
{
    hash_u64(state, len);
    XXH64_update(state, data, (size_t)len);
}

/* An array's element type, count and elements; fixed-size elements are packed as on disk. */
static void hash_array(XXH64_state_t *state, const ggtk_array *arr)
{
    hash_u32(state, (uint32_t)arr->elem_type);
    hash_u64(state, arr->count);
    if (arr->elem_type == GGTK_VALUE_STRING) {
        const ggtk_string *strings = arr->data;
        for (uint64_t i = 0; i < arr->count; i++)
            hash_string(state, strings[i].data, strings[i].len);
    } else if (arr->elem_type == GGTK_VALUE_ARRAY) {
        const ggtk_value *arrays = arr->data;
        for (uint64_t i = 0; i < arr->count; i++)
            hash_array(state, &arrays[i].v.arr);
    } else if (arr->count > 0) {
        XXH64_update(state, arr->data, (size_t)arr->count * ggtk_value_type_size(arr->elem_type));
    }
}

ggtk_status ggtk_hash_kv(const ggtk_file *file, int64_t index, uint64_t *hash, ggtk_error *err)
{
    if (index < 0 || index >= ggtk_kv_count(file))
        return ggtk_fail(err, GGTK_ERR_USAGE, ggtk_path(file), UINT64_MAX,
                         "key index %lld out of range (%lld keys)", (long long)index,
                         (long long)ggtk_kv_count(file));
    const char *key = ggtk_kv_key(file, index);
    const ggtk_value *value = ggtk_kv_value(file, index);
    XXH64_state_t state;
    XXH64_reset(&state, 0);
    hash_string(&state, key, strlen(key));
    hash_u32(&state, (uint32_t)value->type);
    if (value->type == GGTK_VALUE_STRING)
        hash_string(&state, value->v.str.data, value->v.str.len);
    else if (value->type == GGTK_VALUE_ARRAY)
        hash_array(&state, &value->v.arr);
    else
        XXH64_update(&state, &value->v, ggtk_value_type_size(value->type));
    *hash = XXH64_digest(&state);
    return GGTK_OK;
}
