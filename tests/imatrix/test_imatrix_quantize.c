/* test_imatrix_quantize.c - the file quantizer with an importance matrix, on a small model made
 * here: each converted tensor with an entry is quantized row by row with its weights (each
 * expert of a 3-D tensor with its own), exactly as inf_quantize_rows_imatrix() quantizes them;
 * the output records the imatrix as llama-quantize does; partly covered entries, missing ones and
 * sizes that do not fit are reported or refused; and gguf-quantize's options around it. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <ggtk/inf_quant.h>
#include <ggtk/inf_quantize_file.h>

#include "imatrix_fixture.h"
#include "test.h"

enum { COLS = 64, ROWS = 4, EXPERTS = 3, EXPERT_ROWS = 2 };

typedef struct model_tensor {
    const char *name;
    uint32_t n_dims;
    uint64_t ne[3];
} model_tensor;

static const model_tensor MODEL[4] = {
    {"token_embd.weight", 2, {COLS, ROWS, 1}},
    {"blk.0.attn_norm.weight", 1, {COLS, 1, 1}},
    {"blk.0.ffn_up.weight", 2, {COLS, ROWS, 1}},
    {"blk.0.ffn_up_exps.weight", 3, {COLS, EXPERT_ROWS, EXPERTS}},
};

static float value(int tensor, uint64_t i)
{
    return sinf(0.37f * (float)i + (float)tensor) * (1.0f + (float)(i % 7));
}

static uint64_t elements(const model_tensor *t) { return t->ne[0] * t->ne[1] * t->ne[2]; }

static bool write_model(const char *path)
{
    ggtk_writer *w = ggtk_writer_new();
    bool ok = w && ggtk_writer_set_string(w, "general.architecture", "llama") == GGTK_OK;
    for (int t = 0; ok && t < 4; t++)
        ok = ggtk_writer_add_tensor(w, MODEL[t].name, GGTK_TENSOR_F32, MODEL[t].n_dims,
                                    MODEL[t].ne) == GGTK_OK;
    ok = ok && ggtk_writer_begin(w, path, NULL) == GGTK_OK;
    for (int t = 0; ok && t < 4; t++)
        for (uint64_t i = 0; ok && i < elements(&MODEL[t]); i++) {
            float v = value(t, i);
            ok = ggtk_writer_write_data(w, &v, sizeof v, NULL) == GGTK_OK;
        }
    ok = ok && ggtk_writer_finish(w, NULL) == GGTK_OK;
    ggtk_writer_free(w);
    return ok;
}

/* The imatrix: ffn_up dense, the experts with expert 1 never reached; `dense_cols` lets a test
 * give the dense entry a wrong size. */
static bool write_imatrix(const char *path, int64_t dense_cols)
{
    inf_imatrix *m = inf_imatrix_new(8, "calibration.txt", NULL);
    float x[COLS];
    bool ok = m != NULL;
    for (int r = 0; ok && r < 8; r++) {
        for (int j = 0; j < COLS; j++)
            x[j] = cosf(0.1f * (float)(j * (r + 1))) * (float)(1 + j % 5);
        ok = inf_imatrix_accumulate(m, "blk.0.ffn_up.weight", 1, 0, x, dense_cols, 1, COLS,
                                    NULL) == GGTK_OK &&
             inf_imatrix_accumulate(m, "blk.0.ffn_up_exps.weight", EXPERTS, r % 2 ? 2 : 0, x,
                                    COLS, 1, COLS, NULL) == GGTK_OK;
    }
    ok = ok && inf_imatrix_write(m, path, INF_IMATRIX_GGUF, NULL) == GGTK_OK;
    inf_imatrix_free(m);
    return ok;
}

static inf_quantize_options q4_0_options(const inf_imatrix *imatrix)
{
    inf_quantize_options o = inf_quantize_options_default(GGTK_FILE_TYPE_Q4_0);
    o.pure = true;
    o.n_threads = 2;
    o.imatrix = imatrix;
    return o;
}

static bool has_warning(const inf_quantize_plan *plan, const char *fragment)
{
    for (int64_t i = 0; i < plan->n_warnings; i++)
        if (strstr(plan->warnings[i], fragment))
            return true;
    return false;
}

/* Tensor t of the output holds its rows quantized with `weights` (matrix e: weights + e*COLS). */
static bool rows_match(const ggtk_file *out, int t, const float *weights)
{
    const ggtk_tensor_info *info = ggtk_tensor(out, ggtk_find_tensor(out, MODEL[t].name));
    const uint64_t row_bytes = COLS / 32 * 18;
    float row[COLS];
    unsigned char expected[COLS / 32 * 18];
    for (uint64_t r = 0; r < info->ne[1] * info->ne[2]; r++) {
        for (int j = 0; j < COLS; j++)
            row[j] = value(t, r * COLS + (uint64_t)j);
        const float *w = weights ? weights + (r / info->ne[1]) * COLS : NULL;
        if (inf_quantize_rows_imatrix(GGTK_TENSOR_Q4_0, row, expected, 1, COLS, w) < 0 ||
            memcmp((const unsigned char *)info->data + r * row_bytes, expected, row_bytes) != 0) {
            fprintf(stderr, "    %s row %llu differs\n", MODEL[t].name, (unsigned long long)r);
            return false;
        }
    }
    return true;
}

TEST(test_imatrix_quantize_uses_each_matrix_weights_and_records_the_imatrix)
{
    char model[512], im_path[512], out_path[512];
    snprintf(model, sizeof model, "%s", test_tmpfile("im-model.gguf"));
    snprintf(im_path, sizeof im_path, "%s", test_tmpfile("im.gguf"));
    snprintf(out_path, sizeof out_path, "%s", test_tmpfile("im-out.gguf"));
    CHECK(write_model(model) && write_imatrix(im_path, COLS));
    inf_imatrix *m = inf_imatrix_read(im_path, NULL);
    CHECK(m);
    inf_quantize_options o = q4_0_options(m);
    ggtk_error err;
    inf_quantize_plan *plan = inf_quantize_plan_new(model, &o, &err);
    CHECK_MSG(plan, "%s", err.message);
    CHECK(plan->n_imatrix_used == 2);
    CHECK(has_warning(plan, "blk.0.ffn_up_exps.weight: the imatrix covers 66.67% of its 3"));
    CHECK(!has_warning(plan, "token_embd")); /* no imatrix has it */
    inf_quantize_tensor_stats stats[4];
    CHECK_MSG(inf_quantize_run(plan, out_path, NULL, stats, &err) == GGTK_OK, "%s", err.message);
    CHECK(!stats[0].imatrix && stats[2].imatrix && stats[3].imatrix);
    CHECK(stats[2].imatrix_fallbacks == 0 && stats[3].imatrix_fallbacks == 0);
    ggtk_file *out = ggtk_open(out_path, GGTK_OPEN_MMAP, NULL);
    CHECK(out);
    float dense[COLS], experts[EXPERTS * COLS];
    inf_imatrix_weights(m, inf_imatrix_find(m, "blk.0.ffn_up.weight"), dense);
    inf_imatrix_weights(m, inf_imatrix_find(m, "blk.0.ffn_up_exps.weight"), experts);
    CHECK(experts[COLS + 1] == 1.0f && experts[2 * COLS + 1] != 1.0f); /* expert 1: equal weights */
    CHECK(rows_match(out, 0, NULL) && rows_match(out, 2, dense) && rows_match(out, 3, experts));
    const char *file = NULL, *dataset = NULL;
    uint64_t entries = 0, chunks = 0;
    CHECK(ggtk_get_string(out, "quantize.imatrix.file", &file) == GGTK_OK &&
          strcmp(file, im_path) == 0);
    CHECK(ggtk_get_string(out, "quantize.imatrix.dataset", &dataset) == GGTK_OK &&
          strcmp(dataset, "calibration.txt") == 0);
    CHECK(ggtk_get_uint(out, "quantize.imatrix.entries_count", &entries) == GGTK_OK &&
          entries == 2);
    CHECK(ggtk_get_uint(out, "quantize.imatrix.chunks_count", &chunks) == GGTK_OK && chunks == 1);
    CHECK(strcmp(ggtk_kv_key(out, ggtk_kv_count(out) - 1), "quantize.imatrix.chunks_count") == 0);
    ggtk_close(out);
    inf_quantize_plan_free(plan);
    inf_imatrix_free(m);
}

TEST(test_imatrix_quantize_refuses_entries_of_another_size)
{
    char model[512], im_path[512];
    snprintf(model, sizeof model, "%s", test_tmpfile("im-model2.gguf"));
    snprintf(im_path, sizeof im_path, "%s", test_tmpfile("im-small.gguf"));
    CHECK(write_model(model) && write_imatrix(im_path, COLS / 2));
    inf_imatrix *m = inf_imatrix_read(im_path, NULL);
    CHECK(m);
    inf_quantize_options o = q4_0_options(m);
    ggtk_error err;
    CHECK(inf_quantize_plan_new(model, &o, &err) == NULL);
    CHECK(err.status == GGTK_ERR_INVALID && strstr(err.message, "blk.0.ffn_up.weight has 32"));
    /* Without the bad entry, the expert tensor still uses its own; ffn_up is warned about. */
    inf_imatrix_filter(m, NULL, 0, (const char *const[]){"ffn_up.weight"}, 1);
    inf_quantize_plan *plan = inf_quantize_plan_new(model, &o, &err);
    CHECK_MSG(plan, "%s", err.message);
    CHECK(plan->n_imatrix_used == 1 && has_warning(plan, "tensor blk.0.ffn_up.weight: no"));
    inf_quantize_plan_free(plan);
    inf_imatrix_free(m);
}

TEST(test_imatrix_quantize_refuses_a_gguf_imatrix_without_metadata)
{
    char model[512], im_path[512];
    snprintf(model, sizeof model, "%s", test_tmpfile("im-model3.gguf"));
    snprintf(im_path, sizeof im_path, "%s", test_tmpfile("im-bare.gguf"));
    CHECK(write_model(model));
    ggtk_writer *w = ggtk_writer_new();
    const float sums[COLS] = {1}, count = 4;
    CHECK(ggtk_writer_add_tensor(w, "blk.0.ffn_up.weight.in_sum2", GGTK_TENSOR_F32, 1,
                                 (const uint64_t[]){COLS}) == GGTK_OK);
    CHECK(ggtk_writer_add_tensor(w, "blk.0.ffn_up.weight.counts", GGTK_TENSOR_F32, 1,
                                 (const uint64_t[]){1}) == GGTK_OK);
    CHECK(ggtk_writer_begin(w, im_path, NULL) == GGTK_OK &&
          ggtk_writer_write_data(w, sums, sizeof sums, NULL) == GGTK_OK &&
          ggtk_writer_write_data(w, &count, sizeof count, NULL) == GGTK_OK &&
          ggtk_writer_finish(w, NULL) == GGTK_OK);
    ggtk_writer_free(w);
    inf_imatrix *m = inf_imatrix_read(im_path, NULL);
    CHECK(m && !inf_imatrix_has_metadata(m));
    inf_quantize_options o = q4_0_options(m);
    ggtk_error err;
    CHECK(inf_quantize_plan_new(model, &o, &err) == NULL);
    CHECK(err.status == GGTK_ERR_INVALID && strstr(err.message, "imatrix.chunk_size"));
    inf_imatrix_free(m);
}

TEST(test_imatrix_filter_keeps_what_llama_quantize_keeps)
{
    inf_imatrix *m = fixture_small_imatrix();
    CHECK(m);
    inf_imatrix_filter(m, (const char *const[]){"attn", "nothing"}, 2, NULL, 0);
    CHECK(inf_imatrix_n_entries(m) == 1 && inf_imatrix_find(m, "blk.0.attn_q.weight"));
    inf_imatrix_filter(m, NULL, 0, (const char *const[]){"blk.0."}, 1);
    CHECK(inf_imatrix_n_entries(m) == 0);
    inf_imatrix_free(m);
}

TEST(test_imatrix_gguf_quantize_options)
{
    char *out = NULL;
    CHECK(test_run(&out, "%s --include-weights a --exclude-weights b in out q4_0 2>&1",
                   test_tool("gguf-quantize")) == 2);
    CHECK(out && strstr(out, "cannot be used together"));
    free(out);
    char model[512];
    snprintf(model, sizeof model, "%s", test_tmpfile("im-model4.gguf"));
    CHECK(write_model(model));
    char absent[512];
    snprintf(absent, sizeof absent, "%s", test_tmpfile("absent.imatrix"));
    out = NULL;
    CHECK(test_run(&out, "%s --imatrix '%s' '%s' '%s' q4_0 2>&1", test_tool("gguf-quantize"),
                   absent, model, test_tmpfile("never.gguf")) == 1);
    CHECK(out && strstr(out, "absent.imatrix: cannot open") && !strstr(out, "\n\n"));
    free(out);
    out = NULL;
    /* OUT must not overwrite the imatrix. */
    CHECK(test_run(&out, "%s --imatrix '%s' '%s' '%s' q4_0 2>&1", test_tool("gguf-quantize"),
                   model, model, model) != 0);
    free(out);
}
