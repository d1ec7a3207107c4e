/* gguf_split.c - a model opened from the parts of a split set (or from one plain file): every
 * part found by its name, opened on its own, and checked against the first (split keys, counts,
 * architecture), then one tensor table across the parts with a name index. */
#include "gguf_reader.h"

#include <stdlib.h>
#include <string.h>

/* One tensor of the set: its info in its part. */
typedef struct split_tensor {
    const ggtk_tensor_info *info;
    int part;
} split_tensor;

struct ggtk_split {
    ggtk_file **parts;
    int n_parts;
    split_tensor *tensors;
    int64_t n_tensors;
    ggtk_name_index *index; /* n_tensors entries sorted by name */
};

/* What one file says about the set it belongs to. */
typedef struct split_keys {
    bool has_no, has_count, has_tensors;
    uint16_t no, count;
    int32_t tensors;
} split_keys;

void ggtk_split_close(ggtk_split *split)
{
    if (!split)
        return;
    for (int i = 0; split->parts && i < split->n_parts; i++)
        ggtk_close(split->parts[i]);
    free(split->parts);
    free(split->tensors);
    free(split->index);
    free(split);
}

/* Where the value of `key` starts in `file` (after the key string and the type code). */
static uint64_t value_offset(const ggtk_file *file, int64_t index)
{
    return ggtk_kv_offset(file, index) + 8 + strlen(ggtk_kv_key(file, index)) + 4;
}

/* Read `key` when present; it must have type `type` (split keys are read with exact types, as
 * llama.cpp's loader does). The value is copied into *out (`size` bytes). */
static ggtk_status read_key(const ggtk_file *file, const char *key, ggtk_value_type type,
                            void *out, size_t size, bool *present, ggtk_error *err)
{
    int64_t index = ggtk_find_key(file, key);
    *present = index >= 0;
    if (index < 0)
        return GGTK_OK;
    const ggtk_value *value = ggtk_kv_value(file, index);
    if (value->type != type)
        return ggtk_fail(err, GGTK_ERR_TYPE, ggtk_path(file), value_offset(file, index) - 4,
                         "%s has type %s, expected %s", key, ggtk_value_type_name(value->type),
                         ggtk_value_type_name(type));
    memcpy(out, &value->v, size);
    return GGTK_OK;
}

static ggtk_status read_split_keys(const ggtk_file *file, split_keys *keys, ggtk_error *err)
{
    memset(keys, 0, sizeof *keys);
    ggtk_status status = read_key(file, GGTK_SPLIT_KEY_NO, GGTK_VALUE_UINT16, &keys->no,
                                  sizeof keys->no, &keys->has_no, err);
    if (status == GGTK_OK)
        status = read_key(file, GGTK_SPLIT_KEY_COUNT, GGTK_VALUE_UINT16, &keys->count,
                          sizeof keys->count, &keys->has_count, err);
    if (status == GGTK_OK)
        status = read_key(file, GGTK_SPLIT_KEY_TENSORS_COUNT, GGTK_VALUE_INT32, &keys->tensors,
                          sizeof keys->tensors, &keys->has_tensors, err);
    return status;
}

/* Byte of the value of `key` in `file` for an error, or no offset when the key is absent. */
static uint64_t key_offset(const ggtk_file *file, const char *key)
{
    int64_t index = ggtk_find_key(file, key);
    return index < 0 ? UINT64_MAX : value_offset(file, index);
}

static ggtk_status check_key_present(const ggtk_file *file, bool present, const char *key,
                                     const char *why, ggtk_error *err)
{
    if (present)
        return GGTK_OK;
    return ggtk_fail(err, GGTK_ERR_NOT_FOUND, ggtk_path(file), UINT64_MAX,
                     "missing %s, needed %s", key, why);
}

/* Check part `part` of `count` against what the first part says. */
static ggtk_status check_part(const ggtk_file *file, int part, int count, const ggtk_file *first,
                              const split_keys *first_keys, ggtk_error *err)
{
    const char *path = ggtk_path(file);
    split_keys keys;
    ggtk_status status = read_split_keys(file, &keys, err);
    if (status == GGTK_OK)
        status = check_key_present(file, keys.has_count, GGTK_SPLIT_KEY_COUNT,
                                   "in every part of a split model", err);
    if (status == GGTK_OK)
        status = check_key_present(file, keys.has_no, GGTK_SPLIT_KEY_NO,
                                   "in every part of a split model", err);
    if (status != GGTK_OK)
        return status;
    if (keys.count != count)
        return ggtk_fail(err, GGTK_ERR_INVALID, path, key_offset(file, GGTK_SPLIT_KEY_COUNT),
                         "split.count is %u, but %s says %d parts", keys.count, ggtk_path(first),
                         count);
    if (keys.no != part)
        return ggtk_fail(err, GGTK_ERR_INVALID, path, key_offset(file, GGTK_SPLIT_KEY_NO),
                         "split.no is %u, expected %d for part %d of %d (its file name)", keys.no,
                         part, part + 1, count);
    if (keys.has_tensors && keys.tensors != first_keys->tensors)
        return ggtk_fail(err, GGTK_ERR_INVALID, path,
                         key_offset(file, GGTK_SPLIT_KEY_TENSORS_COUNT),
                         "split.tensors.count is %d, but %s says %d (a part of another model?)",
                         keys.tensors, ggtk_path(first), first_keys->tensors);
    const char *arch = NULL, *first_arch = NULL;
    if (ggtk_get_string(file, "general.architecture", &arch) == GGTK_OK &&
        (ggtk_get_string(first, "general.architecture", &first_arch) != GGTK_OK ||
         strcmp(arch, first_arch) != 0)) {
        char shown[96], first_shown[96];
        return ggtk_fail(err, GGTK_ERR_INVALID, path, key_offset(file, "general.architecture"),
                         "general.architecture is '%s', but %s says '%s' (a part of another "
                         "model?)", ggtk_escape_cut(shown, sizeof shown, arch), ggtk_path(first),
                         first_arch ? ggtk_escape_cut(first_shown, sizeof first_shown, first_arch)
                                    : "(none)");
    }
    return GGTK_OK;
}

/* Open part `part` of the set named by `prefix`; `given` is the path the set was opened with. */
static ggtk_status open_part(ggtk_split *split, const char *prefix, int part, ggtk_open_mode mode,
                             const char *given, ggtk_error *err)
{
    size_t length = ggtk_split_part_path(NULL, 0, prefix, part, split->n_parts);
    char *path = malloc(length + 1);
    if (!path)
        return ggtk_fail(err, GGTK_ERR_NOMEM, prefix, UINT64_MAX, "out of memory");
    ggtk_split_part_path(path, length + 1, prefix, part, split->n_parts);
    ggtk_error local;
    split->parts[part] = ggtk_open(path, mode, &local);
    free(path);
    if (!split->parts[part])
        return ggtk_error_set(err, local.status, local.offset, "%s (part %d of %d of the model "
                              "%s belongs to)", local.message, part + 1, split->n_parts, given);
    return GGTK_OK;
}

static int compare_names(const void *a, const void *b)
{
    return strcmp(((const ggtk_name_index *)a)->name, ((const ggtk_name_index *)b)->name);
}

/* The tensor table across parts, its name index, and the count checks. */
static ggtk_status index_tensors(ggtk_split *split, const split_keys *first_keys, ggtk_error *err)
{
    int64_t total = 0;
    for (int p = 0; p < split->n_parts; p++)
        total += ggtk_tensor_count(split->parts[p]);
    split->tensors = calloc((size_t)total + 1, sizeof *split->tensors);
    split->index = calloc((size_t)total + 1, sizeof *split->index);
    if (!split->tensors || !split->index)
        return ggtk_fail(err, GGTK_ERR_NOMEM, ggtk_path(split->parts[0]), UINT64_MAX,
                         "out of memory");
    for (int p = 0; p < split->n_parts; p++)
        for (int64_t i = 0; i < ggtk_tensor_count(split->parts[p]); i++) {
            const ggtk_tensor_info *info = ggtk_tensor(split->parts[p], i);
            split->tensors[split->n_tensors] = (split_tensor){info, p};
            split->index[split->n_tensors] = (ggtk_name_index){info->name, split->n_tensors};
            split->n_tensors++;
        }
    qsort(split->index, (size_t)total, sizeof *split->index, compare_names);
    for (int64_t i = 1; i < total; i++) {
        if (strcmp(split->index[i - 1].name, split->index[i].name) != 0)
            continue;
        const split_tensor *a = &split->tensors[split->index[i - 1].index];
        const split_tensor *b = &split->tensors[split->index[i].index];
        if (a->part > b->part) {
            const split_tensor *t = a;
            a = b;
            b = t;
        }
        char shown[128];
        return ggtk_fail(err, GGTK_ERR_DUPLICATE, ggtk_path(split->parts[b->part]),
                         b->info->info_offset, "tensor '%s' is also in %s",
                         ggtk_escape_cut(shown, sizeof shown, b->info->name),
                         ggtk_path(split->parts[a->part]));
    }
    if (split->n_parts > 1 && total != first_keys->tensors)
        return ggtk_fail(err, GGTK_ERR_INVALID, ggtk_path(split->parts[0]),
                         key_offset(split->parts[0], GGTK_SPLIT_KEY_TENSORS_COUNT),
                         "split.tensors.count is %d, but the %d parts hold %lld tensors",
                         first_keys->tensors, split->n_parts, (long long)total);
    return GGTK_OK;
}

/* A file that is no part of a set (or the only one) is a set of one. */
static bool single_file(const split_keys *keys) { return !keys->has_count || keys->count <= 1; }

/* Find, open and check the other parts of the set `given` belongs to. */
static ggtk_status open_set(ggtk_split *split, ggtk_file *given, const split_keys *keys,
                            ggtk_open_mode mode, ggtk_error *err)
{
    const char *path = ggtk_path(given);
    if (!keys->has_no)
        return ggtk_fail(err, GGTK_ERR_NOT_FOUND, path, UINT64_MAX,
                         "split.count is %u but split.no is missing", keys->count);
    if (keys->no >= keys->count)
        return ggtk_fail(err, GGTK_ERR_INVALID, path, key_offset(given, GGTK_SPLIT_KEY_NO),
                         "split.no %u is out of range for split.count %u", keys->no, keys->count);
    size_t prefix_length = ggtk_split_prefix_length(path, keys->no, keys->count);
    if (prefix_length == 0)
        return ggtk_fail(err, GGTK_ERR_INVALID, path, UINT64_MAX,
                         "the name does not end in -%05d-of-%05d.gguf as split.no %u and "
                         "split.count %u say, so the other parts cannot be found",
                         keys->no + 1, keys->count, keys->no, keys->count);
    char *prefix = strndup(path, prefix_length);
    split->parts = calloc(keys->count, sizeof *split->parts);
    if (!prefix || !split->parts) {
        free(prefix);
        return ggtk_fail(err, GGTK_ERR_NOMEM, path, UINT64_MAX, "out of memory");
    }
    split->n_parts = keys->count;
    split->parts[keys->no] = given;
    ggtk_status status = GGTK_OK;
    split_keys first_keys = *keys;
    for (int p = 0; p < split->n_parts && status == GGTK_OK; p++) {
        if (p != keys->no)
            status = open_part(split, prefix, p, mode, path, err);
        if (status == GGTK_OK && p == 0) {
            status = read_split_keys(split->parts[0], &first_keys, err);
            if (status == GGTK_OK)
                status = check_key_present(split->parts[0], first_keys.has_tensors,
                                           GGTK_SPLIT_KEY_TENSORS_COUNT,
                                           "in the first part of a split model", err);
        }
        if (status == GGTK_OK)
            status = check_part(split->parts[p], p, split->n_parts, split->parts[0], &first_keys,
                                err);
    }
    free(prefix);
    return status == GGTK_OK ? index_tensors(split, &first_keys, err) : status;
}

ggtk_split *ggtk_split_open(const char *path, ggtk_open_mode mode, ggtk_error *err)
{
    ggtk_split *split = calloc(1, sizeof *split);
    if (!split)
        return ggtk_fail(err, GGTK_ERR_NOMEM, path, UINT64_MAX, "out of memory"), NULL;
    ggtk_file *given = ggtk_open(path, mode, err);
    split_keys keys;
    ggtk_status status = given ? read_split_keys(given, &keys, err) : GGTK_ERR_IO;
    if (status == GGTK_OK && single_file(&keys)) {
        split->parts = calloc(1, sizeof *split->parts);
        if (split->parts) {
            split->parts[0] = given;
            split->n_parts = 1;
            status = index_tensors(split, &keys, err);
        } else {
            status = ggtk_fail(err, GGTK_ERR_NOMEM, path, UINT64_MAX, "out of memory");
        }
    } else if (status == GGTK_OK) {
        status = open_set(split, given, &keys, mode, err);
    }
    if (status != GGTK_OK) {
        if (!split->parts || !split->n_parts)
            ggtk_close(given);
        ggtk_split_close(split);
        return NULL;
    }
    return split;
}

int ggtk_split_part_count(const ggtk_split *split) { return split ? split->n_parts : 0; }

const ggtk_file *ggtk_split_part(const ggtk_split *split, int part)
{
    if (!split || part < 0 || part >= split->n_parts)
        return NULL;
    return split->parts[part];
}

int64_t ggtk_split_tensor_count(const ggtk_split *split) { return split ? split->n_tensors : 0; }

const ggtk_tensor_info *ggtk_split_tensor(const ggtk_split *split, int64_t index, int *part)
{
    if (!split || index < 0 || index >= split->n_tensors)
        return NULL;
    if (part)
        *part = split->tensors[index].part;
    return split->tensors[index].info;
}

int64_t ggtk_split_find_tensor(const ggtk_split *split, const char *name)
{
    if (!split || !name)
        return -1;
    return ggtk_index_find(split->index, split->n_tensors, name);
}
