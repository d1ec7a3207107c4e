/* plan.c - the files gguf-split writes, as llama-gguf-split lays them out: version 3; the first
 * part has the model's metadata in its order, then split.no, split.tensors.count and split.count
 * (llama.cpp re-adds each split key at the end, so that is their order even when the input had
 * them); the other parts only the three split keys; tensors in the input's order, cut into parts
 * by count or by padded data size. A merge keeps the first part's metadata with split.count moved
 * to the end and set to 0, as llama-gguf-split does. */
#include "split_tool.h"

#include <stdlib.h>
#include <string.h>

static bool is_split_key(const char *key)
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
    return ggtk_error_set(err, GGTK_ERR_NOMEM, GGTK_NO_OFFSET, "out of memory planning the parts");
}

/* Append an empty file (a writer with `first`'s metadata when given) to the plan. */
static ggtk_status add_file(split_plan *plan, const ggtk_file *first, bool keep_key(const char *),
                            ggtk_error *err)
{
    if (plan->n_files == SPLIT_MAX_FILES)
        return ggtk_error_set(err, GGTK_ERR_USAGE, GGTK_NO_OFFSET,
                              "more than %d parts; give a larger --split-max-tensors or "
                              "--split-max-size", SPLIT_MAX_FILES);
    ggtk_writer **writers = realloc(plan->writers, (plan->n_files + 1) * sizeof *writers);
    if (!writers)
        return fail_nomem(err);
    plan->writers = writers;
    ggtk_writer *writer = ggtk_writer_new();
    if (!writer)
        return fail_nomem(err);
    plan->writers[plan->n_files++] = writer;
    ggtk_status status = GGTK_OK;
    for (int64_t i = 0; first && i < ggtk_kv_count(first) && status == GGTK_OK; i++)
        if (keep_key(ggtk_kv_key(first, i)))
            status = ggtk_writer_set(writer, ggtk_kv_key(first, i), ggtk_kv_value(first, i));
    if (status != GGTK_OK)
        return ggtk_error_set(err, status, GGTK_NO_OFFSET, "%s: cannot copy the metadata: %s",
                              ggtk_path(first), ggtk_strerror(status));
    return GGTK_OK;
}

static ggtk_status add_tensor(ggtk_writer *writer, const ggtk_tensor_info *info, ggtk_error *err)
{
    ggtk_status status =
        ggtk_writer_add_tensor(writer, info->name, info->type, written_dims(info), info->ne);
    if (status != GGTK_OK)
        return ggtk_error_set(err, status, GGTK_NO_OFFSET, "tensor '%s': %s", info->name,
                              ggtk_strerror(status));
    return GGTK_OK;
}

static bool not_split_key(const char *key) { return !is_split_key(key); }

/* Start a new part; the current one must hold a tensor unless `allow_empty`. */
static ggtk_status next_part(split_plan *plan, const split_args *args, bool allow_empty,
                             const ggtk_tensor_info *next, ggtk_error *err)
{
    if (!allow_empty && ggtk_writer_tensor_count(plan->writers[plan->n_files - 1]) == 0)
        return ggtk_error_set(err, GGTK_ERR_USAGE, GGTK_NO_OFFSET,
                              "part %d would hold no tensor: tensor '%s' has %llu bytes, more "
                              "than --split-max-size allows (%llu)", plan->n_files, next->name,
                              (unsigned long long)next->size,
                              (unsigned long long)args->max_bytes);
    return add_file(plan, NULL, not_split_key, err);
}

static uint64_t padded(uint64_t size, uint32_t alignment)
{
    return (size + alignment - 1) / alignment * alignment;
}

/* Whether tensor `index` (taking the part's data to `next_bytes`) starts a new part. */
static bool starts_part(const split_args *args, int64_t index, uint64_t next_bytes)
{
    if (args->max_bytes)
        return next_bytes > args->max_bytes;
    return index > 0 && index % args->max_tensors == 0;
}

/* The split keys, appended to every file once the number of parts is known. */
static ggtk_status add_split_keys(split_plan *plan, int64_t n_tensors, ggtk_error *err)
{
    ggtk_status status = GGTK_OK;
    for (int p = 0; p < plan->n_files && status == GGTK_OK; p++) {
        status = ggtk_writer_set_u16(plan->writers[p], GGTK_SPLIT_KEY_NO, (uint16_t)p);
        if (status == GGTK_OK)
            status = ggtk_writer_set_i32(plan->writers[p], GGTK_SPLIT_KEY_TENSORS_COUNT,
                                         (int32_t)n_tensors);
        if (status == GGTK_OK)
            status = ggtk_writer_set_u16(plan->writers[p], GGTK_SPLIT_KEY_COUNT,
                                         (uint16_t)plan->n_files);
    }
    if (status != GGTK_OK)
        return ggtk_error_set(err, status, GGTK_NO_OFFSET, "cannot set the split keys: %s",
                              ggtk_strerror(status));
    return GGTK_OK;
}

static ggtk_status name_files(split_plan *plan, const char *prefix, bool as_parts, ggtk_error *err)
{
    plan->paths = calloc((size_t)plan->n_files, sizeof *plan->paths);
    if (!plan->paths)
        return fail_nomem(err);
    for (int p = 0; p < plan->n_files; p++) {
        size_t length = as_parts ? ggtk_split_part_path(NULL, 0, prefix, p, plan->n_files)
                                 : strlen(prefix);
        plan->paths[p] = malloc(length + 1);
        if (!plan->paths[p])
            return fail_nomem(err);
        if (as_parts)
            ggtk_split_part_path(plan->paths[p], length + 1, prefix, p, plan->n_files);
        else
            memcpy(plan->paths[p], prefix, length + 1);
    }
    return GGTK_OK;
}

ggtk_status split_plan_parts(split_plan *plan, const ggtk_split *input, const split_args *args,
                             ggtk_error *err)
{
    memset(plan, 0, sizeof *plan);
    const ggtk_file *first = ggtk_split_part(input, 0);
    int64_t n_tensors = ggtk_split_tensor_count(input);
    if (n_tensors > INT32_MAX)
        return ggtk_error_set(err, GGTK_ERR_OVERFLOW, GGTK_NO_OFFSET,
                              "%s: %lld tensors do not fit split.tensors.count", ggtk_path(first),
                              (long long)n_tensors);
    ggtk_status status = add_file(plan, first, not_split_key, err);
    if (status == GGTK_OK && args->no_tensor_first_split)
        status = next_part(plan, args, true, NULL, err);
    uint64_t part_bytes = 0;
    for (int64_t i = 0; i < n_tensors && status == GGTK_OK; i++) {
        const ggtk_tensor_info *info = ggtk_split_tensor(input, i, NULL);
        uint64_t bytes = padded(info->size, ggtk_alignment(first));
        part_bytes += bytes;
        if (starts_part(args, i, part_bytes)) {
            status = next_part(plan, args, false, info, err);
            part_bytes = bytes;
        }
        if (status == GGTK_OK)
            status = add_tensor(plan->writers[plan->n_files - 1], info, err);
    }
    if (status == GGTK_OK)
        status = add_split_keys(plan, n_tensors, err);
    return status == GGTK_OK ? name_files(plan, args->output, true, err) : status;
}

static bool merged_key(const char *key) { return strcmp(key, GGTK_SPLIT_KEY_COUNT) != 0; }

ggtk_status split_plan_merge(split_plan *plan, const ggtk_split *input, const split_args *args,
                             ggtk_error *err)
{
    memset(plan, 0, sizeof *plan);
    const ggtk_file *first = ggtk_split_part(input, 0);
    if (ggtk_find_key(first, GGTK_SPLIT_KEY_COUNT) < 0 || ggtk_split_part_count(input) < 1)
        return ggtk_error_set(err, GGTK_ERR_INVALID, GGTK_NO_OFFSET,
                              "%s: not a split model (no split.count)", ggtk_path(first));
    uint64_t count = 0;
    if (ggtk_get_uint(first, GGTK_SPLIT_KEY_COUNT, &count) == GGTK_OK && count == 0)
        return ggtk_error_set(err, GGTK_ERR_INVALID, GGTK_NO_OFFSET,
                              "%s: split.count is 0: a merged file, not a part",
                              ggtk_path(first));
    ggtk_status status = add_file(plan, first, args->strip_split_keys ? not_split_key : merged_key,
                                  err);
    /* llama-gguf-split sets split.count to 0 in the merged file, which re-adds it at the end, so
     * that the file is not taken for a part. */
    if (status == GGTK_OK && !args->strip_split_keys)
        status = ggtk_writer_set_u16(plan->writers[0], GGTK_SPLIT_KEY_COUNT, 0);
    for (int64_t i = 0; i < ggtk_split_tensor_count(input) && status == GGTK_OK; i++)
        status = add_tensor(plan->writers[0], ggtk_split_tensor(input, i, NULL), err);
    return status == GGTK_OK ? name_files(plan, args->output, false, err) : status;
}

void split_plan_free(split_plan *plan)
{
    for (int p = 0; p < plan->n_files; p++) {
        ggtk_writer_free(plan->writers[p]);
        if (plan->paths)
            free(plan->paths[p]);
    }
    free(plan->writers);
    free(plan->paths);
    memset(plan, 0, sizeof *plan);
}
