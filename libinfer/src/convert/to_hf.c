/* to_hf.c - a GGUF model to a Hugging Face folder: every tensor dequantized, transformed back and
 * streamed into safetensors, config.json and generation_config.json from the metadata,
 * gguf_metadata.json with the general.* keys, and the tokenizer files; all renamed into place
 * together. */
#include "convert_internal.h"
#include "convert_tokenizer.h"
#include "safetensors_internal.h"

#include <ggtk/inf_quant.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* One tensor to export, in Hugging Face name order. */
typedef struct export_tensor {
    const ggtk_tensor_info *info;
    char name[128];
    tensor_transform transform;
} export_tensor;

inf_convert_hf_options inf_convert_hf_options_default(void)
{
    return (inf_convert_hf_options){.dtype = GGTK_TENSOR_F32};
}

static int compare_export(const void *a, const void *b)
{
    return strcmp(((const export_tensor *)a)->name, ((const export_tensor *)b)->name);
}

static ggtk_status plan_export(const ggtk_file *gguf, const hf_family *family,
                               export_tensor **out, int64_t *n_out, ggtk_error *err)
{
    char key[160];
    hf_heads heads = {0};
    snprintf(key, sizeof key, "%s.attention.head_count", family->gguf_arch);
    ggtk_get_uint(gguf, key, &heads.n_head);
    heads.n_head_kv = heads.n_head;
    snprintf(key, sizeof key, "%s.attention.head_count_kv", family->gguf_arch);
    ggtk_get_uint(gguf, key, &heads.n_head_kv);
    int64_t n = ggtk_tensor_count(gguf);
    export_tensor *tensors = calloc((size_t)(n + 1), sizeof *tensors);
    if (!tensors)
        return ggtk_error_set(err, GGTK_ERR_NOMEM, GGTK_NO_OFFSET, "out of memory");
    for (int64_t i = 0; i < n; i++) {
        export_tensor *t = &tensors[i];
        t->info = ggtk_tensor(gguf, i);
        if (!tensor_name_to_hf(family, t->info->name, t->name) ||
            !inf_type_can_dequantize(t->info->type)) {
            free(tensors);
            return ggtk_error_set(err, GGTK_ERR_UNSUPPORTED, t->info->info_offset,
                                  "%s: tensor '%s' (%s) has no Hugging Face equivalent in %s "
                                  "models", ggtk_path(gguf), t->info->name,
                                  ggtk_tensor_type_name(t->info->type), family->hf_arch);
        }
        t->transform = tensor_transform_for(family, &heads, t->info->name);
        if (t->transform.permute_heads && !heads.n_head) {
            free(tensors);
            return ggtk_error_set(err, GGTK_ERR_INVALID, GGTK_NO_OFFSET,
                                  "%s: %s.attention.head_count is missing", ggtk_path(gguf),
                                  family->gguf_arch);
        }
        uint64_t nrows = t->info->ne[1] * t->info->ne[2] * t->info->ne[3];
        ggtk_status status = tensor_transform_check(&t->transform, nrows, t->info->name, err);
        if (status != GGTK_OK) {
            free(tensors);
            return status;
        }
    }
    qsort(tensors, (size_t)n, sizeof *tensors, compare_export);
    *out = tensors;
    *n_out = n;
    return GGTK_OK;
}

/* The tensor's values as F32 with its transformation undone: straight from the map for an F32
 * tensor nothing changes (no copy), else dequantized into *owned. */
static ggtk_status export_values(const ggtk_file *gguf, const export_tensor *t, int n_threads,
                                 const float **values, float **owned, ggtk_error *err)
{
    const ggtk_tensor_info *info = t->info;
    uint64_t ncols = info->ne[0], nrows = info->ne[1] * info->ne[2] * info->ne[3];
    if (info->type == GGTK_TENSOR_F32 && !t->transform.permute_heads && !t->transform.norm_plus_one) {
        *values = info->data;
        return GGTK_OK;
    }
    *owned = malloc(ncols * nrows * sizeof **owned);
    float *scratch = t->transform.permute_heads ? malloc(ncols * nrows * sizeof *scratch) : NULL;
    ggtk_status status = GGTK_OK;
    if (!*owned || (t->transform.permute_heads && !scratch))
        status = ggtk_error_set(err, GGTK_ERR_NOMEM, GGTK_NO_OFFSET, "out of memory");
    if (status == GGTK_OK && !inf_dequantize_rows(info->type, info->data, *owned, (int64_t)nrows,
                                                  (int64_t)ncols, n_threads))
        status = ggtk_error_set(err, GGTK_ERR_UNSUPPORTED, info->info_offset,
                                "tensor '%s': cannot read type %s", info->name,
                                ggtk_tensor_type_name(info->type));
    ggtk_release_data(gguf, info->data, info->size);
    if (status == GGTK_OK)
        status = tensor_transform_apply(&t->transform, false, *owned, scratch, nrows, ncols,
                                        info->name, err);
    free(scratch);
    *values = *owned;
    return status;
}

static ggtk_status export_tensor_data(const ggtk_file *gguf, const export_tensor *t,
                                      const inf_convert_hf_options *o,
                                      inf_safetensors_writer *w, ggtk_error *err)
{
    const ggtk_tensor_info *info = t->info;
    uint64_t ncols = info->ne[0], nrows = info->ne[1] * info->ne[2] * info->ne[3];
    uint64_t out_bytes = ncols * nrows * (o->dtype == GGTK_TENSOR_F32 ? 4 : 2);
    bool unchanged = !t->transform.permute_heads && !t->transform.norm_plus_one;
    if (info->type == o->dtype && unchanged) { /* the bytes as they are */
        ggtk_status status = inf_safetensors_writer_write(w, info->data, out_bytes, err);
        ggtk_release_data(gguf, info->data, info->size);
        return status;
    }
    const float *values = NULL;
    float *owned = NULL;
    void *converted = NULL;
    ggtk_status status = export_values(gguf, t, o->n_threads, &values, &owned, err);
    if (status == GGTK_OK && o->dtype != GGTK_TENSOR_F32) {
        converted = malloc(out_bytes);
        if (!converted)
            status = ggtk_error_set(err, GGTK_ERR_NOMEM, GGTK_NO_OFFSET, "out of memory");
        else
            inf_quantize_rows(o->dtype, values, converted, (int64_t)nrows, (int64_t)ncols,
                              o->n_threads);
    }
    if (status == GGTK_OK)
        status = inf_safetensors_writer_write(w, converted ? converted : (const void *)values,
                                              out_bytes, err);
    ggtk_release_data(gguf, info->data, info->size);
    free(converted);
    free(owned);
    return status;
}

static const char *torch_dtype(ggtk_tensor_type dtype)
{
    return dtype == GGTK_TENSOR_F16 ? "float16" : dtype == GGTK_TENSOR_BF16 ? "bfloat16" : "float32";
}

/* config.json: the family's keys back, and what Hugging Face needs to build the model. */
static json_t *make_config(const ggtk_file *gguf, const hf_family *family,
                           const inf_convert_hf_options *o)
{
    json_t *config = json_object();
    json_object_set_new(config, "architectures", json_pack("[s]", family->hf_arch));
    json_object_set_new(config, "model_type", json_string(family->model_type));
    json_object_set_new(config, "torch_dtype", json_string(torch_dtype(o->dtype)));
    bool gemma = family->flags & FAMILY_NORM_PLUS_ONE;
    json_object_set_new(config, gemma ? "hidden_activation" : "hidden_act",
                        json_string(gemma ? "gelu_pytorch_tanh" : "silu"));
    hf_config_from_gguf(family, gguf, config);
    int64_t embd = ggtk_find_tensor(gguf, "token_embd.weight");
    if (embd >= 0)
        json_object_set_new(config, "vocab_size", json_integer((json_int_t)ggtk_tensor(gguf, embd)->ne[1]));
    json_object_set_new(config, "tie_word_embeddings",
                        json_boolean(ggtk_find_tensor(gguf, "output.weight") < 0));
    if (ggtk_find_tensor(gguf, "blk.0.attn_q.bias") >= 0)
        json_object_set_new(config, "attention_bias", json_true());
    const json_t *head_dim = json_object_get(config, "head_dim");
    if (gemma && json_is_integer(head_dim))
        json_object_set_new(config, "query_pre_attn_scalar", json_integer(json_integer_value(head_dim)));
    static const struct { const char *gguf, *hf; } ids[] = {
        {"tokenizer.ggml.bos_token_id", "bos_token_id"},
        {"tokenizer.ggml.eos_token_id", "eos_token_id"},
        {"tokenizer.ggml.padding_token_id", "pad_token_id"},
    };
    for (size_t i = 0; i < sizeof ids / sizeof ids[0]; i++) {
        uint64_t id;
        if (ggtk_get_uint(gguf, ids[i].gguf, &id) == GGTK_OK)
            json_object_set_new(config, ids[i].hf, json_integer((json_int_t)id));
    }
    return config;
}

static json_t *make_generation_config(const json_t *config)
{
    json_t *gen = json_pack("{s:b}", "_from_model_config", 1);
    static const char *const keys[] = {"bos_token_id", "eos_token_id", "pad_token_id"};
    for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++) {
        json_t *v = json_object_get(config, keys[i]);
        if (v)
            json_object_set(gen, keys[i], v);
    }
    return gen;
}

static ggtk_status write_json(output_set *set, const char *dir, const char *name, json_t *value,
                              ggtk_error *err)
{
    FILE *stream = output_set_open(set, dir, name, err);
    if (!stream)
        return err ? err->status : GGTK_ERR_IO;
    if (!value || json_dumpf(value, stream, JSON_INDENT(2) | JSON_SORT_KEYS) != 0)
        return ggtk_error_set(err, GGTK_ERR_IO, GGTK_NO_OFFSET, "%s/%s: cannot write", dir, name);
    fputc('\n', stream);
    return GGTK_OK;
}

/* The folder is created when missing; none of the files written may exist already. */
static ggtk_status prepare_dir(const char *dir, bool *created, ggtk_error *err)
{
    static const char *const names[] = {"config.json", "generation_config.json",
                                        "gguf_metadata.json", "model.safetensors",
                                        "model.safetensors.index.json", "tokenizer.json",
                                        "tokenizer_config.json", "special_tokens_map.json",
                                        "tokenizer.model", "added_tokens.json"};
    *created = mkdir(dir, 0777) == 0;
    struct stat st;
    if (!*created && (stat(dir, &st) != 0 || !S_ISDIR(st.st_mode)))
        return ggtk_error_set(err, GGTK_ERR_PATH, GGTK_NO_OFFSET,
                              "%s: cannot create the output folder: %s", dir,
                              errno == EEXIST ? "exists and is not a folder" : strerror(errno));
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        char path[4096];
        snprintf(path, sizeof path, "%s/%s", dir, names[i]);
        if (access(path, F_OK) == 0)
            return ggtk_error_set(err, GGTK_ERR_PATH, GGTK_NO_OFFSET,
                                  "%s exists: convert into a new or empty folder", path);
    }
    return GGTK_OK;
}

static ggtk_status export_all(const ggtk_file *gguf, const hf_family *family, const char *dir,
                              const inf_convert_hf_options *o, ggtk_error *err)
{
    export_tensor *tensors = NULL;
    int64_t n = 0;
    ggtk_status status = plan_export(gguf, family, &tensors, &n, err);
    inf_safetensors_writer *w = status == GGTK_OK ? inf_safetensors_writer_new(o->shard_bytes) : NULL;
    if (status == GGTK_OK && !w)
        status = ggtk_error_set(err, GGTK_ERR_NOMEM, GGTK_NO_OFFSET, "out of memory");
    for (int64_t i = 0; status == GGTK_OK && i < n; i++) {
        const ggtk_tensor_info *info = tensors[i].info;
        uint64_t shape[GGTK_MAX_DIMS];
        for (uint32_t d = 0; d < info->n_dims; d++)
            shape[d] = info->ne[info->n_dims - 1 - d];
        status = inf_safetensors_writer_add(w, tensors[i].name, o->dtype, info->n_dims, shape, err);
    }
    if (status == GGTK_OK) {
        safetensors_writer_set_hooks(w, o->before_temp_file, o->on_temp_file, o->user);
        status = inf_safetensors_writer_begin(w, dir, NULL, NULL, err);
    }
    for (int64_t i = 0; status == GGTK_OK && i < n; i++)
        status = export_tensor_data(gguf, &tensors[i], o, w, err);
    output_set files = {.before_temp_file = o->before_temp_file, .on_temp_file = o->on_temp_file,
                        .user = o->user};
    json_t *config = status == GGTK_OK ? make_config(gguf, family, o) : NULL;
    json_t *gen = config ? make_generation_config(config) : NULL;
    json_t *meta = config ? general_metadata_from_gguf(gguf) : NULL;
    if (status == GGTK_OK)
        status = write_json(&files, dir, "config.json", config, err);
    if (status == GGTK_OK)
        status = write_json(&files, dir, "generation_config.json", gen, err);
    if (status == GGTK_OK)
        status = write_json(&files, dir, "gguf_metadata.json", meta, err);
    if (status == GGTK_OK)
        status = safetensors_writer_finish_into(w, &files, err);
    if (status == GGTK_OK && !convert_tokenizer_to_hf(gguf, &files, dir, err))
        status = err && err->status != GGTK_OK ? err->status : GGTK_ERR_INVALID;
    if (status == GGTK_OK)
        status = output_set_commit(&files, err);
    output_set_free(&files);
    json_decref(config);
    json_decref(gen);
    json_decref(meta);
    inf_safetensors_writer_free(w);
    free(tensors);
    return status;
}

ggtk_status inf_convert_gguf_to_hf(const char *gguf_path, const char *out_dir,
                                   const inf_convert_hf_options *options, ggtk_error *err)
{
    inf_convert_hf_options defaults = inf_convert_hf_options_default();
    const inf_convert_hf_options *o = options ? options : &defaults;
    if (o->dtype != GGTK_TENSOR_F32 && o->dtype != GGTK_TENSOR_F16 && o->dtype != GGTK_TENSOR_BF16)
        return ggtk_error_set(err, GGTK_ERR_USAGE, GGTK_NO_OFFSET,
                              "output dtype must be f32, f16 or bf16");
    ggtk_file *gguf = ggtk_open(gguf_path, GGTK_OPEN_MMAP, err);
    if (!gguf)
        return err ? err->status : GGTK_ERR_IO;
    const char *arch = "";
    ggtk_get_string(gguf, "general.architecture", &arch);
    const hf_family *family = hf_family_by_gguf_arch(arch);
    ggtk_status status = GGTK_OK;
    if (!family)
        status = ggtk_error_set(err, GGTK_ERR_UNSUPPORTED, GGTK_NO_OFFSET,
                                "%s: architecture '%s' has no Hugging Face export here", gguf_path,
                                arch);
    bool created = false;
    if (status == GGTK_OK)
        status = prepare_dir(out_dir, &created, err);
    if (status == GGTK_OK)
        status = export_all(gguf, family, out_dir, o, err);
    if (status != GGTK_OK && created)
        rmdir(out_dir); /* only when nothing is left in it */
    ggtk_close(gguf);
    return status;
}
