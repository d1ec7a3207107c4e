/* Tests of the model API's contract as a program sees it through the headers: failures come back
 * as a ggtk_error (status, offset, one line naming the file), a NULL err is accepted, and the
 * params-default functions return the documented defaults. */
#include <string.h>

#include <ggtk/inf_eval.h>
#include <ggtk/inf_model.h>
#include <ggtk/inf_quantize_file.h>

#include "test.h"
#include "model_test_support.h"

TEST(test_model_open_of_a_missing_file_is_an_io_error_naming_the_path)
{
    const char *path = test_tmpfile("no_such_model.gguf");
    ggtk_error err;
    CHECK(inf_model_open(path, NULL, &err) == NULL);
    CHECK(err.status == GGTK_ERR_IO && strstr(err.message, path) && !strchr(err.message, '\n'));
    CHECK(inf_model_open(path, NULL, NULL) == NULL); /* no details wanted: no crash */
}

/* A GGUF file that says "llama" and nothing else. */
static const char *bare_llama_file(void)
{
    const char *path = test_tmpfile("bare_llama.gguf");
    ggtk_writer *w = ggtk_writer_new();
    bool ok = w && ggtk_writer_set_string(w, "general.architecture", "llama") == GGTK_OK &&
              ggtk_writer_begin(w, path, NULL) == GGTK_OK && ggtk_writer_finish(w, NULL) == GGTK_OK;
    ggtk_writer_free(w);
    return ok ? path : NULL;
}

TEST(test_model_and_vocab_errors_carry_a_status_and_the_key)
{
    const char *path = bare_llama_file();
    CHECK(path != NULL);
    ggtk_error err;
    CHECK(inf_model_open(path, NULL, &err) == NULL);
    CHECK(err.status == GGTK_ERR_NOT_FOUND && strstr(err.message, "llama.context_length"));
    CHECK(strstr(err.message, path) == err.message);
    ggtk_file *file = ggtk_open(path, GGTK_OPEN_METADATA, NULL);
    CHECK(file != NULL);
    CHECK(inf_vocab_new(file, &err) == NULL);
    CHECK(err.status == GGTK_ERR_NOT_FOUND && strstr(err.message, "tokenizer.ggml.model"));
    CHECK(inf_vocab_new(file, NULL) == NULL);
    ggtk_close(file);
}

static bool set_mistral(ggtk_writer *writer)
{
    return ggtk_writer_set_string(writer, "general.architecture", "mistral") == GGTK_OK;
}

TEST(test_model_errors_about_a_key_give_its_offset)
{
    const char *source = tiny_model("default");
    if (!source)
        SKIP("the tiny model could not be made (Python)");
    const char *path = edited_model(source, "arch_mistral.gguf", set_mistral);
    CHECK(path != NULL);
    ggtk_file *file = ggtk_open(path, GGTK_OPEN_METADATA, NULL);
    CHECK(file != NULL);
    uint64_t arch_offset = ggtk_kv_offset(file, ggtk_find_key(file, "general.architecture"));
    ggtk_close(file);
    ggtk_error err;
    CHECK(inf_model_open(path, NULL, &err) == NULL);
    CHECK(err.status == GGTK_ERR_UNSUPPORTED && strstr(err.message, "unsupported architecture"));
    CHECK(err.offset == arch_offset && arch_offset != GGTK_NO_OFFSET);
}

TEST(test_session_decode_reports_bad_tokens_through_ggtk_error)
{
    const char *path = tiny_model("default");
    if (!path)
        SKIP("the tiny model could not be made (Python)");
    inf_model *m = inf_model_open(path, NULL, NULL);
    CHECK(m != NULL);
    inf_session_params sp = inf_session_params_default();
    sp.n_ctx = 16;
    sp.n_batch = 16;
    sp.n_threads = 1;
    inf_session *s = inf_session_new(m, &sp, NULL);
    CHECK(s != NULL);
    inf_token bad[1] = {-3};
    ggtk_error err;
    CHECK(inf_session_decode(s, bad, 1, 0, &err) == GGTK_ERR_INVALID);
    CHECK(strstr(err.message, "token -3 at index 0") && err.offset == GGTK_NO_OFFSET);
    CHECK(inf_session_decode(s, bad, 1, 0, NULL) == GGTK_ERR_INVALID);
    sp.kv_type = GGTK_TENSOR_Q8_0;
    CHECK(inf_session_new(m, &sp, &err) == NULL && err.status == GGTK_ERR_UNSUPPORTED);
    inf_session_free(s);
    inf_model_close(m);
}

TEST(test_params_default_functions_return_the_documented_defaults)
{
    inf_model_params mp = inf_model_params_default();
    CHECK(mp.use_mmap && !mp.use_mlock);
    inf_session_params sp = inf_session_params_default();
    CHECK(sp.n_ctx == 512 && sp.n_batch == 512 && sp.n_threads == 0);
    CHECK(sp.kv_type == GGTK_TENSOR_F16);
    inf_perplexity_params pp = inf_perplexity_params_default();
    CHECK(pp.n_ctx == 512 && pp.n_chunks == 0 && !pp.kld_base_out && !pp.kld_base_in);
    inf_quantize_options qo = inf_quantize_options_default(GGTK_FILE_TYPE_Q4_K_M);
    CHECK(qo.file_type == GGTK_FILE_TYPE_Q4_K_M && !qo.pure && !qo.no_fallback);
    CHECK(qo.output_type == -1 && qo.embd_type == -1);
    CHECK(!qo.tensor_rules && qo.n_tensor_rules == 0 && !qo.allow_requantize);
    CHECK(qo.n_threads == 0);
}
