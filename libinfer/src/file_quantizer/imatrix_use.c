/* imatrix_use.c - an importance matrix in a file quantization, used as llama-quantize uses it:
 * every converted tensor whose name has an entry of its size quantizes with that entry's weights
 * (matrix e of a 3-D tensor with the weights of matrix e); a tensor without an entry quantizes
 * without one; a size that differs is an error (token_embd.weight excepted, which llama-quantize
 * quietly quantizes without weights). The output records the imatrix as llama-quantize does. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <ggtk/inf_quant.h>

#include "imatrix_use.h"
#include "quantize_internal.h"

/* llama-quantize copies the file name and the dataset into 128-byte fields. */
enum { KV_STRING_MAX = 127 };

static uint64_t entry_size(const inf_imatrix_entry *e) { return (uint64_t)(e->n_mat * e->n_per_row); }
static uint64_t weights_needed(const ggtk_tensor_info *info) { return info->ne[0] * info->ne[2]; }

static bool is_token_embd(const char *name) { return strcmp(name, "token_embd.weight") == 0; }

/* The tensors no imatrix has an entry for: llama-imatrix collects block weights only. */
static bool never_collected(const char *name)
{
    return is_token_embd(name) || strcmp(name, "output.weight") == 0;
}

/* The entry a converted tensor uses, or NULL. */
static const inf_imatrix_entry *usable_entry(const inf_quantize_plan *plan,
                                             const inf_quantize_plan_tensor *t)
{
    const inf_imatrix *m = plan->options.imatrix;
    if (!m || t->new_type == t->info->type)
        return NULL;
    const inf_imatrix_entry *e = inf_imatrix_find(m, t->info->name);
    return e && entry_size(e) == weights_needed(t->info) ? e : NULL;
}

static ggtk_status check_tensor(inf_quantize_plan *plan, const inf_quantize_plan_tensor *t,
                                ggtk_error *err)
{
    const char *name = t->info->name, *path = inf_imatrix_path(plan->options.imatrix);
    if (t->new_type == t->info->type)
        return GGTK_OK;
    const inf_imatrix_entry *e = inf_imatrix_find(plan->options.imatrix, name);
    if (e && entry_size(e) != weights_needed(t->info) && !is_token_embd(name))
        return ggtk_error_set(err, GGTK_ERR_INVALID, GGTK_NO_OFFSET,
                              "%s: entry %s has %llu weights, the tensor needs %llu (row length "
                              "times matrices): the imatrix belongs to another model", path, name,
                              (unsigned long long)entry_size(e),
                              (unsigned long long)weights_needed(t->info));
    const bool weighted = inf_quant_kernels_get(t->new_type)->from_float_imatrix != NULL;
    if (!e && weighted && !never_collected(name))
        return quantize_plan_warn(plan, err, "tensor %s: no importance weights in %s; quantized "
                           "without them", name, path);
    double coverage = e ? inf_imatrix_coverage(e) : 1.0;
    if (coverage < 1.0)
        return quantize_plan_warn(plan, err, "tensor %s: the imatrix covers %.2f%% of its %lld "
                           "matrices; the others are quantized with equal weights", name,
                           100.0 * coverage, (long long)e->n_mat);
    return GGTK_OK;
}

/* remove, then set: like ggml's setters, a key set again moves to the end. */
static ggtk_status set_string(ggtk_writer *w, const char *key, const char *value)
{
    char cut[KV_STRING_MAX + 1];
    snprintf(cut, sizeof cut, "%s", value);
    ggtk_writer_remove(w, key);
    return ggtk_writer_set_string(w, key, cut);
}

static ggtk_status set_u32(ggtk_writer *w, const char *key, uint32_t value)
{
    ggtk_writer_remove(w, key);
    return ggtk_writer_set_u32(w, key, value);
}

static ggtk_status record_metadata(inf_quantize_plan *plan, ggtk_error *err)
{
    const inf_imatrix *m = plan->options.imatrix;
    ggtk_writer *w = plan->writer;
    ggtk_status st = set_string(w, "quantize.imatrix.file", inf_imatrix_path(m));
    if (st == GGTK_OK && inf_imatrix_n_datasets(m) > 0)
        st = set_string(w, "quantize.imatrix.dataset", inf_imatrix_dataset(m, 0));
    if (st == GGTK_OK)
        st = set_u32(w, "quantize.imatrix.entries_count", (uint32_t)inf_imatrix_n_entries(m));
    if (st == GGTK_OK && inf_imatrix_chunk_count(m) > 0)
        st = set_u32(w, "quantize.imatrix.chunks_count", (uint32_t)inf_imatrix_chunk_count(m));
    if (st != GGTK_OK)
        return ggtk_error_set(err, st, GGTK_NO_OFFSET, "cannot record the imatrix: %s",
                              ggtk_strerror(st));
    plan->file_size_after = ggtk_writer_file_size(w);
    return GGTK_OK;
}

ggtk_status quantize_imatrix_plan(inf_quantize_plan *plan, ggtk_error *err)
{
    const inf_imatrix *m = plan->options.imatrix;
    if (!m)
        return GGTK_OK;
    if (!inf_imatrix_path(m))
        return ggtk_error_set(err, GGTK_ERR_USAGE, GGTK_NO_OFFSET,
                              "the imatrix must be one read from a file (its path is recorded)");
    if (!inf_imatrix_has_metadata(m))
        return ggtk_error_set(err, GGTK_ERR_INVALID, GGTK_NO_OFFSET,
                              "%s: the imatrix lacks imatrix.datasets, imatrix.chunk_count or "
                              "imatrix.chunk_size (llama-quantize refuses it too)",
                              inf_imatrix_path(m));
    ggtk_status st = GGTK_OK;
    for (int64_t i = 0; st == GGTK_OK && i < plan->n_tensors; i++) {
        const inf_quantize_plan_tensor *t = &plan->tensors[i];
        st = check_tensor(plan, t, err);
        plan->n_imatrix_used += st == GGTK_OK && usable_entry(plan, t) != NULL;
    }
    return st == GGTK_OK ? record_metadata(plan, err) : st;
}

bool quantize_imatrix_weights(const inf_quantize_plan *plan, const inf_quantize_plan_tensor *t,
                              float **weights)
{
    *weights = NULL;
    const inf_imatrix_entry *e = usable_entry(plan, t);
    if (!e)
        return true;
    *weights = malloc((size_t)entry_size(e) * sizeof **weights);
    if (!*weights)
        return false;
    inf_imatrix_weights(plan->options.imatrix, e, *weights);
    return true;
}
