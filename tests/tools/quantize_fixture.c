/* quantize_fixture.c - writes the small models described in quantize_fixture.h. */
#include "quantize_fixture.h"

#include <ggtk/inf_quant.h>

#include <math.h>
#include <stdlib.h>
#include <string.h>

typedef struct fixture_tensor {
    const char *name;
    uint32_t n_dims;
    uint64_t ne[2];
    bool matrix; /* takes options->matrix_type */
} fixture_tensor;

static const fixture_tensor tensors[] = {
    {"token_embd.weight", 2, {64, 40}, true},
    {"blk.0.attn_norm.weight", 1, {64, 1}, false},
    {"blk.0.attn_q.weight", 2, {64, 64}, true},
    {"blk.0.attn_q.bias", 1, {64, 1}, false},
    {"blk.0.attn_k.weight", 2, {64, 32}, true},
    {"blk.0.ffn_down.weight", 2, {96, 64}, true},
    {"blk.0.ffn_gate_inp.weight", 2, {64, 4}, false},
    {"blk.0.odd.weight", 2, {48, 8}, false},
    {"output_norm.weight", 1, {64, 1}, false},
    {"output.weight", 2, {64, 40}, true},
};
enum { N_TENSORS = sizeof tensors / sizeof tensors[0] };

static bool skipped(const fixture_tensor *t, const fixture_options *o)
{
    return o->tied && strcmp(t->name, "output.weight") == 0;
}

static ggtk_tensor_type type_of(const fixture_tensor *t, const fixture_options *o)
{
    return t->matrix && o->matrix_type != GGTK_TENSOR_F32 ? o->matrix_type : GGTK_TENSOR_F32;
}

/* Values of tensor `index`: a smooth pattern plus pseudo-random noise, different per tensor. */
static void fill_values(float *x, uint64_t n, unsigned index)
{
    uint32_t state = 0x9E3779B9u * (index + 1);
    for (uint64_t i = 0; i < n; i++) {
        state = state * 1664525u + 1013904223u;
        float noise = (float)(state >> 8) / (float)(1u << 24) - 0.5f;
        x[i] = 0.05f * sinf((float)i * 0.37f + (float)index) + 0.02f * noise;
    }
}

static bool set_metadata(ggtk_writer *w, const fixture_options *o)
{
    static const char *const words[] = {"alpha", "beta", "gamma"};
    static const int32_t numbers[] = {3, 1, 4, 1, 5};
    bool ok = ggtk_writer_set_string(w, "general.architecture", "llama") == GGTK_OK &&
              ggtk_writer_set_string(w, "general.name", "quantize fixture") == GGTK_OK &&
              ggtk_writer_set_u32(w, "general.file_type", 0) == GGTK_OK &&
              ggtk_writer_set_string_array(w, "fixture.words", words, 3) == GGTK_OK &&
              ggtk_writer_set_array(w, "fixture.numbers", GGTK_VALUE_INT32, 5, numbers) == GGTK_OK &&
              ggtk_writer_set_f32(w, "fixture.scale", 0.5f) == GGTK_OK;
    if (ok && o->alignment)
        ok = ggtk_writer_set_u32(w, "general.alignment", o->alignment) == GGTK_OK;
    return ok;
}

static bool write_tensor(ggtk_writer *w, const fixture_tensor *t, unsigned index,
                         const fixture_options *o)
{
    uint64_t n = t->ne[0] * t->ne[1], bytes = 0;
    ggtk_tensor_type type = type_of(t, o);
    float *x = malloc(n * sizeof *x);
    void *data = malloc(n * sizeof(float));
    bool ok = x && data && ggtk_tensor_type_bytes(type, n, &bytes);
    if (ok) {
        fill_values(x, n, index);
        if (o->poison_tensor && strcmp(o->poison_tensor, t->name) == 0)
            x[o->poison_row * (int64_t)t->ne[0] + 3] = o->poison;
        ok = inf_quantize_row(type, x, data, (int64_t)n) &&
             ggtk_writer_write_data(w, data, bytes, NULL) == GGTK_OK;
    }
    free(x);
    free(data);
    return ok;
}

bool fixture_write(const char *path, const fixture_options *o)
{
    ggtk_writer *w = ggtk_writer_new();
    bool ok = w && set_metadata(w, o);
    for (unsigned i = 0; ok && i < N_TENSORS; i++)
        if (!skipped(&tensors[i], o))
            ok = ggtk_writer_add_tensor(w, tensors[i].name, type_of(&tensors[i], o),
                                        tensors[i].n_dims, tensors[i].ne) == GGTK_OK;
    ok = ok && ggtk_writer_begin(w, path, NULL) == GGTK_OK;
    for (unsigned i = 0; ok && i < N_TENSORS; i++)
        if (!skipped(&tensors[i], o))
            ok = write_tensor(w, &tensors[i], i, o);
    ok = ok && ggtk_writer_finish(w, NULL) == GGTK_OK;
    ggtk_writer_free(w);
    return ok;
}

int fixture_tensor_type(const char *path, const char *name)
{
    ggtk_file *f = ggtk_open(path, GGTK_OPEN_METADATA, NULL);
    int64_t index = f ? ggtk_find_tensor(f, name) : -1;
    int type = index >= 0 ? (int)ggtk_tensor(f, index)->type : -1;
    ggtk_close(f);
    return type;
}

int64_t fixture_file_type(const char *path)
{
    ggtk_file *f = ggtk_open(path, GGTK_OPEN_METADATA, NULL);
    int64_t value = -1;
    if (!f || ggtk_get_int(f, "general.file_type", &value) != GGTK_OK)
        value = -1;
    ggtk_close(f);
    return value;
}
