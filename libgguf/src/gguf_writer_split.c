/* gguf_writer_split.c - the parts of a split model as llama-gguf-split lays them out, made from a
 * writer that describes the whole file: version 3; the first part has the metadata in its order,
 * then split.no, split.tensors.count and split.count (ggml re-adds each split key at the end, so
 * that is their order whatever the input held); the other parts the three split keys only;
 * tensors in the whole file's order, cut by count or by padded data size. */
#include "gguf_internal.h"
#include "gguf_writer_internal.h"

#include <stdlib.h>
#include <string.h>

/* The parts made so far. */
typedef struct part_list {
    ggtk_writer **writers;
    int n;
} part_list;

bool ggtk_split_is_key(const char *key)
{
    return strcmp(key, GGTK_SPLIT_KEY_NO) == 0 || strcmp(key, GGTK_SPLIT_KEY_COUNT) == 0 ||
           strcmp(key, GGTK_SPLIT_KEY_TENSORS_COUNT) == 0;
}

/* Dimensions as ggml counts them when it writes a tensor: trailing dimensions of 1 dropped. */
static uint32_t written_dims(const ggtk_tensor_info *info)
{
    uint32_t n = info->n_dims;
    while (n > 1 && info->ne[n - 1] == 1)
        n--;
    return n;
}

static ggtk_status fail_nomem(ggtk_error *err)
{
    return ggtk_fail(err, GGTK_ERR_NOMEM, NULL, UINT64_MAX, "out of memory planning the parts");
}

/* Append an empty part; the first one gets `whole`'s metadata. */
static ggtk_status add_part(part_list *parts, const ggtk_writer *whole, ggtk_error *err)
{
    if (parts->n == GGTK_SPLIT_MAX_PARTS)
        return ggtk_fail(err, GGTK_ERR_USAGE, NULL, UINT64_MAX,
                         "more than %d parts; allow more tensors or bytes per part",
                         GGTK_SPLIT_MAX_PARTS);
    ggtk_writer **grown = realloc(parts->writers, (size_t)(parts->n + 1) * sizeof *grown);
    if (!grown)
        return fail_nomem(err);
    parts->writers = grown;
    ggtk_writer *part = ggtk_writer_new();
    if (!part)
        return fail_nomem(err);
    parts->writers[parts->n++] = part;
    ggtk_status status = GGTK_OK;
    for (int64_t i = 0; parts->n == 1 && i < whole->n_kvs && status == GGTK_OK; i++)
        if (!ggtk_split_is_key(whole->kvs[i].key))
            status = ggtk_writer_set(part, whole->kvs[i].key, &whole->kvs[i].value);
    return status == GGTK_OK ? GGTK_OK : fail_nomem(err);
}

/* Start a new part; the current one must hold a tensor unless `allow_empty`. */
static ggtk_status next_part(part_list *parts, const ggtk_split_options *options,
                             bool allow_empty, const ggtk_tensor_info *next, ggtk_error *err)
{
    if (!allow_empty && parts->writers[parts->n - 1]->n_tensors == 0) {
        char shown[128];
        return ggtk_fail(err, GGTK_ERR_USAGE, NULL, UINT64_MAX,
                         "part %d would hold no tensor: tensor '%s' has %llu bytes, more than "
                         "the %llu bytes allowed per part", parts->n,
                         ggtk_escape_cut(shown, sizeof shown, next->name),
                         (unsigned long long)next->size, (unsigned long long)options->max_bytes);
    }
    return add_part(parts, NULL, err);
}

/* Whether tensor `index` (taking the part's data to `next_bytes`) starts a new part. */
static bool starts_part(const ggtk_split_options *options, int64_t index, uint64_t next_bytes)
{
    if (options->max_bytes)
        return next_bytes > options->max_bytes;
    return index > 0 && index % options->max_tensors == 0;
}

/* The split keys, appended to every part once the number of parts is known. */
static ggtk_status add_split_keys(part_list *parts, int64_t n_tensors)
{
    ggtk_status status = GGTK_OK;
    for (int p = 0; p < parts->n && status == GGTK_OK; p++) {
        status = ggtk_writer_set_u16(parts->writers[p], GGTK_SPLIT_KEY_NO, (uint16_t)p);
        if (status == GGTK_OK)
            status = ggtk_writer_set_i32(parts->writers[p], GGTK_SPLIT_KEY_TENSORS_COUNT,
                                         (int32_t)n_tensors);
        if (status == GGTK_OK)
            status = ggtk_writer_set_u16(parts->writers[p], GGTK_SPLIT_KEY_COUNT,
                                         (uint16_t)parts->n);
    }
    return status;
}

static ggtk_status cut(part_list *parts, const ggtk_writer *whole,
                       const ggtk_split_options *options, ggtk_error *err)
{
    ggtk_status status = add_part(parts, whole, err);
    if (status == GGTK_OK && options->no_tensor_first_part)
        status = next_part(parts, options, true, NULL, err);
    uint64_t part_bytes = 0;
    for (int64_t i = 0; i < whole->n_tensors && status == GGTK_OK; i++) {
        const ggtk_tensor_info *info = &whole->tensors[i];
        uint64_t bytes = info->size + writer_padding(info->size, whole->alignment);
        part_bytes += bytes;
        if (starts_part(options, i, part_bytes)) {
            status = next_part(parts, options, false, info, err);
            part_bytes = bytes;
        }
        if (status == GGTK_OK &&
            (status = ggtk_writer_add_tensor(parts->writers[parts->n - 1], info->name,
                                             info->type, written_dims(info), info->ne)) != GGTK_OK)
            ggtk_fail(err, status, NULL, UINT64_MAX, "cannot add tensor %lld to part %d: %s",
                      (long long)i, parts->n, ggtk_strerror(status));
    }
    if (status == GGTK_OK && add_split_keys(parts, whole->n_tensors) != GGTK_OK)
        status = fail_nomem(err);
    return status;
}

ggtk_status ggtk_writer_split(const ggtk_writer *whole, const ggtk_split_options *options,
                              ggtk_writer ***parts, int *n_parts, ggtk_error *err)
{
    if (!whole || !options || !parts || !n_parts || whole->stream.active ||
        (options->max_bytes == 0 && options->max_tensors < 1))
        return ggtk_fail(err, GGTK_ERR_USAGE, NULL, UINT64_MAX,
                         "ggtk_writer_split needs a writer not being written and max_tensors "
                         ">= 1 or max_bytes > 0");
    if (whole->n_tensors > INT32_MAX)
        return ggtk_fail(err, GGTK_ERR_OVERFLOW, NULL, UINT64_MAX,
                         "%lld tensors do not fit split.tensors.count",
                         (long long)whole->n_tensors);
    part_list list = {NULL, 0};
    ggtk_status status = cut(&list, whole, options, err);
    if (status != GGTK_OK) {
        ggtk_writer_split_free(list.writers, list.n);
        return status;
    }
    *parts = list.writers;
    *n_parts = list.n;
    return GGTK_OK;
}

void ggtk_writer_split_free(ggtk_writer **parts, int n_parts)
{
    for (int p = 0; parts && p < n_parts; p++)
        ggtk_writer_free(parts[p]);
    free(parts);
}

ggtk_writer *ggtk_writer_new_from_split(const ggtk_split *set, bool (*skip_key)(const char *key),
                                        ggtk_error *err)
{
    const ggtk_file *first = ggtk_split_part(set, 0);
    ggtk_writer *writer = ggtk_writer_new();
    if (!writer) {
        ggtk_fail(err, GGTK_ERR_NOMEM, NULL, UINT64_MAX, "out of memory");
        return NULL;
    }
    ggtk_status status = GGTK_OK;
    for (int64_t i = 0; i < ggtk_kv_count(first) && status == GGTK_OK; i++)
        if (!skip_key || !skip_key(ggtk_kv_key(first, i)))
            status = ggtk_writer_set(writer, ggtk_kv_key(first, i), ggtk_kv_value(first, i));
    for (int64_t i = 0; i < ggtk_split_tensor_count(set) && status == GGTK_OK; i++) {
        const ggtk_tensor_info *info = ggtk_split_tensor(set, i, NULL);
        status = ggtk_writer_add_tensor(writer, info->name, info->type, written_dims(info),
                                        info->ne);
    }
    if (status == GGTK_OK)
        return writer;
    ggtk_writer_free(writer);
    ggtk_fail(err, status, NULL, UINT64_MAX, "%s: cannot describe the whole model: %s",
              ggtk_path(first), ggtk_strerror(status));
    return NULL;
}
