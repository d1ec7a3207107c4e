/* test_model_gemma_errors.c - every Gemma hyper-parameter and tensor rule refuses a broken file
 * with one line naming the file and the fault: missing or mistyped soft-caps, a zero window, a
 * bad window pattern or local rope base, missing post-norms and q/k norms, a head size the
 * tensors do not have, gemma3-only tensors in a gemma2 file. The broken files are copies of the
 * tiny models edited with libgguf's writer. */
#include <stdio.h>
#include <string.h>

#include <ggtk/inf_model.h>
#include "gemma_test_support.h"
#include "model_test_support.h"
#include "test.h"

/* Loading (and opening a session) must fail with `needle` in a one-line message naming the
 * file. */
static bool refused_with(const char *path, const char *needle)
{
    if (!path)
        return false;
    ggtk_error err = {0};
    inf_model *m = inf_model_open(path, NULL, &err);
    inf_session *s = NULL;
    if (m) {
        inf_session_params sp = inf_session_params_default();
        sp.n_ctx = sp.n_batch = 64;
        s = inf_session_new(m, &sp, &err);
        inf_session_free(s);
        inf_model_close(m);
    }
    bool ok = !s && strstr(err.message, needle) && !strchr(err.message, '\n') &&
              strstr(err.message, path);
    if (!ok)
        fprintf(stderr, "    %s: '%s' (wanted '%s')\n", path, err.message, needle);
    return ok;
}

static bool zero_attn_softcap(ggtk_writer *w)
{
    return ggtk_writer_set_f32(w, "gemma2.attn_logit_softcapping", 0.0f) == GGTK_OK;
}
static bool string_final_softcap(ggtk_writer *w)
{
    return ggtk_writer_set_string(w, "gemma2.final_logit_softcapping", "30") == GGTK_OK;
}
static bool zero_window(ggtk_writer *w)
{
    return ggtk_writer_set_u32(w, "gemma2.attention.sliding_window", 0) == GGTK_OK;
}
static bool string_pattern(ggtk_writer *w)
{
    return ggtk_writer_set_string(w, "gemma3.attention.sliding_window_pattern", "6") == GGTK_OK;
}
static bool negative_swa_base(ggtk_writer *w)
{
    return ggtk_writer_set_f32(w, "gemma3.rope.freq_base_swa", -5.0f) == GGTK_OK;
}
static bool negative_final_softcap(ggtk_writer *w)
{
    return ggtk_writer_set_f32(w, "gemma3.final_logit_softcapping", -1.0f) == GGTK_OK;
}
static bool no_q_norm(ggtk_writer *w)
{
    return ggtk_writer_remove_tensor(w, "blk.2.attn_q_norm.weight") == GGTK_OK;
}
static bool no_post_ffw_norm(ggtk_writer *w)
{
    return ggtk_writer_remove_tensor(w, "blk.1.post_ffw_norm.weight") == GGTK_OK;
}
static bool no_post_attention_norm(ggtk_writer *w)
{
    return ggtk_writer_remove_tensor(w, "blk.0.post_attention_norm.weight") == GGTK_OK;
}
static bool short_heads(ggtk_writer *w)
{
    return ggtk_writer_set_u32(w, "gemma3.attention.key_length", 16) == GGTK_OK &&
           ggtk_writer_set_u32(w, "gemma3.attention.value_length", 16) == GGTK_OK;
}
static bool relabel_gemma2(ggtk_writer *w)
{
    return ggtk_writer_set_string(w, "general.architecture", "gemma2") == GGTK_OK &&
           ggtk_writer_set_u32(w, "gemma2.context_length", 512) == GGTK_OK &&
           ggtk_writer_set_u32(w, "gemma2.embedding_length", 64) == GGTK_OK &&
           ggtk_writer_set_u32(w, "gemma2.block_count", 6) == GGTK_OK &&
           ggtk_writer_set_u32(w, "gemma2.feed_forward_length", 96) == GGTK_OK &&
           ggtk_writer_set_u32(w, "gemma2.attention.head_count", 4) == GGTK_OK &&
           ggtk_writer_set_u32(w, "gemma2.attention.head_count_kv", 2) == GGTK_OK &&
           ggtk_writer_set_u32(w, "gemma2.attention.key_length", 32) == GGTK_OK &&
           ggtk_writer_set_f32(w, "gemma2.attention.layer_norm_rms_epsilon", 1e-6f) == GGTK_OK;
}
static bool pattern_array(ggtk_writer *w)
{
    const uint8_t per_layer[6] = {1, 1, 1, 1, 1, 0};
    return ggtk_writer_set_array(w, "gemma3.attention.sliding_window_pattern", GGTK_VALUE_BOOL,
                                 6, per_layer) == GGTK_OK;
}

TEST(test_gemma2_refuses_bad_softcaps_and_a_zero_window)
{
    const char *g2 = gemma_model("gemma2");
    CHECK(refused_with(edited_model(g2, "g2_cap0.gguf", zero_attn_softcap),
                       "metadata key gemma2.attn_logit_softcapping is 0, expected a positive "
                       "number"));
    CHECK(refused_with(edited_model(g2, "g2_capstr.gguf", string_final_softcap),
                       "non-numeric metadata key gemma2.final_logit_softcapping"));
    CHECK(refused_with(edited_model(g2, "g2_window0.gguf", zero_window),
                       "gemma2.attention.sliding_window is 0, expected a window of at least 1 "
                       "position"));
}

TEST(test_gemma3_refuses_bad_pattern_local_rope_base_and_final_cap)
{
    const char *g3 = gemma_model("gemma3");
    CHECK(refused_with(edited_model(g3, "g3_pattern.gguf", string_pattern),
                       "metadata key gemma3.attention.sliding_window_pattern is string, expected "
                       "a non-negative integer"));
    CHECK(refused_with(edited_model(g3, "g3_base.gguf", negative_swa_base),
                       "metadata key gemma3.rope.freq_base_swa is -5, expected a positive "
                       "number"));
    CHECK(refused_with(edited_model(g3, "g3_cap.gguf", negative_final_softcap),
                       "metadata key gemma3.final_logit_softcapping is -1, expected 0 (none) or "
                       "a positive number"));
}

TEST(test_gemma_refuses_missing_norms_and_wrong_head_size)
{
    CHECK(refused_with(edited_model(gemma_model("gemma3"), "g3_noqn.gguf", no_q_norm),
                       "missing tensor blk.2.attn_q_norm.weight (expected shape [32, 1])"));
    CHECK(refused_with(edited_model(gemma_model("gemma2"), "g2_noffw.gguf", no_post_ffw_norm),
                       "missing tensor blk.1.post_ffw_norm.weight (expected shape [64, 1])"));
    CHECK(refused_with(edited_model(gemma_model("gemma3"), "g3_noattn.gguf",
                                    no_post_attention_norm),
                       "missing tensor blk.0.post_attention_norm.weight"));
    CHECK(refused_with(edited_model(gemma_model("gemma3"), "g3_head16.gguf", short_heads),
                       "tensor blk.0.attn_q.weight has shape [64, 128, 1, 1], expected [64, 64]"));
}

TEST(test_gemma2_refuses_the_gemma3_q_k_norms)
{
    CHECK(refused_with(edited_model(gemma_model("gemma3"), "g3_as_g2.gguf", relabel_gemma2),
                       "unexpected tensor blk.0.attn_q_norm.weight"));
}

TEST(test_gemma3_ignores_a_per_layer_pattern_array_as_llama_cpp_does)
{
    const char *path = edited_model(gemma_model("gemma3"), "g3_arr.gguf", pattern_array);
    CHECK(path != NULL);
    ggtk_error err = {0};
    inf_model *m = inf_model_open(path, NULL, &err);
    CHECK_MSG(m != NULL, "%s", err.message);
    inf_model_close(m);
}
