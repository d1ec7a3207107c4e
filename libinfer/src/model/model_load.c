/* model_load.c - opening a Llama GGUF file or split model: architecture, hyper-parameters,
 * vocabulary, and the weight tensors bound in place to their part's data (zero copy). Every
 * tensor the graph needs is checked by name against the shape the hyper-parameters imply; tensors
 * the graph would ignore are refused, since they mean a model variant whose numbers would
 * silently be wrong. */
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "model_internal.h"

/* Symbolic sizes of weight dimensions, resolved from the hyper-parameters. */
typedef enum dim { DIM_ONE, DIM_EMBD, DIM_Q, DIM_KV, DIM_FF, DIM_VOCAB } dim;

/* One per-layer weight: "blk.<i>.<name>", stored at `offset` in llama_layer. Vectors have
 * ne1 DIM_ONE and must be F32; matrices may have any type (the session checks the engine can
 * multiply it). */
typedef struct layer_tensor_spec {
    const char *name;
    size_t offset;
    dim ne0, ne1;
    bool optional;
} layer_tensor_spec;

#define LAYER_FIELD(field) offsetof(llama_layer, field)
static const layer_tensor_spec LAYER_TENSORS[] = {
    {"attn_norm.weight", LAYER_FIELD(attn_norm), DIM_EMBD, DIM_ONE, false},
    {"attn_q.weight", LAYER_FIELD(wq), DIM_EMBD, DIM_Q, false},
    {"attn_k.weight", LAYER_FIELD(wk), DIM_EMBD, DIM_KV, false},
    {"attn_v.weight", LAYER_FIELD(wv), DIM_EMBD, DIM_KV, false},
    {"attn_output.weight", LAYER_FIELD(wo), DIM_Q, DIM_EMBD, false},
    {"attn_q.bias", LAYER_FIELD(bq), DIM_Q, DIM_ONE, true},
    {"attn_k.bias", LAYER_FIELD(bk), DIM_KV, DIM_ONE, true},
    {"attn_v.bias", LAYER_FIELD(bv), DIM_KV, DIM_ONE, true},
    {"attn_output.bias", LAYER_FIELD(bo), DIM_EMBD, DIM_ONE, true},
    {"ffn_norm.weight", LAYER_FIELD(ffn_norm), DIM_EMBD, DIM_ONE, false},
    {"ffn_gate.weight", LAYER_FIELD(ffn_gate), DIM_EMBD, DIM_FF, false},
    {"ffn_up.weight", LAYER_FIELD(ffn_up), DIM_EMBD, DIM_FF, false},
    {"ffn_down.weight", LAYER_FIELD(ffn_down), DIM_FF, DIM_EMBD, false},
    {"ffn_gate.bias", LAYER_FIELD(ffn_gate_b), DIM_FF, DIM_ONE, true},
    {"ffn_up.bias", LAYER_FIELD(ffn_up_b), DIM_FF, DIM_ONE, true},
    {"ffn_down.bias", LAYER_FIELD(ffn_down_b), DIM_EMBD, DIM_ONE, true},
};
#define N_LAYER_TENSORS (sizeof LAYER_TENSORS / sizeof LAYER_TENSORS[0])

/* Why a tensor the graph does not use is in the file, when the name tells. */
static const struct {
    const char *fragment;
    const char *reason;
} UNSUPPORTED_TENSORS[] = {
    {"rope_freqs", "Llama 3 rope frequency factors are not supported"},
    {"ffn_gate_inp", "mixture-of-experts layers are not supported"},
    {"_exps", "mixture-of-experts layers are not supported"},
    {"attn_qkv", "fused QKV projections are not supported"},
};

static int64_t dim_size(const inf_model_hparams *hp, dim d)
{
    switch (d) {
    case DIM_ONE: return 1;
    case DIM_EMBD: return hp->n_embd;
    case DIM_Q: return (int64_t)hp->n_embd_head * hp->n_head;
    case DIM_KV: return (int64_t)hp->n_embd_head * hp->n_head_kv;
    case DIM_FF: return hp->n_ff;
    case DIM_VOCAB: return hp->n_vocab;
    }
    return 0;
}

/* Loading state: which file tensors have been taken. */
typedef struct loader {
    inf_model *model;
    bool *used;
    ggtk_error *err;
} loader;

/* Create the weight `name` with shape [ne0, ne1] and bind it to its data in the file. *out is
 * NULL (and true returned) when an optional tensor is absent. */
static bool bind_tensor(loader *ld, const char *name, int64_t ne0, int64_t ne1, bool optional,
                        inf_tensor **out)
{
    inf_model *m = ld->model;
    *out = NULL;
    int64_t index = ggtk_split_find_tensor(m->split, name);
    const char *path = ggtk_path(m->file);
    if (index < 0) {
        if (!optional)
            ggtk_error_set(ld->err, GGTK_ERR_NOT_FOUND, GGTK_NO_OFFSET,
                           "%s: missing tensor %s (expected shape [%lld, %lld])",
                           path, name, (long long)ne0, (long long)ne1);
        return optional;
    }
    int part = 0;
    const ggtk_tensor_info *info = ggtk_split_tensor(m->split, index, &part);
    path = ggtk_path(ggtk_split_part(m->split, part));
    if ((int64_t)info->ne[0] != ne0 || (int64_t)info->ne[1] != ne1 || info->ne[2] != 1 ||
        info->ne[3] != 1) {
        ggtk_error_set(ld->err, GGTK_ERR_INVALID, info->info_offset,
                       "%s: tensor %s has shape [%llu, %llu, %llu, %llu], "
                       "expected [%lld, %lld]", path, name, (unsigned long long)info->ne[0],
                       (unsigned long long)info->ne[1], (unsigned long long)info->ne[2],
                       (unsigned long long)info->ne[3], (long long)ne0, (long long)ne1);
        return false;
    }
    if (ne1 == 1 && info->type != GGTK_TENSOR_F32) {
        const ggtk_tensor_type_info *ti = ggtk_tensor_type_info_get(info->type);
        ggtk_error_set(ld->err, GGTK_ERR_TYPE, info->info_offset,
                       "%s: tensor %s has type %s, expected f32", path, name,
                       ti ? ti->name : "unknown");
        return false;
    }
    int64_t ne[2] = {ne0, ne1};
    inf_tensor *t = inf_tensor_new(m->weights, info->type, 2, ne);
    if (!t) {
        const ggtk_error *cerr = inf_context_error(m->weights);
        ggtk_error_set(ld->err, cerr->status, info->info_offset, "%s: tensor %s: %s", path, name,
                       cerr->message);
        return false;
    }
    if (inf_buffer_bind_tensor(m->weight_buffers[part], t, info->data, NULL) != GGTK_OK) {
        ggtk_error_set(ld->err, GGTK_ERR_LAYOUT, info->info_offset, "%s: tensor %s: %s", path,
                       name, "data outside the file");
        return false;
    }
    inf_tensor_set_name(t, "%s", name);
    ld->used[index] = true;
    m->weight_bytes += info->size;
    m->n_params += ggtk_tensor_elements(info);
    *out = t;
    return true;
}

static bool bind_layer(loader *ld, uint32_t il)
{
    const inf_model_hparams *hp = &ld->model->hparams;
    llama_layer *layer = &ld->model->layers[il];
    for (size_t i = 0; i < N_LAYER_TENSORS; i++) {
        const layer_tensor_spec *spec = &LAYER_TENSORS[i];
        char name[96];
        snprintf(name, sizeof name, "blk.%u.%s", il, spec->name);
        inf_tensor **slot = (inf_tensor **)((char *)layer + spec->offset);
        if (!bind_tensor(ld, name, dim_size(hp, spec->ne0), dim_size(hp, spec->ne1),
                         spec->optional, slot))
            return false;
    }
    return true;
}

/* Refuse a file tensor no slot took, saying why when the name tells. */
static bool check_all_used(const loader *ld)
{
    const ggtk_split *split = ld->model->split;
    for (int64_t i = 0; i < ggtk_split_tensor_count(split); i++) {
        if (ld->used[i])
            continue;
        int part = 0;
        const ggtk_tensor_info *info = ggtk_split_tensor(split, i, &part);
        const char *name = info->name;
        const char *reason = "it is not part of a Llama model";
        for (size_t r = 0; r < sizeof UNSUPPORTED_TENSORS / sizeof UNSUPPORTED_TENSORS[0]; r++)
            if (strstr(name, UNSUPPORTED_TENSORS[r].fragment))
                reason = UNSUPPORTED_TENSORS[r].reason;
        ggtk_error_set(ld->err, GGTK_ERR_UNSUPPORTED, info->info_offset,
                       "%s: unexpected tensor %s: %s", ggtk_path(ggtk_split_part(split, part)),
                       name, reason);
        return false;
    }
    return true;
}

bool llama_bind_weights(inf_model *m, ggtk_error *err)
{
    const inf_model_hparams *hp = &m->hparams;
    int64_t n_tensors = ggtk_split_tensor_count(m->split);
    int n_parts = ggtk_split_part_count(m->split);
    loader ld = {m, calloc((size_t)n_tensors + 1, sizeof(bool)), err};
    m->layers = calloc(hp->n_layer, sizeof *m->layers);
    m->weights = inf_context_new(((size_t)n_tensors + 1) * inf_tensor_overhead(), true);
    m->weight_buffers = calloc((size_t)n_parts, sizeof *m->weight_buffers);
    bool wrapped = m->weight_buffers != NULL;
    for (int p = 0; wrapped && p < n_parts; p++) {
        const ggtk_file *part = ggtk_split_part(m->split, p);
        m->weight_buffers[p] = inf_buffer_wrap((void *)ggtk_data(part), ggtk_data_size(part), true);
        wrapped = m->weight_buffers[p] != NULL;
    }
    if (!ld.used || !m->layers || !m->weights || !wrapped) {
        ggtk_error_set(err, GGTK_ERR_NOMEM, GGTK_NO_OFFSET,
                       "%s: out of memory", ggtk_path(m->file));
        free(ld.used);
        return false;
    }
    bool ok = bind_tensor(&ld, "token_embd.weight", hp->n_embd, hp->n_vocab, false, &m->tok_embd) &&
              bind_tensor(&ld, "output_norm.weight", hp->n_embd, 1, false, &m->output_norm) &&
              bind_tensor(&ld, "output.weight", hp->n_embd, hp->n_vocab, true, &m->output);
    for (uint32_t il = 0; ok && il < hp->n_layer; il++)
        ok = bind_layer(&ld, il);
    ok = ok && check_all_used(&ld);
    if (ok && !m->output)
        m->output = m->tok_embd;
    free(ld.used);
    return ok;
}

/* ---------------------------------------------------------------------------------------------
 * The public loader
 * ------------------------------------------------------------------------------------------- */

inf_model_params inf_model_params_default(void)
{
    inf_model_params p = {.use_mmap = true, .use_mlock = false};
    return p;
}

static bool check_architecture(const ggtk_file *file, ggtk_error *err)
{
    const char *arch = NULL;
    ggtk_status st = ggtk_get_string(file, "general.architecture", &arch);
    if (st != GGTK_OK) {
        ggtk_error_set(err, st == GGTK_ERR_NOT_FOUND ? GGTK_ERR_NOT_FOUND : GGTK_ERR_TYPE,
                       llama_key_offset(file, "general.architecture"),
                       "%s: %s metadata key general.architecture", ggtk_path(file),
                       st == GGTK_ERR_NOT_FOUND ? "missing" : "non-string");
        return false;
    }
    if (strcmp(arch, "llama") != 0) {
        ggtk_error_set(err, GGTK_ERR_UNSUPPORTED, llama_key_offset(file, "general.architecture"),
                       "%s: unsupported architecture '%s' (only 'llama' is supported)",
                       ggtk_path(file), arch);
        return false;
    }
    return true;
}

static void unlock_weights(inf_model *m, int n_parts)
{
    for (int p = 0; p < n_parts; p++) {
        const ggtk_file *part = ggtk_split_part(m->split, p);
        munlock(ggtk_data(part), ggtk_data_size(part));
    }
}

static bool lock_weights(inf_model *m, ggtk_error *err)
{
    for (int p = 0; p < ggtk_split_part_count(m->split); p++) {
        const ggtk_file *part = ggtk_split_part(m->split, p);
        if (mlock(ggtk_data(part), ggtk_data_size(part)) != 0) {
            ggtk_error_set(err, GGTK_ERR_IO, GGTK_NO_OFFSET,
                           "%s: cannot lock %.1f MiB of weights in memory: %s (see ulimit -l)",
                           ggtk_path(part), ggtk_data_size(part) / 1048576.0, strerror(errno));
            unlock_weights(m, p);
            return false;
        }
    }
    m->locked = true;
    return true;
}

inf_model *inf_model_open(const char *path, const inf_model_params *params, ggtk_error *err)
{
    inf_model_params p = params ? *params : inf_model_params_default();
    inf_model *m = calloc(1, sizeof *m);
    if (!m) {
        ggtk_error_set(err, GGTK_ERR_NOMEM, GGTK_NO_OFFSET, "%s: out of memory", path);
        return NULL;
    }
    m->split = ggtk_split_open(path, p.use_mmap ? GGTK_OPEN_MMAP : GGTK_OPEN_READ, err);
    if (!m->split) {
        free(m);
        return NULL;
    }
    m->file = ggtk_split_part(m->split, 0);
    bool ok = check_architecture(m->file, err) &&
              llama_read_hparams(m->file, &m->hparams, err) &&
              (m->vocab = inf_vocab_new(m->file, err)) != NULL;
    if (ok) {
        m->hparams.n_vocab = (uint32_t)inf_vocab_n_tokens(m->vocab);
        ok = llama_bind_weights(m, err) && (!p.use_mlock || lock_weights(m, err));
    }
    if (!ok) {
        inf_model_close(m);
        return NULL;
    }
    return m;
}

void inf_model_close(inf_model *m)
{
    if (!m)
        return;
    if (m->locked)
        unlock_weights(m, ggtk_split_part_count(m->split));
    for (int p = 0; m->weight_buffers && p < ggtk_split_part_count(m->split); p++)
        inf_buffer_free(m->weight_buffers[p]);
    free(m->weight_buffers);
    inf_context_free(m->weights);
    free(m->layers);
    inf_vocab_free(m->vocab);
    ggtk_split_close(m->split);
    free(m);
}

const inf_model_hparams *inf_model_get_hparams(const inf_model *m) { return &m->hparams; }
const inf_vocab *inf_model_get_vocab(const inf_model *m) { return m->vocab; }
const ggtk_file *inf_model_get_file(const inf_model *m) { return m->file; }
uint64_t inf_model_weight_bytes(const inf_model *m) { return m->weight_bytes; }
uint64_t inf_model_n_params(const inf_model *m) { return m->n_params; }
