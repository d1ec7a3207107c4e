/* test_model_family_errors.c - the hyper-parameter keys and tensor rules of the architecture table
 * on broken files, each refused in one line naming the file and the fault: rope scaling keys,
 * the sliding window, rotary dimensions per family, per-head norms, fused projections, rope
 * frequency factors, and tensors a family does not read. The broken files are tiny_arch.py's
 * models edited with libgguf's writer, or its BROKEN models. */
#include <stdio.h>

#include "model_test_support.h"
#include "test.h"

static bool llama_scaling_type_number(ggtk_writer *w)
{
    return ggtk_writer_set_u32(w, "llama.rope.scaling.type", 7) == GGTK_OK;
}
static bool llama_factor_string(ggtk_writer *w)
{
    return ggtk_writer_set_string(w, "llama.rope.scaling.factor", "two") == GGTK_OK;
}
static bool llama_factor_negative(ggtk_writer *w)
{
    return ggtk_writer_set_f32(w, "llama.rope.scaling.factor", -2.0f) == GGTK_OK;
}
static bool llama_attn_factor_zero(ggtk_writer *w)
{
    return ggtk_writer_set_f32(w, "llama.rope.scaling.attn_factor", 0.0f) == GGTK_OK;
}
static bool llama_orig_context_zero(ggtk_writer *w)
{
    return ggtk_writer_set_u32(w, "llama.rope.scaling.original_context_length", 0) == GGTK_OK;
}
static bool llama_longrope(ggtk_writer *w)
{
    return ggtk_writer_set_string(w, "llama.rope.scaling.type", "longrope") == GGTK_OK;
}
static bool llama_partial_rotary(ggtk_writer *w)
{
    return ggtk_writer_set_u32(w, "llama.rope.dimension_count", 8) == GGTK_OK;
}
static bool llama_experts(ggtk_writer *w)
{
    return ggtk_writer_set_u32(w, "llama.expert_count", 8) == GGTK_OK;
}
static bool qwen2_partial_rotary(ggtk_writer *w)
{
    return ggtk_writer_set_u32(w, "qwen2.rope.dimension_count", 8) == GGTK_OK;
}
static bool qwen3_no_q_norm(ggtk_writer *w)
{
    return ggtk_writer_remove_tensor(w, "blk.0.attn_q_norm.weight") == GGTK_OK;
}
static bool phi3_window_string(ggtk_writer *w)
{
    return ggtk_writer_set_string(w, "phi3.attention.sliding_window", "wide") == GGTK_OK;
}
static bool phi3_rotary_above_head(ggtk_writer *w)
{
    return ggtk_writer_set_u32(w, "phi3.rope.dimension_count", 18) == GGTK_OK;
}
static bool phi3_one_kv_head(ggtk_writer *w)
{
    return ggtk_writer_set_u32(w, "phi3.attention.head_count_kv", 1) == GGTK_OK;
}
static bool phi3_ff80(ggtk_writer *w)
{
    return ggtk_writer_set_u32(w, "phi3.feed_forward_length", 80) == GGTK_OK;
}
static bool phi3_no_qkv(ggtk_writer *w)
{
    return ggtk_writer_remove_tensor(w, "blk.0.attn_qkv.weight") == GGTK_OK;
}
static bool arch_gpt2(ggtk_writer *w)
{
    return ggtk_writer_set_string(w, "general.architecture", "gpt2") == GGTK_OK;
}

/* tiny_arch model `model` edited by `edit`, written as `name`. */
static const char *edited(const char *model, const char *name, model_edit_fn edit)
{
    const char *source = tiny_arch_model(model);
    return source ? edited_model(source, name, edit) : NULL;
}

TEST(test_model_refuses_unknown_architecture_listing_the_table)
{
    CHECK(model_load_fails_with(edited("qwen2", "gpt2_arch.gguf", arch_gpt2),
                                "unsupported architecture 'gpt2' (supported: qwen2, qwen3, phi3, "
                                "llama", true));
}

TEST(test_model_refuses_bad_rope_scaling_keys)
{
    CHECK(model_load_fails_with(edited("llama", "type7.gguf", llama_scaling_type_number),
                                "metadata key llama.rope.scaling.type is not a string", true));
    CHECK(model_load_fails_with(edited("llama", "factor_two.gguf", llama_factor_string),
                                "non-numeric metadata key llama.rope.scaling.factor", true));
    CHECK(model_load_fails_with(edited("llama", "factor_neg.gguf", llama_factor_negative),
                                "metadata key llama.rope.scaling.factor is -2, expected a "
                                "non-negative number", true));
    CHECK(model_load_fails_with(edited("llama_yarn", "attn0.gguf", llama_attn_factor_zero),
                                "metadata key llama.rope.scaling.attn_factor is 0, expected a "
                                "positive number", true));
    CHECK(model_load_fails_with(edited("llama_yarn", "orig0.gguf", llama_orig_context_zero),
                                "metadata key llama.rope.scaling.original_context_length is 0, "
                                "expected 1..", true));
}

TEST(test_model_refuses_bad_sliding_window_and_rotary_dimensions)
{
    CHECK(model_load_fails_with(edited("phi3", "window.gguf", phi3_window_string),
                                "metadata key phi3.attention.sliding_window is string, expected a "
                                "non-negative integer", true));
    CHECK(model_load_fails_with(edited("llama", "llama_rot8.gguf", llama_partial_rotary),
                                "rope.dimension_count 8 must equal the head size 16 for llama",
                                true));
    CHECK(model_load_fails_with(edited("qwen2", "qwen2_rot8.gguf", qwen2_partial_rotary),
                                "rope.dimension_count 8 must equal the head size 16 for qwen2",
                                true));
    CHECK(model_load_fails_with(edited("phi3", "phi3_rot18.gguf", phi3_rotary_above_head),
                                "rope.dimension_count 18 must be even and at most the head size 16",
                                true));
    CHECK(model_load_fails_with(edited("llama", "experts.gguf", llama_experts),
                                "mixture-of-experts models (expert_count 8) are not supported",
                                true));
}

TEST(test_model_refuses_missing_or_misshaped_family_tensors)
{
    CHECK(model_load_fails_with(edited("qwen3", "no_q_norm.gguf", qwen3_no_q_norm),
                                "missing tensor blk.0.attn_q_norm.weight (expected shape [16, 1])",
                                true));
    CHECK(model_load_fails_with(tiny_arch_model("qwen3_bad_q_norm"),
                                "tensor blk.1.attn_q_norm.weight has shape [8, 1, 1, 1], expected "
                                "[16, 1]", true));
    CHECK(model_load_fails_with(tiny_arch_model("llama_bad_rope_freqs"),
                                "tensor rope_freqs.weight has shape [16, 1, 1, 1], expected [8, 1]",
                                true));
    CHECK(model_load_fails_with(edited("phi3", "phi3_kv1.gguf", phi3_one_kv_head),
                                "tensor blk.0.attn_qkv.weight has shape [64, 128, 1, 1], expected "
                                "[64, 96]", true));
    CHECK(model_load_fails_with(edited("phi3", "phi3_ff80.gguf", phi3_ff80),
                                "tensor blk.0.ffn_up.weight has shape [64, 192, 1, 1], expected "
                                "[64, 160]", true));
    CHECK(model_load_fails_with(edited("phi3", "phi3_no_qkv.gguf", phi3_no_qkv),
                                "missing tensor blk.0.attn_q.weight (expected shape [64, 64])",
                                true));
}

TEST(test_model_refuses_tensors_the_family_does_not_read)
{
    CHECK(model_load_fails_with(tiny_arch_model("qwen2_rope_freqs"),
                                "unexpected tensor rope_freqs.weight: it is not part of a qwen2 "
                                "model", true));
    CHECK(model_load_fails_with(tiny_arch_model("llama_output_bias"),
                                "unexpected tensor output.bias: it is not part of a llama model",
                                true));
    CHECK(model_load_fails_with(tiny_arch_model("phi3_fused_and_separate"),
                                "unexpected tensor blk.0.attn_q.weight", true));
    CHECK(model_load_fails_with(tiny_arch_model("phi3_ffn_gate"),
                                "unexpected tensor blk.0.ffn_gate.weight", true));
    /* with longrope scaling llama reads LongRoPE's factors, not rope_freqs */
    CHECK(model_load_fails_with(edited("llama_rope_freqs", "longrope.gguf", llama_longrope),
                                "unexpected tensor rope_freqs.weight", true));
}
