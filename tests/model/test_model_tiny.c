/* test_model_tiny.c - the Llama forward pass against an independent numpy implementation
 * (tests/model/py/tiny_llama.py) on tiny random models: biases, untied or tied output, linear rope
 * scaling, grouped-query attention, batches split over several graphs, and a continued decode. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <ggtk/inf_model.h>
#include "model_test_support.h"
#include "test.h"

/* Decode n_tokens tokens with the given session shape (in `pieces` decode calls; logits from
 * `first` on in the last one) and have the oracle compare the rows. */
static int oracle_agrees(const char *variant, int32_t n_tokens, int32_t n_batch, ggtk_tensor_type kv,
                         int pieces, int32_t first)
{
    const char *model_path = tiny_model(variant);
    char path[512];
    snprintf(path, sizeof path, "%s", test_tmpfile("logits.f32"));
    if (!model_path || !decode_to_file(model_path, n_tokens, n_batch, kv, pieces, first, path))
        return 0;
    /* F32 everywhere: only summation order differs. An F16 cache rounds K and V to 11 bits. */
    const char *tolerance = kv == GGTK_TENSOR_F32 ? "2e-5" : "3e-3";
    size_t cap = 256 + (size_t)n_tokens * 8;
    char *cmd = malloc(cap);
    inf_token *tokens = malloc((size_t)n_tokens * sizeof *tokens);
    int ok = cmd && tokens;
    if (ok)
        oracle_tokens(tokens, n_tokens);
    int len = ok ? snprintf(cmd, cap, "python3 tests/model/py/tiny_llama.py check '%s' '%s' %s %d",
                            model_path, path, tolerance, first) : 0;
    for (int32_t i = 0; ok && i < n_tokens; i++)
        len += snprintf(cmd + len, cap - (size_t)len, " %d", tokens[i]);
    char *result = NULL;
    ok = ok && test_run(&result, "%s", cmd) == 0;
    if (result)
        fprintf(stderr, "    oracle (%s, %d tokens, kv %s): %s", variant, n_tokens,
                kv == GGTK_TENSOR_F32 ? "f32" : "f16", result);
    free(result);
    free(cmd);
    free(tokens);
    return ok;
}

TEST(test_model_tiny_forward_matches_numpy_oracle)
{
    CHECK(oracle_agrees("default", 20, 64, GGTK_TENSOR_F32, 1, 0));
}

TEST(test_model_tiny_tied_output_without_biases_matches_oracle)
{
    CHECK(oracle_agrees("tied", 20, 64, GGTK_TENSOR_F32, 1, 0));
}

TEST(test_model_tiny_small_batches_and_continued_decodes_match_oracle)
{
    /* n_batch 3 splits every decode into several graphs; 3 decode calls continue the cache. */
    CHECK(oracle_agrees("default", 20, 3, GGTK_TENSOR_F32, 3, 14));
}

TEST(test_model_tiny_f16_cache_stays_close_to_oracle)
{
    CHECK(oracle_agrees("default", 20, 64, GGTK_TENSOR_F16, 1, 0));
}

TEST(test_model_tiny_blocked_attention_matches_oracle)
{
    /* 300 tokens: attention in query blocks of 128 (each reading only the keys it may see),
     * once for all tokens and once for the last layer's outputs from token 200 on, and with a
     * continued decode whose blocks start after cached positions. */
    CHECK(oracle_agrees("default", 300, 512, GGTK_TENSOR_F32, 1, 0));
    CHECK(oracle_agrees("default", 300, 512, GGTK_TENSOR_F32, 1, 200));
    CHECK(oracle_agrees("default", 460, 512, GGTK_TENSOR_F32, 2, 300));
}

TEST(test_model_tiny_reads_hyper_parameters)
{
    const char *path = tiny_model("default");
    CHECK(path != NULL);
    ggtk_error err = {0};
    inf_model *m = inf_model_open(path, NULL, &err);
    CHECK_MSG(m != NULL, "%s", err.message);
    const inf_model_hparams *hp = inf_model_get_hparams(m);
    CHECK(hp->n_layer == 2 && hp->n_embd == 64 && hp->n_head == 4 && hp->n_head_kv == 2);
    CHECK(hp->n_ff == 96 && hp->n_embd_head == 16 && hp->n_rot == 16 && hp->n_ctx_train == 512);
    CHECK(hp->n_vocab == 265 && fabsf(hp->rope_freq_scale - 0.5f) < 1e-7f);
    CHECK(fabsf(hp->rope_freq_base - 10000.0f) < 1e-3f && fabsf(hp->rms_eps - 1e-5f) < 1e-10f);
    inf_model_close(m);
}

TEST(test_session_rejects_bad_decodes)
{
    const char *path = tiny_model("default");
    CHECK(path != NULL);
    ggtk_error err = {0};
    inf_model *m = inf_model_open(path, NULL, &err);
    CHECK(m != NULL);
    inf_session_params sp = {.n_ctx = 8, .n_batch = 8, .n_threads = 1, .kv_type = GGTK_TENSOR_F16};
    inf_session *s = inf_session_new(m, &sp, &err);
    CHECK_MSG(s != NULL, "%s", err.message);
    inf_token bad[2] = {5, 265};
    CHECK(inf_session_decode(s, bad, 2, 0, &err) == GGTK_ERR_INVALID);
    CHECK(err.status == GGTK_ERR_INVALID && strstr(err.message, "outside the vocabulary"));
    CHECK(strstr(err.message, "token 265 at index 1"));
    inf_token ok[8] = {1, 2, 3, 4, 5, 6, 7, 8};
    CHECK(inf_session_decode(s, ok, 6, 6, &err) == GGTK_OK);
    CHECK(inf_session_n_past(s) == 6);
    int32_t rows = -1;
    inf_session_logits(s, &rows);
    CHECK(rows == 0);
    CHECK(inf_session_decode(s, ok, 3, 0, &err) == GGTK_ERR_INVALID);
    CHECK(strstr(err.message, "do not fit"));
    inf_session_reset(s);
    CHECK(inf_session_decode(s, ok, 8, 7, &err) == GGTK_OK);
    inf_session_logits(s, &rows);
    CHECK(rows == 1);
    inf_session_free(s);

    sp.n_ctx = 513; /* above the model's context of 512 */
    CHECK(inf_session_new(m, &sp, &err) == NULL);
    CHECK(err.status == GGTK_ERR_INVALID && strstr(err.message, "trained for 512"));
    sp.n_ctx = 16;
    sp.n_batch = 17;
    CHECK(inf_session_new(m, &sp, &err) == NULL);
    CHECK(strstr(err.message, "batch of 17"));
    inf_model_close(m);
}
