/* safetensors_write.c - streams a model into safetensors files: tensors are declared first (the
 * header holds every offset), then their data arrives in order; sharded above a size, with the
 * index file Hugging Face writes. Files are renamed into place together at the end. */
#include "output_set.h"
#include "safetensors_internal.h"

#include <jansson.h>
#include <stdlib.h>
#include <string.h>

typedef struct declared_tensor {
    char *name;
    const safetensors_dtype *dtype;
    uint32_t n_dims;
    uint64_t shape[INF_SAFETENSORS_MAX_DIMS];
    uint64_t size;
    int shard;
} declared_tensor;

struct inf_safetensors_writer {
    uint64_t shard_bytes;
    declared_tensor *tensors;
    int64_t n_tensors;
    int n_shards;
    char **shard_names;
    FILE **streams;         /* one per shard, owned by `files` */
    output_set files;
    bool begun;
    int64_t current;        /* tensor receiving data */
    uint64_t current_done;  /* its bytes written so far */
};

inf_safetensors_writer *inf_safetensors_writer_new(uint64_t shard_bytes)
{
    inf_safetensors_writer *w = calloc(1, sizeof *w);
    if (w)
        w->shard_bytes = shard_bytes;
    return w;
}

void inf_safetensors_writer_free(inf_safetensors_writer *w)
{
    if (!w)
        return;
    output_set_free(&w->files);
    for (int64_t i = 0; i < w->n_tensors; i++)
        free(w->tensors[i].name);
    for (int i = 0; i < w->n_shards; i++)
        free(w->shard_names[i]);
    free(w->shard_names);
    free(w->streams);
    free(w->tensors);
    free(w);
}

void safetensors_writer_set_hooks(inf_safetensors_writer *w, void (*before)(void *user),
                                  void (*on_temp_file)(const char *path, void *user), void *user)
{
    w->files.before_temp_file = before;
    w->files.on_temp_file = on_temp_file;
    w->files.user = user;
}

ggtk_status inf_safetensors_writer_add(inf_safetensors_writer *w, const char *name,
                                       ggtk_tensor_type type, uint32_t n_dims,
                                       const uint64_t *shape, ggtk_error *err)
{
    const safetensors_dtype *dtype = safetensors_dtype_of_type(type);
    if (w->begun || !dtype || (type != GGTK_TENSOR_F32 && type != GGTK_TENSOR_F16 &&
                               type != GGTK_TENSOR_BF16))
        return ggtk_error_set(err, GGTK_ERR_USAGE, GGTK_NO_OFFSET,
                              "safetensors writer: tensor '%s': %s", name,
                              w->begun ? "added after the write began" : "type is not f32, f16 or bf16");
    if (!*name || n_dims > INF_SAFETENSORS_MAX_DIMS)
        return ggtk_error_set(err, GGTK_ERR_INVALID, GGTK_NO_OFFSET,
                              "safetensors writer: tensor '%s': empty name or too many dimensions",
                              name);
    for (int64_t i = 0; i < w->n_tensors; i++)
        if (strcmp(w->tensors[i].name, name) == 0)
            return ggtk_error_set(err, GGTK_ERR_DUPLICATE, GGTK_NO_OFFSET,
                                  "safetensors writer: tensor '%s' added twice", name);
    declared_tensor t = {.dtype = dtype, .n_dims = n_dims, .size = dtype->size};
    for (uint32_t d = 0; d < n_dims; d++) {
        t.shape[d] = shape[d];
        if (__builtin_mul_overflow(t.size, shape[d], &t.size))
            return ggtk_error_set(err, GGTK_ERR_OVERFLOW, GGTK_NO_OFFSET,
                                  "safetensors writer: tensor '%s': size overflows", name);
    }
    declared_tensor *grown = realloc(w->tensors, (w->n_tensors + 1) * sizeof *grown);
    t.name = strdup(name);
    if (!grown || !t.name) {
        free(t.name);
        if (grown)
            w->tensors = grown;
        return ggtk_error_set(err, GGTK_ERR_NOMEM, GGTK_NO_OFFSET, "out of memory");
    }
    w->tensors = grown;
    w->tensors[w->n_tensors++] = t;
    return GGTK_OK;
}

/* Give each tensor its shard and name the shards as Hugging Face does. */
static ggtk_status assign_shards(inf_safetensors_writer *w, ggtk_error *err)
{
    uint64_t used = 0;
    w->n_shards = w->n_tensors ? 1 : 0;
    for (int64_t i = 0; i < w->n_tensors; i++) {
        if (w->shard_bytes && used > 0 && used + w->tensors[i].size > w->shard_bytes) {
            w->n_shards++;
            used = 0;
        }
        w->tensors[i].shard = w->n_shards - 1;
        used += w->tensors[i].size;
    }
    if (w->n_shards == 0)
        w->n_shards = 1; /* an empty model is still one file */
    w->shard_names = calloc((size_t)w->n_shards, sizeof *w->shard_names);
    w->streams = calloc((size_t)w->n_shards, sizeof *w->streams);
    if (!w->shard_names || !w->streams)
        return ggtk_error_set(err, GGTK_ERR_NOMEM, GGTK_NO_OFFSET, "out of memory");
    for (int s = 0; s < w->n_shards; s++) {
        int n = w->n_shards == 1
                    ? asprintf(&w->shard_names[s], "model.safetensors")
                    : asprintf(&w->shard_names[s], "model-%05d-of-%05d.safetensors", s + 1,
                               w->n_shards);
        if (n < 0) {
            w->shard_names[s] = NULL;
            return ggtk_error_set(err, GGTK_ERR_NOMEM, GGTK_NO_OFFSET, "out of memory");
        }
    }
    return GGTK_OK;
}

/* The JSON header of shard `s`, padded with spaces to a multiple of 8 bytes as the reference
 * writer pads it (so that the data section starts aligned). */
static char *shard_header(const inf_safetensors_writer *w, int s, size_t *len)
{
    json_t *header = json_object();
    json_t *meta = json_object();
    json_object_set_new(meta, "format", json_string("pt"));
    json_object_set_new(header, "__metadata__", meta);
    uint64_t offset = 0;
    for (int64_t i = 0; i < w->n_tensors; i++) {
        const declared_tensor *t = &w->tensors[i];
        if (t->shard != s)
            continue;
        json_t *shape = json_array();
        for (uint32_t d = 0; d < t->n_dims; d++)
            json_array_append_new(shape, json_integer((json_int_t)t->shape[d]));
        json_t *entry = json_object();
        json_object_set_new(entry, "dtype", json_string(t->dtype->name));
        json_object_set_new(entry, "shape", shape);
        json_object_set_new(entry, "data_offsets",
                            json_pack("[II]", (json_int_t)offset, (json_int_t)(offset + t->size)));
        json_object_set_new(header, t->name, entry);
        offset += t->size;
    }
    char *text = json_dumps(header, JSON_COMPACT);
    json_decref(header);
    if (!text)
        return NULL;
    size_t n = strlen(text), padded = (n + 7) & ~(size_t)7;
    char *out = realloc(text, padded + 1);
    if (!out) {
        free(text);
        return NULL;
    }
    memset(out + n, ' ', padded - n);
    out[padded] = 0;
    *len = padded;
    return out;
}

ggtk_status inf_safetensors_writer_begin(inf_safetensors_writer *w, const char *dir,
                                         void (*on_temp_file)(const char *path, void *user),
                                         void *user, ggtk_error *err)
{
    if (w->begun)
        return ggtk_error_set(err, GGTK_ERR_USAGE, GGTK_NO_OFFSET,
                              "safetensors writer: begun twice");
    w->begun = true;
    if (on_temp_file) {
        w->files.on_temp_file = on_temp_file;
        w->files.user = user;
    }
    ggtk_status status = assign_shards(w, err);
    for (int s = 0; status == GGTK_OK && s < w->n_shards; s++) {
        size_t len = 0;
        char *header = shard_header(w, s, &len);
        if (!header)
            return ggtk_error_set(err, GGTK_ERR_NOMEM, GGTK_NO_OFFSET, "out of memory");
        w->streams[s] = output_set_open(&w->files, dir, w->shard_names[s], err);
        if (!w->streams[s])
            status = err ? err->status : GGTK_ERR_IO;
        else {
            uint8_t length[8];
            for (int i = 0; i < 8; i++)
                length[i] = (uint8_t)((uint64_t)len >> (8 * i));
            fwrite(length, 1, 8, w->streams[s]);
            fwrite(header, 1, len, w->streams[s]);
        }
        free(header);
    }
    if (status == GGTK_OK && w->n_shards > 1)
        status = output_set_open(&w->files, dir, "model.safetensors.index.json", err)
                     ? GGTK_OK : (err ? err->status : GGTK_ERR_IO);
    return status;
}

ggtk_status inf_safetensors_writer_write(inf_safetensors_writer *w, const void *data, size_t size,
                                         ggtk_error *err)
{
    const uint8_t *bytes = data;
    while (size > 0) {
        while (w->current < w->n_tensors && w->current_done == w->tensors[w->current].size) {
            w->current++;
            w->current_done = 0;
        }
        if (!w->begun || w->current >= w->n_tensors)
            return ggtk_error_set(err, GGTK_ERR_USAGE, GGTK_NO_OFFSET,
                                  "safetensors writer: more data than the tensors hold");
        const declared_tensor *t = &w->tensors[w->current];
        size_t n = t->size - w->current_done < size ? (size_t)(t->size - w->current_done) : size;
        if (fwrite(bytes, 1, n, w->streams[t->shard]) != n)
            return ggtk_error_set(err, GGTK_ERR_IO, GGTK_NO_OFFSET, "%s: write failed",
                                  w->shard_names[t->shard]);
        w->current_done += n;
        bytes += n;
        size -= n;
    }
    return GGTK_OK;
}

/* model.safetensors.index.json: the total size and which shard holds each tensor. */
static ggtk_status write_index(inf_safetensors_writer *w, FILE *stream, ggtk_error *err)
{
    uint64_t total = 0;
    json_t *map = json_object();
    for (int64_t i = 0; i < w->n_tensors; i++) {
        total += w->tensors[i].size;
        json_object_set_new(map, w->tensors[i].name, json_string(w->shard_names[w->tensors[i].shard]));
    }
    json_t *index = json_pack("{s:{s:I},s:o}", "metadata", "total_size", (json_int_t)total,
                              "weight_map", map);
    int rc = index ? json_dumpf(index, stream, JSON_INDENT(2) | JSON_SORT_KEYS) : -1;
    json_decref(index);
    if (rc != 0)
        return ggtk_error_set(err, GGTK_ERR_IO, GGTK_NO_OFFSET,
                              "model.safetensors.index.json: write failed");
    fputc('\n', stream);
    return GGTK_OK;
}

ggtk_status safetensors_writer_finish_into(inf_safetensors_writer *w, output_set *into,
                                          ggtk_error *err)
{
    while (w->current < w->n_tensors && w->current_done == w->tensors[w->current].size) {
        w->current++;
        w->current_done = 0;
    }
    ggtk_status status = GGTK_OK;
    if (!w->begun || w->current < w->n_tensors)
        status = ggtk_error_set(err, GGTK_ERR_USAGE, GGTK_NO_OFFSET,
                                "safetensors writer: tensor '%s' is missing data",
                                w->current < w->n_tensors ? w->tensors[w->current].name : "?");
    if (status == GGTK_OK && w->n_shards > 1)
        status = write_index(w, ggtk_atomic_file_stream(w->files.files[w->files.n_files - 1]), err);
    ggtk_atomic_file **grown =
        status == GGTK_OK ? realloc(into->files, (into->n_files + w->files.n_files) * sizeof *grown)
                          : NULL;
    if (status == GGTK_OK && !grown)
        status = ggtk_error_set(err, GGTK_ERR_NOMEM, GGTK_NO_OFFSET, "out of memory");
    if (status != GGTK_OK) {
        output_set_free(&w->files);
        return status;
    }
    into->files = grown;
    for (int i = 0; i < w->files.n_files; i++)
        into->files[into->n_files++] = w->files.files[i];
    free(w->files.files);
    w->files.files = NULL;
    w->files.n_files = 0;
    return GGTK_OK;
}

ggtk_status inf_safetensors_writer_finish(inf_safetensors_writer *w, ggtk_error *err)
{
    output_set set = {0};
    ggtk_status status = safetensors_writer_finish_into(w, &set, err);
    return status == GGTK_OK ? output_set_commit(&set, err) : status;
}
