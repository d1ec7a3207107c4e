/* test_imatrix_smollm2.c - gguf-eval --imatrix-out on the real model (skipped without it): every
 * weight llama-imatrix collects gets an entry with one count per token, the perplexity printed is
 * the one of a run without it, and the legacy format and the periodic copies are written. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <ggtk/inf_imatrix.h>

#include "test.h"

#define TEXT "tests/eval/data/licenses.txt.gz"

static const char *const WEIGHTS[7] = {"attn_q", "attn_k", "attn_v", "attn_output",
                                       "ffn_gate", "ffn_up", "ffn_down"};

/* Run gguf-eval on 2 chunks of 128 tokens with `extra` options; its stdout+stderr in *out. */
static int eval(char **out, const char *extra)
{
    return test_run(out, "%s -m '%s' -f " TEXT " -c 128 -b 128 -t 2 --chunks 2 %s 2>&1",
                    test_tool("gguf-eval"), test_model_path(), extra);
}

static double final_ppl(const char *out)
{
    const char *at = out ? strstr(out, "Final estimate: PPL = ") : NULL;
    return at ? atof(at + strlen("Final estimate: PPL = ")) : NAN;
}

TEST(test_imatrix_gguf_eval_collects_every_smollm2_weight)
{
    if (!test_model_path())
        SKIP("the real model is not fetched (make models)");
    char path[512], opts[1024];
    snprintf(path, sizeof path, "%s", test_tmpfile("smollm2.imatrix.gguf"));
    snprintf(opts, sizeof opts, "--imatrix-out '%s' --save-frequency 1", path);
    char *with = NULL, *without = NULL;
    CHECK(eval(&with, opts) == 0);
    CHECK(eval(&without, "") == 0);
    double a = final_ppl(with), b = final_ppl(without);
    free(with);
    free(without);
    /* All positions' logits are computed while collecting; the scored ones are the same. */
    CHECK_MSG(fabs(a / b - 1) < 1e-5, "PPL %.6f with the imatrix, %.6f without", a, b);
    ggtk_error err;
    inf_imatrix *m = inf_imatrix_read(path, &err);
    CHECK_MSG(m, "%s", err.message);
    CHECK(inf_imatrix_n_entries(m) == 30 * 7);
    CHECK(inf_imatrix_chunk_count(m) == 2 && inf_imatrix_chunk_size(m) == 128);
    CHECK(inf_imatrix_n_datasets(m) == 1 && strcmp(inf_imatrix_dataset(m, 0), TEXT) == 0);
    for (int layer = 0; layer < 30; layer++) {
        for (int w = 0; w < 7; w++) {
            char name[64];
            snprintf(name, sizeof name, "blk.%d.%s.weight", layer, WEIGHTS[w]);
            const inf_imatrix_entry *e = inf_imatrix_find(m, name);
            CHECK_MSG(e, "no entry %s", name);
            CHECK(e->n_mat == 1 && e->counts[0] == 256);
            CHECK(e->n_per_row == (w == 6 ? 1536 : 576));
            for (int64_t j = 0; j < e->n_per_row; j++)
                CHECK(isfinite(e->values[j]) && e->values[j] >= 0);
        }
    }
    inf_imatrix_free(m);
    for (int k = 1; k <= 2; k++) {
        char copy[600];
        snprintf(copy, sizeof copy, "%s.at_%d", path, k);
        CHECK_MSG(access(copy, F_OK) == 0, "no %s", copy);
    }
}

TEST(test_imatrix_gguf_eval_writes_the_legacy_format)
{
    if (!test_model_path())
        SKIP("the real model is not fetched (make models)");
    char path[512], opts[1024];
    snprintf(path, sizeof path, "%s", test_tmpfile("smollm2.imatrix.dat"));
    snprintf(opts, sizeof opts, "--imatrix-out '%s' --imatrix-format dat", path);
    CHECK(eval(NULL, opts) == 0);
    inf_imatrix *m = inf_imatrix_read(path, NULL);
    CHECK(m && inf_imatrix_get_format(m) == INF_IMATRIX_LEGACY);
    const inf_imatrix_entry *e = inf_imatrix_find(m, "blk.7.ffn_down.weight");
    CHECK(inf_imatrix_n_entries(m) == 210 && e && e->counts[0] == 2 && e->n_per_row == 1536);
    CHECK(inf_imatrix_chunk_count(m) == 2 && strcmp(inf_imatrix_dataset(m, 0), TEXT) == 0);
    inf_imatrix_free(m);
}

TEST(test_imatrix_gguf_eval_refuses_bad_imatrix_options)
{
    char *out = NULL;
    CHECK(test_run(&out, "%s -m x.gguf -f x.txt --imatrix-format dat 2>&1",
                   test_tool("gguf-eval")) == 2);
    CHECK(out && strstr(out, "--imatrix-format needs --imatrix-out"));
    free(out);
    out = NULL;
    CHECK(test_run(&out, "%s -m x.gguf -f x.txt --imatrix-out y --imatrix-format old 2>&1",
                   test_tool("gguf-eval")) == 2);
    CHECK(out && strstr(out, "gguf or dat"));
    free(out);
}

/* Batches under 16 tokens are skipped, as by llama-imatrix: nothing collected is an error, and
 * no file is written. */
TEST(test_imatrix_gguf_eval_with_tiny_batches_collects_nothing)
{
    if (!test_model_path())
        SKIP("the real model is not fetched (make models)");
    char path[512];
    snprintf(path, sizeof path, "%s", test_tmpfile("tiny-batches.gguf"));
    char *out = NULL;
    int rc = test_run(&out, "%s -m '%s' -f " TEXT " -c 64 -b 8 -t 2 --chunks 2 --imatrix-out '%s' "
                      "2>&1", test_tool("gguf-eval"), test_model_path(), path);
    CHECK(rc == 1 && out && strstr(out, "nothing was collected"));
    free(out);
    CHECK(access(path, F_OK) != 0);
}
