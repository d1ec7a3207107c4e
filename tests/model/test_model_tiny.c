/* test_model_tiny.c - the Llama forward pass against an independent numpy implementation
 * (tests/model/py/tiny_llama.py) on tiny random models: biases, untied or tied output, linear rope
 * scaling, grouped-query attention, batches split over several graphs, and a continued decode. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "inf_model.h"
#include "model_test_support.h"
#include "test.h"

static const inf_token TOKENS[] = {72, 101, 108, 108, 111, 262, 44, 32, 119, 111, 114, 108, 100,
                                   33, 10, 84, 104, 101, 32, 99};
#define N_TOKENS ((int32_t)(sizeof TOKENS / sizeof TOKENS[0]))

/* Decode TOKENS with the given session shape (in `pieces` decode calls) and have the oracle
 * compare every row of logits. */
static int oracle_agrees(const char *variant, int32_t n_batch, gguf_tensor_type kv, int pieces)
{
    const char *model_path = tiny_model(variant);
    if (!model_path)
        return 0;
    char err[512];
    inf_model *model = inf_model_load(model_path, NULL, err, sizeof err);
    if (!model) {
        fprintf(stderr, "    %s\n", err);
        return 0;
    }
    inf_session_params sp = {.n_ctx = 64, .n_batch = n_batch, .n_threads = 2, .kv_type = kv};
    inf_session *s = inf_session_new(model, &sp, err, sizeof err);
    int32_t n_vocab = (int32_t)inf_model_get_hparams(model)->n_vocab;
    float *all = malloc((size_t)N_TOKENS * n_vocab * sizeof *all);
    int ok = s && all;
    int32_t done = 0;
    for (int p = 0; ok && p < pieces; p++) {
        int32_t n = p + 1 < pieces ? N_TOKENS / pieces : N_TOKENS - done;
        int32_t rows = 0;
        ok = inf_session_decode(s, TOKENS + done, n, 0) == INF_OK;
        const float *logits = ok ? inf_session_logits(s, &rows) : NULL;
        ok = ok && rows == n;
        if (ok)
            memcpy(all + (size_t)done * n_vocab, logits, (size_t)n * n_vocab * sizeof *all);
        done += n;
    }
    if (!ok)
        fprintf(stderr, "    decode failed: %s\n", s ? inf_session_error(s) : err);
    char path[512], cmd[2048];
    snprintf(path, sizeof path, "%s", test_tmpfile("logits.f32"));
    FILE *f = fopen(path, "wb");
    ok = ok && f && fwrite(all, sizeof *all, (size_t)N_TOKENS * n_vocab, f) ==
                        (size_t)N_TOKENS * n_vocab;
    if (f)
        fclose(f);
    /* F32 everywhere: only summation order differs. An F16 cache rounds K and V to 11 bits. */
    const char *tolerance = kv == GGUF_TENSOR_F32 ? "2e-5" : "3e-3";
    int len = snprintf(cmd, sizeof cmd, "python3 tests/model/py/tiny_llama.py check '%s' '%s' %s",
                       model_path, path, tolerance);
    for (int i = 0; i < N_TOKENS; i++)
        len += snprintf(cmd + len, sizeof cmd - (size_t)len, " %d", TOKENS[i]);
    char *out = NULL;
    ok = ok && test_run(&out, "%s", cmd) == 0;
    if (out)
        fprintf(stderr, "    oracle (%s, kv %s): %s", variant, kv == GGUF_TENSOR_F32 ? "f32" : "f16",
                out);
    free(out);
    free(all);
    inf_session_free(s);
    inf_model_free(model);
    return ok;
}

TEST(test_model_tiny_forward_matches_numpy_oracle)
{
    CHECK(oracle_agrees("default", 64, GGUF_TENSOR_F32, 1));
}

TEST(test_model_tiny_tied_output_without_biases_matches_oracle)
{
    CHECK(oracle_agrees("tied", 64, GGUF_TENSOR_F32, 1));
}

TEST(test_model_tiny_small_batches_and_continued_decodes_match_oracle)
{
    /* n_batch 3 splits every decode into several graphs; 3 decode calls continue the cache. */
    CHECK(oracle_agrees("default", 3, GGUF_TENSOR_F32, 3));
}

TEST(test_model_tiny_f16_cache_stays_close_to_oracle)
{
    CHECK(oracle_agrees("default", 64, GGUF_TENSOR_F16, 1));
}

TEST(test_model_tiny_reads_hyper_parameters)
{
    const char *path = tiny_model("default");
    CHECK(path != NULL);
    char err[512];
    inf_model *m = inf_model_load(path, NULL, err, sizeof err);
    CHECK_MSG(m != NULL, "%s", err);
    const inf_model_hparams *hp = inf_model_get_hparams(m);
    CHECK(hp->n_layer == 2 && hp->n_embd == 64 && hp->n_head == 4 && hp->n_head_kv == 2);
    CHECK(hp->n_ff == 96 && hp->n_embd_head == 16 && hp->n_rot == 16 && hp->n_ctx_train == 128);
    CHECK(hp->n_vocab == 265 && fabsf(hp->rope_freq_scale - 0.5f) < 1e-7f);
    CHECK(fabsf(hp->rope_freq_base - 10000.0f) < 1e-3f && fabsf(hp->rms_eps - 1e-5f) < 1e-10f);
    inf_model_free(m);
}

TEST(test_session_rejects_bad_decodes)
{
    const char *path = tiny_model("default");
    CHECK(path != NULL);
    char err[512];
    inf_model *m = inf_model_load(path, NULL, err, sizeof err);
    CHECK(m != NULL);
    inf_session_params sp = {.n_ctx = 8, .n_batch = 8, .n_threads = 1, .kv_type = GGUF_TENSOR_F16};
    inf_session *s = inf_session_new(m, &sp, err, sizeof err);
    CHECK_MSG(s != NULL, "%s", err);
    inf_token bad[2] = {5, 265};
    CHECK(inf_session_decode(s, bad, 2, 0) == INF_ERR_INVALID);
    CHECK(strstr(inf_session_error(s), "outside the vocabulary"));
    inf_token ok[8] = {1, 2, 3, 4, 5, 6, 7, 8};
    CHECK(inf_session_decode(s, ok, 6, 6) == INF_OK);
    CHECK(inf_session_n_past(s) == 6);
    int32_t rows = -1;
    inf_session_logits(s, &rows);
    CHECK(rows == 0);
    CHECK(inf_session_decode(s, ok, 3, 0) == INF_ERR_INVALID);
    CHECK(strstr(inf_session_error(s), "do not fit"));
    inf_session_reset(s);
    CHECK(inf_session_decode(s, ok, 8, 7) == INF_OK);
    inf_session_logits(s, &rows);
    CHECK(rows == 1);
    inf_session_free(s);

    sp.n_ctx = 129; /* above the model's context of 128 */
    CHECK(inf_session_new(m, &sp, err, sizeof err) == NULL);
    CHECK(strstr(err, "trained for 128"));
    sp.n_ctx = 16;
    sp.n_batch = 17;
    CHECK(inf_session_new(m, &sp, err, sizeof err) == NULL);
    CHECK(strstr(err, "batch of 17"));
    inf_model_free(m);
}
