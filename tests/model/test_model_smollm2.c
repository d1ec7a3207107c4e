/* test_model_smollm2.c - the real model (SmolLM2-135M-Instruct Q4_1): hyper-parameters, tied
 * output, tokenization of the evaluation text as llama.cpp does it (no BOS for this vocabulary),
 * sane logits for a short prompt, and batch splitting that does not change the logits. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <ggtk/inf_eval.h>
#include <ggtk/inf_model.h>
#include "test.h"
#include "text_file.h"

static inf_model *load_real_model(void)
{
    const char *path = test_model_path();
    if (!path)
        SKIP("the real model is not fetched (make models)");
    ggtk_error err = {0};
    inf_model *m = inf_model_open(path, NULL, &err);
    if (!m)
        fprintf(stderr, "    %s\n", err.message);
    return m;
}

TEST(test_smollm2_hyper_parameters_and_tied_output)
{
    inf_model *m = load_real_model();
    CHECK(m != NULL);
    const inf_model_hparams *hp = inf_model_get_hparams(m);
    CHECK(hp->n_layer == 30 && hp->n_embd == 576 && hp->n_ff == 1536 && hp->n_head == 9);
    CHECK(hp->n_head_kv == 3 && hp->n_embd_head == 64 && hp->n_rot == 64);
    CHECK(hp->n_vocab == 49152 && hp->n_ctx_train == 8192);
    CHECK(hp->rope_freq_base == 100000.0f && hp->rope_freq_scale == 1.0f);
    CHECK(fabsf(hp->rms_eps - 1e-5f) < 1e-12f);
    /* llama.cpp prints "model params = 134.52 M"; the file has no output.weight. */
    CHECK(inf_model_n_params(m) == 134515008);
    CHECK(ggtk_find_tensor(inf_model_get_file(m), "output.weight") < 0);
    inf_model_close(m);
}

TEST(test_smollm2_tokenizes_the_evaluation_text_as_llama_cpp)
{
    inf_model *m = load_real_model();
    CHECK(m != NULL);
    char *text;
    size_t len, n = 0;
    ggtk_error read_err;
    CHECK(text_file_read("tests/eval/data/licenses.txt.gz", &text, &len, NULL, 0, &read_err) ==
          GGTK_OK);
    const inf_vocab *vocab = inf_model_get_vocab(m);
    CHECK(!inf_vocab_adds_bos(vocab)); /* add_bos_token = false: no BOS anywhere */
    inf_token *tokens = NULL;
    CHECK(inf_vocab_tokenize(vocab, text, len, INF_TOKENIZE_ADD_SPECIAL, &tokens, &n, NULL) == GGTK_OK);
    /* llama-tokenize -f licenses.txt --ids: 28625 ids starting with these. */
    static const inf_token first[] = {42185, 28807, 35185, 49126, 35696, 45581, 41026, 16997,
                                      13867, 216, 35, 28, 216, 34, 41, 4019};
    CHECK_MSG(n == 28625, "%zu tokens", n);
    CHECK(memcmp(tokens, first, sizeof first) == 0);
    free(tokens);
    free(text);
    inf_model_close(m);
}

TEST(test_smollm2_completes_a_short_prompt_sensibly)
{
    inf_model *m = load_real_model();
    CHECK(m != NULL);
    ggtk_error err = {0};
    inf_session_params sp = inf_session_params_default();
    sp.n_ctx = sp.n_batch = 16;
    sp.n_threads = 2;
    inf_session *s = inf_session_new(m, &sp, &err);
    CHECK_MSG(s != NULL, "%s", err.message);
    static const inf_token prompt[] = {504, 3575, 282, 4649, 314}; /* "The capital of France is" */
    CHECK(inf_session_decode(s, prompt, 5, 0, &err) == GGTK_OK);
    int32_t rows;
    const float *logits = inf_session_logits(s, &rows);
    CHECK(rows == 5);
    const float *last = logits + 4 * 49152;
    int32_t best = 0;
    for (int32_t i = 0; i < 49152; i++) {
        CHECK(isfinite(last[i]));
        best = last[i] > last[best] ? i : best;
    }
    size_t piece_len;
    const char *piece = inf_vocab_token_piece(inf_model_get_vocab(m), best, &piece_len);
    CHECK_MSG(piece_len == 6 && memcmp(piece, " Paris", 6) == 0, "top token %d '%.*s'", best,
              (int)piece_len, piece);
    /* and the model is confident, as a trained model is */
    CHECK(inf_token_nll(last, 49152, best) < 1.5);
    inf_session_free(s);
    inf_model_close(m);
}

TEST(test_smollm2_split_batches_give_the_same_logits)
{
    inf_model *m = load_real_model();
    CHECK(m != NULL);
    ggtk_error err = {0};
    static const inf_token prompt[] = {504, 3575, 282, 4649, 314, 7042, 30, 378};
    float *whole = malloc(8 * 49152 * sizeof *whole);
    CHECK(whole != NULL);
    int32_t batches[2] = {8, 3};
    for (int b = 0; b < 2; b++) {
        inf_session_params sp = inf_session_params_default();
        sp.n_ctx = 8;
        sp.n_batch = batches[b];
        sp.n_threads = 2;
        inf_session *s = inf_session_new(m, &sp, &err);
        CHECK_MSG(s != NULL, "%s", err.message);
        CHECK(inf_session_decode(s, prompt, 8, 4, &err) == GGTK_OK);
        int32_t rows;
        const float *logits = inf_session_logits(s, &rows);
        CHECK(rows == 4);
        if (b == 0) {
            memcpy(whole, logits, 4 * 49152 * sizeof *whole);
        } else {
            float worst = 0;
            for (int i = 0; i < 4 * 49152; i++)
                worst = fmaxf(worst, fabsf(logits[i] - whole[i]));
            /* Each row is computed the same way whatever the batch; only the attention's
             * summation order over positions may differ. */
            CHECK_MSG(worst < 1e-3f, "max difference %g", worst);
        }
        inf_session_free(s);
    }
    free(whole);
    inf_model_close(m);
}
