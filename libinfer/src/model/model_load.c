/* model_load.c - opening a GGUF file or split model: its row of the architecture table,
 * hyper-parameters, vocabulary, and the weight tensors the row lists, bound in place to their
 * part's data (zero copy). Every tensor is checked by name against the shape the hyper-parameters
 * imply; tensors the graph would ignore are refused, since they mean a model variant whose
 * numbers would silently be wrong. */
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "model_arch.h"

/* Why a tensor the graph does not use is in the file, when the name tells. */
static const struct {
    const char *fragment;
    const char *reason;
} UNSUPPORTED_TENSORS[] = {
    {"ffn_gate_inp", "mixture-of-experts layers are not supported"},
    {"_exps", "mixture-of-experts layers are not supported"},
};

static int64_t dim_size(const inf_model_hparams *hp, tensor_dim d)
{
    const int64_t q = (int64_t)hp->n_embd_head * hp->n_head;
    const int64_t kv = (int64_t)hp->n_embd_head * hp->n_head_kv;
    switch (d) {
    case DIM_ONE: return 1;
    case DIM_EMBD: return hp->n_embd;
    case DIM_Q: return q;
    case DIM_KV: return kv;
    case DIM_QKV: return q + 2 * kv;
    case DIM_HEAD: return hp->n_embd_head;
    case DIM_FF: return hp->n_ff;
    case DIM_FF2: return 2 * (int64_t)hp->n_ff;
    case DIM_VOCAB: return hp->n_vocab;
    case DIM_ROT_HALF: return hp->n_rot / 2;
    }
    return 0;
}

bool layer_has_fused_qkv(const inf_model *model, const model_layer *layer)
{
    (void)model;
    return layer->wqkv != NULL;
}

bool layer_has_separate_qkv(const inf_model *model, const model_layer *layer)
{
    return !layer_has_fused_qkv(model, layer);
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

/* Bind the tensors of `specs` whose `when` holds, into the slots of `base` (inf_model or
 * model_layer); per-layer names get the "blk.<il>." prefix (il < 0: none). */
static bool bind_list(loader *ld, const tensor_spec *specs, size_t n, void *base, int il)
{
    const inf_model_hparams *hp = &ld->model->hparams;
    const model_layer *layer = il >= 0 ? base : NULL;
    for (size_t i = 0; i < n; i++) {
        const tensor_spec *spec = &specs[i];
        if (spec->when && !spec->when(ld->model, layer))
            continue;
        char name[96];
        if (il >= 0)
            snprintf(name, sizeof name, "blk.%d.%s", il, spec->name);
        else
            snprintf(name, sizeof name, "%s", spec->name);
        inf_tensor **slot = (inf_tensor **)((char *)base + spec->slot);
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
        char reason[128];
        snprintf(reason, sizeof reason, "it is not part of a %s model as its metadata describes it",
                 ld->model->arch->name);
        for (size_t r = 0; r < sizeof UNSUPPORTED_TENSORS / sizeof UNSUPPORTED_TENSORS[0]; r++)
            if (strstr(name, UNSUPPORTED_TENSORS[r].fragment))
                snprintf(reason, sizeof reason, "%s", UNSUPPORTED_TENSORS[r].reason);
        ggtk_error_set(ld->err, GGTK_ERR_UNSUPPORTED, info->info_offset,
                       "%s: unexpected tensor %s: %s", ggtk_path(ggtk_split_part(split, part)),
                       name, reason);
        return false;
    }
    return true;
}

bool model_bind_weights(inf_model *m, ggtk_error *err)
{
    const inf_model_hparams *hp = &m->hparams;
    const model_arch *arch = m->arch;
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
    bool ok = bind_list(&ld, arch->model_tensors, arch->n_model_tensors, m, -1);
    for (uint32_t il = 0; ok && il < hp->n_layer; il++)
        ok = bind_list(&ld, arch->layer_tensors, arch->n_layer_tensors, &m->layers[il], (int)il);
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

/* The table row of general.architecture. */
static const model_arch *find_architecture(const ggtk_file *file, ggtk_error *err)
{
    const char *name = NULL;
    ggtk_status st = ggtk_get_string(file, "general.architecture", &name);
    if (st != GGTK_OK) {
        ggtk_error_set(err, st == GGTK_ERR_NOT_FOUND ? GGTK_ERR_NOT_FOUND : GGTK_ERR_TYPE,
                       model_key_offset(file, "general.architecture"),
                       "%s: %s metadata key general.architecture", ggtk_path(file),
                       st == GGTK_ERR_NOT_FOUND ? "missing" : "non-string");
        return NULL;
    }
    const model_arch *arch = model_arch_find(name);
    if (!arch) {
        char printable[64], names[256];
        ggtk_escape(name, strlen(name), printable, sizeof printable);
        model_arch_names(names, sizeof names);
        ggtk_error_set(err, GGTK_ERR_UNSUPPORTED, model_key_offset(file, "general.architecture"),
                       "%s: unsupported architecture '%s' (supported: %s)", ggtk_path(file),
                       printable, names);
    }
    return arch;
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
    bool ok = (m->arch = find_architecture(m->file, err)) != NULL &&
              model_read_hparams(m, err) &&
              (m->vocab = inf_vocab_new(m->file, err)) != NULL;
    if (ok) {
        m->hparams.n_vocab = (uint32_t)inf_vocab_n_tokens(m->vocab);
        ok = model_bind_weights(m, err) && (!p.use_mlock || lock_weights(m, err));
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
