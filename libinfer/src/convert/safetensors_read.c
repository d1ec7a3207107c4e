/* safetensors_read.c - opens a safetensors file or a sharded model and validates every header
 * field against its file before anything is trusted (see inf_convert.h for the rules). */
#include "safetensors_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#define INDEX_NAME "model.safetensors.index.json"
#define SINGLE_NAME "model.safetensors"

typedef struct shard {
    char *path;
    uint8_t *map;
    size_t size;
    uint64_t data_start; /* 8 + header length */
} shard;

struct inf_safetensors {
    shard *shards;
    int n_shards;
    inf_safetensors_tensor *tensors;
    int64_t n_tensors;
};

static int compare_names(const void *a, const void *b)
{
    return strcmp(((const inf_safetensors_tensor *)a)->name, ((const inf_safetensors_tensor *)b)->name);
}

static int compare_offsets(const void *a, const void *b)
{
    const inf_safetensors_tensor *x = *(const inf_safetensors_tensor *const *)a;
    const inf_safetensors_tensor *y = *(const inf_safetensors_tensor *const *)b;
    if (x->data != y->data)
        return (const uint8_t *)x->data < (const uint8_t *)y->data ? -1 : 1;
    return x->size < y->size ? -1 : x->size > y->size;
}

/* Map `path` and check its header length; fills `s`. */
static ggtk_status map_shard(shard *s, const char *path, ggtk_error *err)
{
    s->path = strdup(path);
    if (!s->path)
        return ggtk_error_set(err, GGTK_ERR_NOMEM, GGTK_NO_OFFSET, "out of memory");
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return ggtk_error_set(err, GGTK_ERR_IO, GGTK_NO_OFFSET, "%s: cannot open: %s", path,
                              strerror(errno));
    struct stat st;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        close(fd);
        return ggtk_error_set(err, GGTK_ERR_IO, GGTK_NO_OFFSET, "%s: not a regular file", path);
    }
    s->size = (size_t)st.st_size;
    if (s->size < 8) {
        close(fd);
        return ggtk_error_set(err, GGTK_ERR_TRUNCATED, 0,
                              "%s: %zu bytes, shorter than the 8-byte header length", path, s->size);
    }
    void *map = mmap(NULL, s->size, PROT_READ, MAP_PRIVATE, fd, 0);
    close(fd);
    if (map == MAP_FAILED)
        return ggtk_error_set(err, GGTK_ERR_IO, GGTK_NO_OFFSET, "%s: cannot map: %s", path,
                              strerror(errno));
    s->map = map;
    uint64_t n = 0;
    for (int i = 7; i >= 0; i--)
        n = n << 8 | s->map[i];
    if (n > INF_SAFETENSORS_MAX_HEADER)
        return ggtk_error_set(err, GGTK_ERR_OVERFLOW, 0,
                              "%s: header length %llu exceeds the limit of %u bytes", path,
                              (unsigned long long)n, INF_SAFETENSORS_MAX_HEADER);
    if (n > s->size - 8)
        return ggtk_error_set(err, GGTK_ERR_TRUNCATED, 0,
                              "%s: header length %llu runs past the end of the %zu-byte file", path,
                              (unsigned long long)n, s->size);
    if (n < 2 || s->map[8] != '{')
        return ggtk_error_set(err, GGTK_ERR_INVALID, 8, "%s: the header is not a JSON object",
                              path);
    s->data_start = 8 + n;
    return GGTK_OK;
}

/* A non-negative JSON integer, or false. */
static bool json_uint(const json_t *value, uint64_t *out)
{
    if (!json_is_integer(value) || json_integer_value(value) < 0)
        return false;
    *out = (uint64_t)json_integer_value(value);
    return true;
}

/* Fill `t` from its header entry (not yet checked against the other tensors). */
static ggtk_status parse_entry(const shard *s, int shard_index, const char *name,
                               const json_t *entry, inf_safetensors_tensor *t, ggtk_error *err)
{
    const char *path = s->path;
    if (!*name)
        return ggtk_error_set(err, GGTK_ERR_INVALID, 8, "%s: a tensor has an empty name", path);
    t->name = strdup(name);
    if (!t->name)
        return ggtk_error_set(err, GGTK_ERR_NOMEM, GGTK_NO_OFFSET, "out of memory");
    t->shard = shard_index;
    if (!json_is_object(entry))
        return ggtk_error_set(err, GGTK_ERR_INVALID, 8, "%s: tensor '%s': entry is not an object",
                              path, name);
    const json_t *dtype = json_object_get(entry, "dtype");
    const json_t *shape = json_object_get(entry, "shape");
    const json_t *offsets = json_object_get(entry, "data_offsets");
    if (!json_is_string(dtype))
        return ggtk_error_set(err, GGTK_ERR_INVALID, 8, "%s: tensor '%s': no \"dtype\" string",
                              path, name);
    const safetensors_dtype *dt = safetensors_dtype_find(json_string_value(dtype));
    if (!dt)
        return ggtk_error_set(err, GGTK_ERR_INVALID, 8, "%s: tensor '%s': unknown dtype '%s'",
                              path, name, json_string_value(dtype));
    t->dtype = dt->name;
    t->type = dt->type;
    if (!json_is_array(shape) || json_array_size(shape) > INF_SAFETENSORS_MAX_DIMS)
        return ggtk_error_set(err, GGTK_ERR_INVALID, 8,
                              "%s: tensor '%s': \"shape\" is not an array of at most %d sizes",
                              path, name, INF_SAFETENSORS_MAX_DIMS);
    t->n_dims = (uint32_t)json_array_size(shape);
    t->n_elements = 1;
    for (uint32_t d = 0; d < t->n_dims; d++) {
        if (!json_uint(json_array_get(shape, d), &t->shape[d]))
            return ggtk_error_set(err, GGTK_ERR_INVALID, 8,
                                  "%s: tensor '%s': shape[%u] is not a non-negative integer", path,
                                  name, d);
        if (__builtin_mul_overflow(t->n_elements, t->shape[d], &t->n_elements))
            return ggtk_error_set(err, GGTK_ERR_OVERFLOW, 8,
                                  "%s: tensor '%s': element count overflows", path, name);
    }
    uint64_t begin, end;
    if (!json_is_array(offsets) || json_array_size(offsets) != 2 ||
        !json_uint(json_array_get(offsets, 0), &begin) ||
        !json_uint(json_array_get(offsets, 1), &end) || end < begin)
        return ggtk_error_set(err, GGTK_ERR_INVALID, 8,
                              "%s: tensor '%s': \"data_offsets\" is not [begin, end] with "
                              "0 <= begin <= end", path, name);
    uint64_t need;
    if (__builtin_mul_overflow(t->n_elements, (uint64_t)dt->size, &need))
        return ggtk_error_set(err, GGTK_ERR_OVERFLOW, 8, "%s: tensor '%s': size overflows",
                              path, name);
    if (end - begin != need)
        return ggtk_error_set(err, GGTK_ERR_INVALID, 8,
                              "%s: tensor '%s': data_offsets [%llu, %llu] hold %llu bytes, but "
                              "%llu elements of %s need %llu", path, name,
                              (unsigned long long)begin, (unsigned long long)end,
                              (unsigned long long)(end - begin),
                              (unsigned long long)t->n_elements, dt->name,
                              (unsigned long long)need);
    uint64_t data_size = s->size - s->data_start;
    if (end > data_size)
        return ggtk_error_set(err, GGTK_ERR_LAYOUT, s->data_start + begin,
                              "%s: tensor '%s': data_offsets [%llu, %llu] run past the %llu-byte "
                              "data section", path, name, (unsigned long long)begin,
                              (unsigned long long)end, (unsigned long long)data_size);
    t->size = need;
    t->data = s->map + s->data_start + begin;
    return GGTK_OK;
}

/* The tensors of one shard must tile its data section: no gap, no overlap, nothing after. */
static ggtk_status check_tiling(const shard *s, inf_safetensors_tensor *tensors, size_t n,
                                ggtk_error *err)
{
    inf_safetensors_tensor **by_offset = malloc((n ? n : 1) * sizeof *by_offset);
    if (!by_offset)
        return ggtk_error_set(err, GGTK_ERR_NOMEM, GGTK_NO_OFFSET, "out of memory");
    for (size_t i = 0; i < n; i++)
        by_offset[i] = &tensors[i];
    qsort(by_offset, n, sizeof *by_offset, compare_offsets);
    const uint8_t *cursor = s->map + s->data_start;
    ggtk_status status = GGTK_OK;
    for (size_t i = 0; i < n && status == GGTK_OK; i++) {
        const uint8_t *begin = by_offset[i]->data;
        if (begin != cursor)
            status = ggtk_error_set(err, GGTK_ERR_LAYOUT, (uint64_t)(begin - s->map),
                                    "%s: tensor '%s' starts at data offset %llu, expected %llu "
                                    "(tensors %s)", s->path, by_offset[i]->name,
                                    (unsigned long long)(begin - s->map - s->data_start),
                                    (unsigned long long)(cursor - s->map - s->data_start),
                                    begin < cursor ? "overlap" : "leave a gap");
        cursor = begin + by_offset[i]->size;
    }
    if (status == GGTK_OK && cursor != s->map + s->size)
        status = ggtk_error_set(err, GGTK_ERR_LAYOUT, (uint64_t)(cursor - s->map),
                                "%s: %llu bytes after the last tensor's data", s->path,
                                (unsigned long long)(s->map + s->size - cursor));
    free(by_offset);
    return status;
}

static ggtk_status grow_tensors(inf_safetensors *model, size_t extra, ggtk_error *err)
{
    inf_safetensors_tensor *grown =
        realloc(model->tensors, (model->n_tensors + extra + 1) * sizeof *grown);
    if (!grown)
        return ggtk_error_set(err, GGTK_ERR_NOMEM, GGTK_NO_OFFSET, "out of memory");
    memset(grown + model->n_tensors, 0, (extra + 1) * sizeof *grown);
    model->tensors = grown;
    return GGTK_OK;
}

/* Map shard `path` as shard number model->n_shards and append its tensors sorted by name. */
static ggtk_status add_shard(inf_safetensors *model, const char *path, ggtk_error *err)
{
    shard *grown = realloc(model->shards, (model->n_shards + 1) * sizeof *grown);
    if (!grown)
        return ggtk_error_set(err, GGTK_ERR_NOMEM, GGTK_NO_OFFSET, "out of memory");
    model->shards = grown;
    shard *s = &model->shards[model->n_shards++];
    memset(s, 0, sizeof *s);
    ggtk_status status = map_shard(s, path, err);
    if (status != GGTK_OK)
        return status;
    json_error_t jerr;
    json_t *header = json_loadb((const char *)s->map + 8, s->data_start - 8,
                                JSON_REJECT_DUPLICATES, &jerr);
    if (!header)
        return ggtk_error_set(err, GGTK_ERR_INVALID, 8 + (uint64_t)(jerr.position > 0 ? jerr.position : 0),
                              "%s: header JSON: %s", path, jerr.text);
    if (!json_is_object(header)) {
        json_decref(header);
        return ggtk_error_set(err, GGTK_ERR_INVALID, 8, "%s: the header is not a JSON object", path);
    }
    status = grow_tensors(model, json_object_size(header), err);
    inf_safetensors_tensor *first = model->tensors + model->n_tensors;
    size_t n = 0;
    const char *key;
    json_t *value;
    json_object_foreach(header, key, value) {
        if (status != GGTK_OK)
            break;
        if (strcmp(key, "__metadata__") == 0) {
            const char *mkey;
            json_t *mvalue;
            if (!json_is_object(value))
                status = ggtk_error_set(err, GGTK_ERR_INVALID, 8,
                                        "%s: \"__metadata__\" is not an object", path);
            else
                json_object_foreach(value, mkey, mvalue) if (status == GGTK_OK && !json_is_string(mvalue))
                    status = ggtk_error_set(err, GGTK_ERR_INVALID, 8,
                                            "%s: \"__metadata__\" value '%s' is not a string", path, mkey);
            continue;
        }
        status = parse_entry(s, model->n_shards - 1, key, value, &first[n], err);
        n++; /* counted even on failure, so that its name is freed */
    }
    json_decref(header);
    model->n_tensors += (int64_t)n;
    if (status == GGTK_OK)
        status = check_tiling(s, first, n, err);
    if (status == GGTK_OK)
        qsort(first, n, sizeof *first, compare_names);
    return status;
}

static char *join_path(const char *dir, const char *name)
{
    char *path = NULL;
    return asprintf(&path, "%s/%s", dir, name) < 0 ? NULL : path;
}

static int compare_strings(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* Every tensor of the shards is in the weight map under its own shard, and nothing else is. */
static ggtk_status check_weight_map(const inf_safetensors *model, const char *index_path,
                                    const json_t *weight_map, const char *const *files,
                                    ggtk_error *err)
{
    for (int64_t i = 0; i < model->n_tensors; i++) {
        const inf_safetensors_tensor *t = &model->tensors[i];
        const json_t *file = json_object_get(weight_map, t->name);
        if (!file || strcmp(json_string_value(file), files[t->shard]) != 0)
            return ggtk_error_set(err, GGTK_ERR_INVALID, GGTK_NO_OFFSET,
                                  "%s: tensor '%s' of shard %s is %s", index_path, t->name,
                                  files[t->shard],
                                  file ? "listed under another shard" : "not in the weight map");
    }
    if ((int64_t)json_object_size(weight_map) != model->n_tensors) {
        const char *key;
        json_t *value;
        json_object_foreach((json_t *)weight_map, key, value) if (inf_safetensors_find(model, key) < 0)
            return ggtk_error_set(err, GGTK_ERR_INVALID, GGTK_NO_OFFSET,
                                  "%s: tensor '%s' is not in its shard %s", index_path, key,
                                  json_string_value(value));
    }
    return GGTK_OK;
}

/* The distinct shard names of a weight map, sorted; each a plain file name. */
static ggtk_status shard_names(const char *index_path, const json_t *weight_map,
                               const char ***out, size_t *n_out, ggtk_error *err)
{
    size_t n = 0;
    const char **files = malloc((json_object_size(weight_map) + 1) * sizeof *files);
    if (!files)
        return ggtk_error_set(err, GGTK_ERR_NOMEM, GGTK_NO_OFFSET, "out of memory");
    const char *key;
    json_t *value;
    json_object_foreach((json_t *)weight_map, key, value) {
        const char *file = json_string_value(value);
        if (!file || !*file || strchr(file, '/') || strcmp(file, "..") == 0 || strcmp(file, ".") == 0) {
            free(files);
            return ggtk_error_set(err, GGTK_ERR_INVALID, GGTK_NO_OFFSET,
                                  "%s: weight_map['%s'] is not a file name in the model's folder",
                                  index_path, key);
        }
        bool seen = false;
        for (size_t i = 0; i < n && !seen; i++)
            seen = strcmp(files[i], file) == 0;
        if (!seen)
            files[n++] = file;
    }
    qsort(files, n, sizeof *files, compare_strings);
    *out = files;
    *n_out = n;
    return GGTK_OK;
}

static ggtk_status open_index(inf_safetensors *model, const char *index_path, ggtk_error *err)
{
    json_error_t jerr;
    json_t *index = json_load_file(index_path, JSON_REJECT_DUPLICATES, &jerr);
    if (!index)
        return ggtk_error_set(err, errno == ENOENT ? GGTK_ERR_IO : GGTK_ERR_INVALID,
                              GGTK_NO_OFFSET, "%s: %s", index_path, jerr.text);
    const json_t *weight_map = json_object_get(index, "weight_map");
    ggtk_status status = GGTK_OK;
    if (!json_is_object(weight_map) || json_object_size(weight_map) == 0)
        status = ggtk_error_set(err, GGTK_ERR_INVALID, GGTK_NO_OFFSET,
                                "%s: no \"weight_map\" object naming the shards", index_path);
    const char **files = NULL;
    size_t n_files = 0;
    if (status == GGTK_OK)
        status = shard_names(index_path, weight_map, &files, &n_files, err);
    char *dir = strdup(index_path);
    char *slash = dir ? strrchr(dir, '/') : NULL;
    const char *folder = slash ? (*slash = 0, dir) : ".";
    for (size_t i = 0; status == GGTK_OK && i < n_files; i++) {
        char *path = join_path(folder, files[i]);
        status = path ? add_shard(model, path, err)
                      : ggtk_error_set(err, GGTK_ERR_NOMEM, GGTK_NO_OFFSET, "out of memory");
        free(path);
    }
    if (status == GGTK_OK)
        status = check_weight_map(model, index_path, weight_map, files, err);
    free(dir);
    free(files);
    json_decref(index);
    return status;
}

static bool is_dir(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

static bool ends_with(const char *s, const char *suffix)
{
    size_t n = strlen(s), m = strlen(suffix);
    return n >= m && strcmp(s + n - m, suffix) == 0;
}

static ggtk_status open_path(inf_safetensors *model, const char *path, ggtk_error *err)
{
    if (!is_dir(path))
        return ends_with(path, ".json") ? open_index(model, path, err) : add_shard(model, path, err);
    char *index = join_path(path, INDEX_NAME);
    char *single = join_path(path, SINGLE_NAME);
    ggtk_status status;
    if (!index || !single)
        status = ggtk_error_set(err, GGTK_ERR_NOMEM, GGTK_NO_OFFSET, "out of memory");
    else if (access(index, F_OK) == 0)
        status = open_index(model, index, err);
    else if (access(single, F_OK) == 0)
        status = add_shard(model, single, err);
    else
        status = ggtk_error_set(err, GGTK_ERR_IO, GGTK_NO_OFFSET,
                                "%s: no %s or %s in the folder", path, SINGLE_NAME, INDEX_NAME);
    free(index);
    free(single);
    return status;
}

inf_safetensors *inf_safetensors_open(const char *path, ggtk_error *err)
{
    inf_safetensors *model = calloc(1, sizeof *model);
    if (!model) {
        ggtk_error_set(err, GGTK_ERR_NOMEM, GGTK_NO_OFFSET, "out of memory");
        return NULL;
    }
    if (open_path(model, path, err) != GGTK_OK) {
        inf_safetensors_close(model);
        return NULL;
    }
    return model;
}

void inf_safetensors_close(inf_safetensors *model)
{
    if (!model)
        return;
    for (int i = 0; i < model->n_shards; i++) {
        if (model->shards[i].map)
            munmap(model->shards[i].map, model->shards[i].size);
        free(model->shards[i].path);
    }
    for (int64_t i = 0; i < model->n_tensors; i++)
        free((char *)model->tensors[i].name);
    free(model->shards);
    free(model->tensors);
    free(model);
}

int64_t inf_safetensors_count(const inf_safetensors *model)
{
    return model->n_tensors;
}

const inf_safetensors_tensor *inf_safetensors_tensor_at(const inf_safetensors *model, int64_t index)
{
    return index >= 0 && index < model->n_tensors ? &model->tensors[index] : NULL;
}

int64_t inf_safetensors_find(const inf_safetensors *model, const char *name)
{
    for (int64_t i = 0; i < model->n_tensors; i++)
        if (strcmp(model->tensors[i].name, name) == 0)
            return i;
    return -1;
}

void inf_safetensors_release(const inf_safetensors *model, const inf_safetensors_tensor *tensor)
{
    const shard *s = &model->shards[tensor->shard];
    uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE);
    uintptr_t begin = ((uintptr_t)tensor->data + page - 1) & ~(page - 1);
    uintptr_t end = ((uintptr_t)tensor->data + tensor->size) & ~(page - 1);
    if (end > begin && begin >= (uintptr_t)s->map && end <= (uintptr_t)s->map + s->size)
        madvise((void *)begin, end - begin, MADV_DONTNEED);
}
