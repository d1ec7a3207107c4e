/* model_scan.c - see model_scan.h. Rows go through the checked dequantizer of their type into
 * one scratch row, so every type the engine reads is checked the way the engine sees it. */
#include "model_scan.h"

#include <math.h>
#include <stdlib.h>

#include <ggtk/inf_quant.h>

#include "model_internal.h"

/* The first row of the 2-D weight `t` with a non-finite value, or -1 (also for a type the
 * dequantizer does not know). `buf` holds t->ne[0] floats. */
static int64_t first_nonfinite_row(const inf_tensor *t, float *buf)
{
    for (int64_t r = 0; r < t->ne[1]; r++) {
        const char *row = (const char *)t->data + (size_t)r * t->nb[1];
        if (!inf_dequantize_row(t->type, row, buf, t->ne[0]))
            return -1;
        for (int64_t i = 0; i < t->ne[0]; i++)
            if (!isfinite(buf[i]))
                return r;
    }
    return -1;
}

bool model_find_nonfinite_weight(const inf_model *model, const char **name, int64_t *row)
{
    *name = NULL;
    *row = -1;
    int64_t widest = 0;
    for (inf_tensor *t = inf_context_next_tensor(model->weights, NULL); t;
         t = inf_context_next_tensor(model->weights, t))
        widest = t->ne[0] > widest ? t->ne[0] : widest;
    float *buf = malloc((size_t)widest * sizeof *buf);
    if (!buf)
        return false;
    for (inf_tensor *t = inf_context_next_tensor(model->weights, NULL); t && !*name;
         t = inf_context_next_tensor(model->weights, t)) {
        *row = first_nonfinite_row(t, buf);
        if (*row >= 0)
            *name = t->name;
    }
    free(buf);
    return true;
}
