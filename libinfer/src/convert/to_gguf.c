/* to_gguf.c - a Hugging Face folder to one GGUF file in one pass: config.json becomes metadata
 * (hf_config.c), each safetensors tensor is renamed, transformed and converted to its output type
 * one at a time from the mapped shards, and the file is written through the atomic writer. */
#include "convert_internal.h"
#include "convert_tokenizer.h"
#include "file_quantizer/rules.h"

#include <ggtk/gguf_util.h>
#include <ggtk/inf_quant.h>
#include <ggtk/inf_quantize_file.h>

#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* llama.cpp's GGML_QUANT_VERSION. */
enum { QUANTIZATION_VERSION = 2 };

/* One output tensor. */
typedef struct out_tensor {
    const inf_safetensors_tensor *src;
    char name[64];
    uint32_t n_dims;
    uint64_t ne[GGTK_MAX_DIMS];
    uint64_t nrows;              /* rows written (Gemma 3's embedding may be cut) */
    ggtk_tensor_type type;
    tensor_transform transform;
} out_tensor;

typedef struct conversion {
    const char *hf_dir;
    const inf_convert_options *options;
    json_t *config;
    char *config_path;
    const hf_family *family;
    hf_heads heads;
    inf_safetensors *model;
    out_tensor *tensors;
    int64_t n_tensors;
    ggtk_writer *writer;
} conversion;

inf_convert_options inf_convert_options_default(void)
{
    return (inf_convert_options){.file_type = GGTK_FILE_TYPE_F16};
}

static ggtk_status nomem(ggtk_error *err)
{
    return ggtk_error_set(err, GGTK_ERR_NOMEM, GGTK_NO_OFFSET, "out of memory");
}

static ggtk_status read_config(conversion *c, ggtk_error *err)
{
    if (asprintf(&c->config_path, "%s/config.json", c->hf_dir) < 0) {
        c->config_path = NULL;
        return nomem(err);
    }
    json_error_t jerr;
    c->config = json_load_file(c->config_path, JSON_REJECT_DUPLICATES, &jerr);
    if (!c->config)
        return ggtk_error_set(err, GGTK_ERR_INVALID, GGTK_NO_OFFSET, "%s: %s", c->config_path,
                              jerr.text);
    const char *arch = json_string_value(json_array_get(json_object_get(c->config, "architectures"), 0));
    if (!arch)
        return ggtk_error_set(err, GGTK_ERR_INVALID, GGTK_NO_OFFSET,
                              "%s: no \"architectures\" list naming the model class",
                              c->config_path);
    c->family = hf_family_by_hf_arch(arch);
    if (!c->family)
        return ggtk_error_set(err, GGTK_ERR_UNSUPPORTED, GGTK_NO_OFFSET,
                              "%s: architecture '%s' is not supported (supported: %s)",
                              c->config_path, arch, hf_family_names());
    const json_t *n_head = hf_config_get(c->config, "num_attention_heads");
    const json_t *n_head_kv = hf_config_get(c->config, "num_key_value_heads");
    if (json_is_integer(n_head) && json_integer_value(n_head) > 0)
        c->heads.n_head = (uint64_t)json_integer_value(n_head);
    c->heads.n_head_kv = c->heads.n_head;
    if (json_is_integer(n_head_kv) && json_integer_value(n_head_kv) > 0)
        c->heads.n_head_kv = (uint64_t)json_integer_value(n_head_kv);
    if ((c->family->flags & FAMILY_PERMUTE_QK) && !c->heads.n_head)
        return ggtk_error_set(err, GGTK_ERR_INVALID, GGTK_NO_OFFSET,
                              "%s: \"num_attention_heads\" is not a positive integer",
                              c->config_path);
    return GGTK_OK;
}

/* Gemma 3: convert_hf_to_gguf.py cuts the embedding to the tokenizer's size, counted as the
 * entries of tokenizer.json's model.vocab plus its added_tokens. 0 when unknown. */
static uint64_t tokenizer_size(const char *hf_dir)
{
    char *path = NULL;
    if (asprintf(&path, "%s/tokenizer.json", hf_dir) < 0)
        return 0;
    json_t *tok = json_load_file(path, 0, NULL);
    free(path);
    uint64_t n = 0;
    const json_t *vocab = json_object_get(json_object_get(tok, "model"), "vocab");
    if (json_is_object(vocab))
        n = json_object_size(vocab) + json_array_size(json_object_get(tok, "added_tokens"));
    json_decref(tok);
    return n;
}

/* convert_hf_to_gguf.py's --outtype rule: 1-D tensors and norms F32, others the file's type;
 * Q8_0 falls back to F16 for rows that are not whole blocks. */
static ggtk_tensor_type direct_type(uint32_t file_type, const out_tensor *t)
{
    size_t len = strlen(t->name);
    if (t->n_dims <= 1 || (len >= 12 && strcmp(t->name + len - 12, "_norm.weight") == 0) ||
        strcmp(t->name + (len >= 7 ? len - 7 : 0), ".weight") != 0)
        return GGTK_TENSOR_F32;
    switch (file_type) {
    case GGTK_FILE_TYPE_F16: return GGTK_TENSOR_F16;
    case GGTK_FILE_TYPE_BF16: return GGTK_TENSOR_BF16;
    case GGTK_FILE_TYPE_Q8_0:
        return t->ne[0] % 32 == 0 ? GGTK_TENSOR_Q8_0 : GGTK_TENSOR_F16;
    default: return GGTK_TENSOR_F32;
    }
}

static bool is_direct(uint32_t file_type)
{
    return file_type == GGTK_FILE_TYPE_F32 || file_type == GGTK_FILE_TYPE_F16 ||
           file_type == GGTK_FILE_TYPE_BF16 || file_type == GGTK_FILE_TYPE_Q8_0;
}

/* Any other file type: llama-quantize's rules applied to the F32 conversion. */
static ggtk_status quantized_types(conversion *c, ggtk_error *err)
{
    const char *arch = c->family->gguf_arch;
    uint64_t n_layer = 0;
    const json_t *v = hf_config_get(c->config, "num_hidden_layers");
    if (json_is_integer(v) && json_integer_value(v) > 0)
        n_layer = (uint64_t)json_integer_value(v);
    quantize_model model;
    quantize_model_init(&model, arch, n_layer, 0, c->heads.n_head, c->heads.n_head_kv);
    bool tied = true;
    const char **names = malloc((size_t)(c->n_tensors + 1) * sizeof *names);
    ggtk_tensor_info *infos = calloc((size_t)(c->n_tensors + 1), sizeof *infos);
    if (!names || !infos) {
        free(names);
        free(infos);
        return nomem(err);
    }
    for (int64_t i = 0; i < c->n_tensors; i++) {
        const out_tensor *t = &c->tensors[i];
        names[i] = t->name;
        quantize_model_count_tensor(&model, t->name);
        tied &= strcmp(t->name, "output.weight") != 0;
        infos[i] = (ggtk_tensor_info){.name = t->name, .n_dims = t->n_dims, .type = GGTK_TENSOR_F32};
        memcpy(infos[i].ne, t->ne, sizeof t->ne);
    }
    inf_quantize_options qopt = inf_quantize_options_default((ggtk_file_type)c->options->file_type);
    quantize_rules rules;
    ggtk_status status = quantize_rules_init(&rules, &model, tied, &qopt, err);
    int64_t *order = status == GGTK_OK ? quantize_name_order(names, c->n_tensors) : NULL;
    if (status == GGTK_OK && !order)
        status = nomem(err);
    for (int64_t k = 0; status == GGTK_OK && k < c->n_tensors; k++) {
        out_tensor *t = &c->tensors[order[k]];
        quantize_choice choice;
        status = quantize_rules_choose(&rules, &infos[order[k]], &choice, err);
        t->type = quantize_fallback_type(choice.type, t->ne[0]);
        if (status == GGTK_OK && !inf_type_can_quantize(t->type) && t->type != GGTK_TENSOR_F32)
            status = ggtk_error_set(err, GGTK_ERR_UNSUPPORTED, GGTK_NO_OFFSET,
                                    "tensor '%s': no kernel of this build writes %s", t->name,
                                    ggtk_tensor_type_name(t->type));
    }
    quantize_rules_free(&rules);
    free(order);
    free(names);
    free(infos);
    return status;
}

/* The output tensor of safetensors tensor `src`; false when it is dropped. */
static ggtk_status plan_tensor(conversion *c, const inf_safetensors_tensor *src, out_tensor *t,
                               bool *kept, ggtk_error *err)
{
    int mapped = tensor_name_to_gguf(c->family, src->name, t->name);
    *kept = mapped == 1;
    if (mapped < 0)
        return ggtk_error_set(err, GGTK_ERR_UNSUPPORTED, GGTK_NO_OFFSET,
                              "%s: tensor '%s' has no GGUF name in %s models", c->hf_dir,
                              src->name, c->family->hf_arch);
    if (mapped == 0)
        return GGTK_OK;
    if (src->type != GGTK_TENSOR_F32 && src->type != GGTK_TENSOR_F16 && src->type != GGTK_TENSOR_BF16)
        return ggtk_error_set(err, GGTK_ERR_UNSUPPORTED, GGTK_NO_OFFSET,
                              "%s: tensor '%s': dtype %s is not F32, F16 or BF16", c->hf_dir,
                              src->name, src->dtype);
    if (src->n_dims > GGTK_MAX_DIMS || src->n_elements == 0)
        return ggtk_error_set(err, GGTK_ERR_INVALID, GGTK_NO_OFFSET,
                              "%s: tensor '%s': %u dimensions or no elements (GGUF takes 1 to 4 "
                              "dimensions)", c->hf_dir, src->name, src->n_dims);
    t->src = src;
    t->n_dims = src->n_dims ? src->n_dims : 1;
    for (uint32_t d = 0; d < GGTK_MAX_DIMS; d++)
        t->ne[d] = d < src->n_dims ? src->shape[src->n_dims - 1 - d] : 1;
    t->nrows = t->ne[1] * t->ne[2] * t->ne[3];
    if ((c->family->flags & FAMILY_TRIM_EMBEDDING) && strcmp(t->name, "token_embd.weight") == 0) {
        uint64_t n = tokenizer_size(c->hf_dir);
        if (n > 0 && n < t->ne[1])
            t->ne[1] = t->nrows = n;
    }
    t->transform = tensor_transform_for(c->family, &c->heads, t->name);
    return tensor_transform_check(&t->transform, t->nrows, t->name, err);
}

static ggtk_status plan_tensors(conversion *c, ggtk_error *err)
{
    int64_t n = inf_safetensors_count(c->model);
    c->tensors = calloc((size_t)(n + 1), sizeof *c->tensors);
    if (!c->tensors)
        return nomem(err);
    ggtk_status status = GGTK_OK;
    for (int64_t i = 0; status == GGTK_OK && i < n; i++) {
        bool kept = false;
        status = plan_tensor(c, inf_safetensors_tensor_at(c->model, i), &c->tensors[c->n_tensors],
                             &kept, err);
        c->n_tensors += kept;
    }
    uint32_t ft = c->options->file_type;
    if (status == GGTK_OK && !is_direct(ft))
        return quantized_types(c, err);
    for (int64_t i = 0; i < c->n_tensors; i++)
        c->tensors[i].type = direct_type(ft, &c->tensors[i]);
    return status;
}

static const char *folder_name(const char *dir, char *buf, size_t size)
{
    snprintf(buf, size, "%s", dir);
    size_t n = strlen(buf);
    while (n > 1 && buf[n - 1] == '/')
        buf[--n] = 0;
    return basename(buf);
}

static ggtk_status build_header(conversion *c, ggtk_error *err)
{
    c->writer = ggtk_writer_new();
    if (!c->writer)
        return nomem(err);
    uint64_t n_params = 0;
    for (int64_t i = 0; i < c->n_tensors; i++)
        n_params += c->tensors[i].ne[0] * c->tensors[i].nrows;
    char name[4096];
    ggtk_status status = ggtk_writer_set_string(c->writer, "general.architecture", c->family->gguf_arch);
    if (status == GGTK_OK)
        status = ggtk_writer_set_string(c->writer, "general.type", "model");
    if (status == GGTK_OK)
        status = general_metadata_to_gguf(c->options->metadata_path,
                                          folder_name(c->hf_dir, name, sizeof name), n_params,
                                          c->writer, err);
    if (status == GGTK_OK)
        status = hf_config_to_gguf(c->family, c->config, c->config_path, c->options->file_type,
                                   c->writer, err);
    if (status == GGTK_OK)
        status = ggtk_writer_set_u32(c->writer, "general.quantization_version", QUANTIZATION_VERSION);
    if (status == GGTK_OK && !convert_tokenizer_from_hf(c->hf_dir, c->writer, err))
        status = err && err->status != GGTK_OK ? err->status : GGTK_ERR_INVALID;
    for (int64_t i = 0; status == GGTK_OK && i < c->n_tensors; i++) {
        const out_tensor *t = &c->tensors[i];
        status = ggtk_writer_add_tensor(c->writer, t->name, t->type, t->n_dims, t->ne);
        if (status != GGTK_OK)
            return ggtk_error_set(err, status, GGTK_NO_OFFSET, "tensor '%s' (from '%s'): %s",
                                  t->name, t->src->name, ggtk_strerror(status));
    }
    return status;
}

/* The source tensor's first nrows rows as F32. */
static void load_f32(const out_tensor *t, float *dst)
{
    uint64_t n = t->ne[0] * t->nrows;
    if (t->src->type == GGTK_TENSOR_F32)
        memcpy(dst, t->src->data, n * sizeof *dst);
    else if (t->src->type == GGTK_TENSOR_F16)
        inf_fp16_to_fp32_row(t->src->data, dst, (int64_t)n);
    else
        inf_bf16_to_fp32_row(t->src->data, dst, (int64_t)n);
}

/* The values of `t` as F32 after its transformation: straight from the map when the source is
 * F32 and nothing changes (no copy, so the peak stays one tensor), else in *owned. */
static ggtk_status tensor_values(const conversion *c, const out_tensor *t, const float **values,
                                 float **owned, ggtk_error *err)
{
    bool in_place = !t->transform.permute_heads && !t->transform.norm_plus_one;
    if (t->src->type == GGTK_TENSOR_F32 && in_place) {
        *values = t->src->data;
        return GGTK_OK;
    }
    uint64_t n = t->ne[0] * t->nrows;
    *owned = malloc(n * sizeof **owned);
    float *scratch = t->transform.permute_heads ? malloc(n * sizeof *scratch) : NULL;
    ggtk_status status = GGTK_OK;
    if (!*owned || (t->transform.permute_heads && !scratch))
        status = nomem(err);
    if (status == GGTK_OK) {
        load_f32(t, *owned);
        inf_safetensors_release(c->model, t->src);
        status = tensor_transform_apply(&t->transform, true, *owned, scratch, t->nrows, t->ne[0],
                                        t->src->name, err);
    }
    free(scratch);
    *values = *owned;
    return status;
}

/* Convert and stream every tensor, one at a time. */
static ggtk_status write_tensors(conversion *c, ggtk_error *err)
{
    ggtk_status status = GGTK_OK;
    for (int64_t i = 0; status == GGTK_OK && i < c->n_tensors; i++) {
        const out_tensor *t = &c->tensors[i];
        uint64_t out_bytes = 0;
        ggtk_tensor_type_bytes(t->type, t->ne[0] * t->nrows, &out_bytes);
        const float *values = NULL;
        float *owned = NULL;
        void *converted = NULL;
        status = tensor_values(c, t, &values, &owned, err);
        if (status == GGTK_OK && t->type != GGTK_TENSOR_F32) {
            converted = malloc(out_bytes ? out_bytes : 1);
            if (!converted)
                status = nomem(err);
            else if (!inf_quantize_rows(t->type, values, converted, (int64_t)t->nrows,
                                        (int64_t)t->ne[0], c->options->n_threads))
                status = ggtk_error_set(err, GGTK_ERR_UNSUPPORTED, GGTK_NO_OFFSET,
                                        "tensor '%s': cannot convert to %s", t->name,
                                        ggtk_tensor_type_name(t->type));
        }
        if (status == GGTK_OK)
            status = ggtk_writer_write_data(c->writer, converted ? converted : (const void *)values,
                                            out_bytes, err);
        inf_safetensors_release(c->model, t->src);
        free(converted);
        free(owned);
    }
    return status;
}

static ggtk_status write_file(conversion *c, const char *out_path, ggtk_error *err)
{
    const inf_convert_options *o = c->options;
    if (o->before_temp_file)
        o->before_temp_file(o->user);
    ggtk_status status = ggtk_writer_begin(c->writer, out_path, err);
    if (o->on_temp_file)
        o->on_temp_file(status == GGTK_OK ? ggtk_writer_temp_path(c->writer) : NULL, o->user);
    if (status == GGTK_OK)
        status = write_tensors(c, err);
    if (status == GGTK_OK)
        status = ggtk_writer_finish(c->writer, err);
    else
        ggtk_writer_abort(c->writer);
    return status;
}

static bool known_file_type(uint32_t file_type)
{
    return is_direct(file_type) || inf_quantize_file_type_supported(file_type);
}

ggtk_status inf_convert_hf_to_gguf(const char *hf_dir, const char *out_path,
                                   const inf_convert_options *options, ggtk_error *err)
{
    inf_convert_options defaults = inf_convert_options_default();
    conversion c = {.hf_dir = hf_dir, .options = options ? options : &defaults};
    if (!known_file_type(c.options->file_type))
        return ggtk_error_set(err, GGTK_ERR_USAGE, GGTK_NO_OFFSET,
                              "output file type %u cannot be written", c.options->file_type);
    ggtk_status status = read_config(&c, err);
    if (status == GGTK_OK && !(c.model = inf_safetensors_open(hf_dir, err)))
        status = err ? err->status : GGTK_ERR_IO;
    if (status == GGTK_OK)
        status = plan_tensors(&c, err);
    if (status == GGTK_OK)
        status = build_header(&c, err);
    if (status == GGTK_OK)
        status = write_file(&c, out_path, err);
    ggtk_writer_free(c.writer);
    free(c.tensors);
    inf_safetensors_close(c.model);
    json_decref(c.config);
    free(c.config_path);
    return status;
}
