/* gguf_summary.c - what a model file holds, computed from its header the way llama.cpp's loader
 * reports it: parameter count, bits per weight, tensor types in use and the file type. */
#include "gguf_internal.h"
#include <ggtk/gguf_util.h>

#include <stdlib.h>
#include <string.h>

typedef struct named_type {
    const char *name;
    ggtk_tensor_type type;
} named_type;

static int compare_names(const void *a, const void *b)
{
    return strcmp(((const named_type *)a)->name, ((const named_type *)b)->name);
}

/* llama.cpp counts tensors per type walking them in name order and keeps the first type to reach
 * a strictly larger count, so ties go to the type met first in that order. */
static ggtk_status dominant_type(const ggtk_file *file, ggtk_tensor_type *out, ggtk_error *err)
{
    int64_t n = ggtk_tensor_count(file);
    *out = GGTK_TENSOR_F32;
    if (n == 0)
        return GGTK_OK;
    named_type *order = malloc((size_t)n * sizeof *order);
    if (!order)
        return ggtk_fail(err, GGTK_ERR_NOMEM, ggtk_path(file), UINT64_MAX,
                         "out of memory sorting %lld tensor names", (long long)n);
    for (int64_t i = 0; i < n; i++) {
        order[i].name = ggtk_tensor(file, i)->name;
        order[i].type = ggtk_tensor(file, i)->type;
    }
    qsort(order, (size_t)n, sizeof *order, compare_names);
    int64_t counts[GGTK_TENSOR_TYPE_COUNT] = {0};
    int64_t best = 0;
    for (int64_t i = 0; i < n; i++) {
        if (++counts[order[i].type] > best) {
            best = counts[order[i].type];
            *out = order[i].type;
        }
    }
    free(order);
    return GGTK_OK;
}

static ggtk_status read_file_type(const ggtk_file *file, ggtk_summary *out, ggtk_error *err)
{
    uint64_t code = 0;
    if (ggtk_get_uint(file, "general.file_type", &code) == GGTK_OK && code <= UINT32_MAX) {
        out->file_type = (uint32_t)code;
        out->file_type_guessed = false;
    } else {
        ggtk_tensor_type dominant;
        ggtk_status status = dominant_type(file, &dominant, err);
        if (status != GGTK_OK)
            return status;
        out->file_type = ggtk_file_type_guess(dominant);
        out->file_type_guessed = true;
    }
    out->file_type_info = ggtk_file_type_info_get(out->file_type);
    return GGTK_OK;
}

static ggtk_status count_tensors(const ggtk_file *file, ggtk_summary *out, ggtk_error *err)
{
    ggtk_type_usage by_type[GGTK_TENSOR_TYPE_COUNT] = {{0}};
    for (int64_t i = 0; i < ggtk_tensor_count(file); i++) {
        const ggtk_tensor_info *t = ggtk_tensor(file, i);
        uint64_t elements = ggtk_tensor_elements(t);
        ggtk_type_usage *u = &by_type[t->type];
        u->tensors++;
        if (__builtin_add_overflow(u->elements, elements, &u->elements) ||
            __builtin_add_overflow(u->bytes, t->size, &u->bytes) ||
            __builtin_add_overflow(out->parameters, elements, &out->parameters) ||
            __builtin_add_overflow(out->tensor_bytes, t->size, &out->tensor_bytes)) {
            char shown[128];
            return ggtk_fail(err, GGTK_ERR_OVERFLOW, ggtk_path(file), t->info_offset,
                             "tensor '%s': total element or byte count exceeds 64 bits",
                             ggtk_escape_cut(shown, sizeof shown, t->name));
        }
    }
    for (int type = 0; type < GGTK_TENSOR_TYPE_COUNT; type++) {
        if (by_type[type].tensors == 0)
            continue;
        by_type[type].type = (ggtk_tensor_type)type;
        out->types[out->n_types++] = by_type[type];
    }
    return GGTK_OK;
}

ggtk_status ggtk_summarize(const ggtk_file *file, ggtk_summary *out, ggtk_error *err)
{
    memset(out, 0, sizeof *out);
    if (ggtk_get_string(file, "general.architecture", &out->architecture) != GGTK_OK)
        out->architecture = NULL;
    ggtk_status status = count_tensors(file, out, err);
    if (status != GGTK_OK)
        return status;
    if (out->parameters > 0)
        out->bits_per_weight = (double)out->tensor_bytes * 8.0 / (double)out->parameters;
    return read_file_type(file, out, err);
}
