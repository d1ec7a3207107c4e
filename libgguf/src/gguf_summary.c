/* gguf_summary.c - what a model file holds, computed from its header the way llama.cpp's loader
 * reports it: parameter count, bits per weight, tensor types in use and the file type. */
#include "gguf_internal.h"
#include "gguf_util.h"

#include <stdlib.h>
#include <string.h>

typedef struct named_type {
    const char *name;
    gguf_tensor_type type;
} named_type;

static int compare_names(const void *a, const void *b)
{
    return strcmp(((const named_type *)a)->name, ((const named_type *)b)->name);
}

/* llama.cpp counts tensors per type walking them in name order and keeps the first type to reach
 * a strictly larger count, so ties go to the type met first in that order. */
static gguf_status dominant_type(const gguf_file *file, gguf_tensor_type *out, gguf_error *err)
{
    int64_t n = gguf_tensor_count(file);
    *out = GGUF_TENSOR_F32;
    if (n == 0)
        return GGUF_OK;
    named_type *order = malloc((size_t)n * sizeof *order);
    if (!order)
        return gguf_fail(err, GGUF_ERR_NOMEM, gguf_path(file), UINT64_MAX,
                         "out of memory sorting %lld tensor names", (long long)n);
    for (int64_t i = 0; i < n; i++) {
        order[i].name = gguf_tensor(file, i)->name;
        order[i].type = gguf_tensor(file, i)->type;
    }
    qsort(order, (size_t)n, sizeof *order, compare_names);
    int64_t counts[GGUF_TENSOR_TYPE_COUNT] = {0};
    int64_t best = 0;
    for (int64_t i = 0; i < n; i++) {
        if (++counts[order[i].type] > best) {
            best = counts[order[i].type];
            *out = order[i].type;
        }
    }
    free(order);
    return GGUF_OK;
}

static gguf_status read_file_type(const gguf_file *file, gguf_summary *out, gguf_error *err)
{
    uint64_t code = 0;
    if (gguf_get_uint(file, "general.file_type", &code) == GGUF_OK && code <= UINT32_MAX) {
        out->file_type = (uint32_t)code;
        out->file_type_guessed = false;
    } else {
        gguf_tensor_type dominant;
        gguf_status status = dominant_type(file, &dominant, err);
        if (status != GGUF_OK)
            return status;
        out->file_type = gguf_file_type_guess(dominant);
        out->file_type_guessed = true;
    }
    out->file_type_info = gguf_file_type_info_get(out->file_type);
    return GGUF_OK;
}

static gguf_status count_tensors(const gguf_file *file, gguf_summary *out, gguf_error *err)
{
    gguf_type_usage by_type[GGUF_TENSOR_TYPE_COUNT] = {{0}};
    for (int64_t i = 0; i < gguf_tensor_count(file); i++) {
        const gguf_tensor_info *t = gguf_tensor(file, i);
        uint64_t elements = gguf_tensor_elements(t);
        gguf_type_usage *u = &by_type[t->type];
        u->tensors++;
        if (__builtin_add_overflow(u->elements, elements, &u->elements) ||
            __builtin_add_overflow(u->bytes, t->size, &u->bytes) ||
            __builtin_add_overflow(out->parameters, elements, &out->parameters) ||
            __builtin_add_overflow(out->tensor_bytes, t->size, &out->tensor_bytes))
            return gguf_fail(err, GGUF_ERR_OVERFLOW, gguf_path(file), t->info_offset,
                             "tensor '%s': total element or byte count exceeds 64 bits", t->name);
    }
    for (int type = 0; type < GGUF_TENSOR_TYPE_COUNT; type++) {
        if (by_type[type].tensors == 0)
            continue;
        by_type[type].type = (gguf_tensor_type)type;
        out->types[out->n_types++] = by_type[type];
    }
    return GGUF_OK;
}

gguf_status gguf_summarize(const gguf_file *file, gguf_summary *out, gguf_error *err)
{
    memset(out, 0, sizeof *out);
    if (gguf_get_string(file, "general.architecture", &out->architecture) != GGUF_OK)
        out->architecture = NULL;
    gguf_status status = count_tensors(file, out, err);
    if (status != GGUF_OK)
        return status;
    if (out->parameters > 0)
        out->bits_per_weight = (double)out->tensor_bytes * 8.0 / (double)out->parameters;
    return read_file_type(file, out, err);
}
