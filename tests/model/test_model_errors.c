/* test_model_errors.c - every broken model is refused with one line naming the file and the fault:
 * unknown architecture, missing or mistyped keys, missing or mis-shaped tensors, tensors of
 * unsupported features, a vocabulary without merges, truncation, and weight types the engine
 * cannot multiply. The broken files are copies of a tiny model edited with libgguf's writer. */
#include <stdio.h>
#include <string.h>

#include <ggtk/inf_model.h>
#include "model_test_support.h"
#include "test.h"

static bool set_arch_gpt2(ggtk_writer *w)
{
    return ggtk_writer_set_string(w, "general.architecture", "gpt2") == GGTK_OK;
}
static bool remove_ffn_up(ggtk_writer *w)
{
    return ggtk_writer_remove_tensor(w, "blk.1.ffn_up.weight") == GGTK_OK;
}
static bool shrink_ffn(ggtk_writer *w)
{
    return ggtk_writer_set_u32(w, "llama.feed_forward_length", 80) == GGTK_OK;
}
static bool remove_block_count(ggtk_writer *w)
{
    return ggtk_writer_remove(w, "llama.block_count") == GGTK_OK;
}
static bool string_head_count(ggtk_writer *w)
{
    return ggtk_writer_set_string(w, "llama.attention.head_count", "four") == GGTK_OK;
}
static bool remove_merges(ggtk_writer *w)
{
    return ggtk_writer_remove(w, "tokenizer.ggml.merges") == GGTK_OK;
}
static bool dynamic_scaling(ggtk_writer *w)
{
    return ggtk_writer_set_string(w, "llama.rope.scaling.type", "dynamic") == GGTK_OK;
}
static bool bad_gqa(ggtk_writer *w)
{
    return ggtk_writer_set_u32(w, "llama.attention.head_count_kv", 3) == GGTK_OK;
}
static bool one_kv_head(ggtk_writer *w)
{
    return ggtk_writer_set_u32(w, "llama.attention.head_count_kv", 1) == GGTK_OK;
}

TEST(test_model_refuses_unknown_architecture)
{
    CHECK(model_load_fails_with(edited_model(tiny_model("default"), "gpt2.gguf", set_arch_gpt2),
                          "unsupported architecture 'gpt2'", true));
}

TEST(test_model_refuses_missing_tensor_naming_it_and_its_shape)
{
    CHECK(model_load_fails_with(edited_model(tiny_model("default"), "no_up.gguf", remove_ffn_up),
                          "missing tensor blk.1.ffn_up.weight (expected shape [64, 96])", true));
}

TEST(test_model_refuses_wrong_shape_with_both_shapes)
{
    CHECK(model_load_fails_with(edited_model(tiny_model("default"), "ff80.gguf", shrink_ffn),
                          "tensor blk.0.ffn_gate.weight has shape [64, 96, 1, 1], expected [64, 80]",
                          true));
    CHECK(model_load_fails_with(edited_model(tiny_model("default"), "kv1.gguf", one_kv_head),
                          "tensor blk.0.attn_k.weight has shape [64, 32, 1, 1], expected [64, 16]",
                          true));
}

TEST(test_model_refuses_missing_or_mistyped_keys)
{
    CHECK(model_load_fails_with(edited_model(tiny_model("default"), "no_blocks.gguf", remove_block_count),
                          "missing metadata key llama.block_count", true));
    CHECK(model_load_fails_with(edited_model(tiny_model("default"), "heads.gguf", string_head_count),
                          "llama.attention.head_count is string", true));
    CHECK(model_load_fails_with(edited_model(tiny_model("default"), "gqa.gguf", bad_gqa),
                          "4 attention heads cannot be grouped over 3 key/value heads", true));
    CHECK(model_load_fails_with(edited_model(tiny_model("default"), "dynamic.gguf", dynamic_scaling),
                          "rope scaling 'dynamic' is not supported", true));
}

TEST(test_model_refuses_vocabulary_without_merges)
{
    CHECK(model_load_fails_with(edited_model(tiny_model("default"), "no_merges.gguf", remove_merges),
                          "tokenizer.ggml.merges", true));
}

TEST(test_model_refuses_tensors_of_unsupported_features)
{
    CHECK(model_load_fails_with(tiny_model("moe_router"),
                          "unexpected tensor blk.0.ffn_gate_inp.weight: mixture-of-experts layers "
                          "are not supported", true));
}

TEST(test_model_refuses_truncated_file)
{
    const char *source = tiny_model("default");
    CHECK(source != NULL);
    CHECK(model_load_fails_with(truncated_model(source, "cut.gguf", 200000), "truncated", true));
    CHECK(model_load_fails_with(truncated_model(source, "cut_header.gguf", 1000), "left in the file",
                          true));
}

TEST(test_model_loads_quantized_weights_and_reads_them_from_memory)
{
    /* Q8_0 and Q5_0 (which the engine once refused) both decode. */
    for (int v = 0; v < 2; v++) {
        const char *path = tiny_model(v ? "q5_0" : "q8_0");
        CHECK(path != NULL);
        ggtk_error err = {0};
        inf_model_params mp = {.use_mmap = false, .use_mlock = false};
        inf_model *m = inf_model_open(path, &mp, &err);
        CHECK_MSG(m != NULL, "%s", err.message);
        inf_session_params sp = inf_session_params_default();
        sp.n_ctx = sp.n_batch = 64;
        inf_session *s = inf_session_new(m, &sp, &err);
        CHECK_MSG(s != NULL, "%s", err.message);
        inf_token t[4] = {72, 101, 108, 108};
        CHECK(inf_session_decode(s, t, 4, 3, &err) == GGTK_OK);
        int32_t rows;
        const float *logits = inf_session_logits(s, &rows);
        CHECK(rows == 1);
        for (int i = 0; i < 265; i++)
            CHECK(logits[i] == logits[i]); /* no NaN */
        inf_session_free(s);
        inf_model_close(m);
    }
}
