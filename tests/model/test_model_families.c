/* test_model_families.c - every row of the architecture table against an independent numpy
 * forward pass (tests/model/py/tiny_arch.py) on tiny random models: llama with Llama 3.1 rope
 * frequency factors, YaRN scaling and a fused attn_qkv; qwen2 with Q/K/V biases and an output
 * bias; qwen3 with per-head Q/K norms; phi3 with fused projections, partial rotary and LongRoPE
 * factors (long or short by the context). */
#include <stdio.h>
#include <stdlib.h>

#include "model_test_support.h"
#include "test.h"

/* Decode n_tokens (several graphs when n_batch is smaller) and have the oracle compare. */
static int family_matches_oracle(const char *name, int32_t n_tokens, int32_t n_batch,
                                 int32_t first)
{
    const char *model_path = tiny_arch_model(name);
    char logits[512];
    snprintf(logits, sizeof logits, "%s", test_tmpfile("family_logits.f32"));
    if (!model_path || !decode_to_file(model_path, n_tokens, n_batch, GGTK_TENSOR_F32, 1, first,
                                       logits))
        return 0;
    size_t cap = 256 + (size_t)n_tokens * 8;
    char *cmd = malloc(cap);
    inf_token *tokens = malloc((size_t)n_tokens * sizeof *tokens);
    int ok = cmd && tokens;
    if (ok)
        oracle_tokens(tokens, n_tokens);
    /* the session's n_ctx is 512: decode_to_file's */
    int len = ok ? snprintf(cmd, cap, "python3 tests/model/py/tiny_arch.py check '%s' '%s' 2e-5 "
                            "512 %d", model_path, logits, first) : 0;
    for (int32_t i = 0; ok && i < n_tokens; i++)
        len += snprintf(cmd + len, cap - (size_t)len, " %d", tokens[i]);
    char *result = NULL;
    ok = ok && test_run(&result, "%s", cmd) == 0;
    if (result)
        fprintf(stderr, "    oracle (%s, %d tokens): %s", name, n_tokens, result);
    free(result);
    free(cmd);
    free(tokens);
    return ok;
}

TEST(test_model_llama_rope_freqs_match_oracle)
{
    CHECK(family_matches_oracle("llama_rope_freqs", 40, 64, 0));
}

TEST(test_model_llama_yarn_scaling_matches_oracle)
{
    /* 200 positions, past the 64 of the original context the YaRN range refers to */
    CHECK(family_matches_oracle("llama_yarn", 200, 512, 150));
}

TEST(test_model_llama_fused_qkv_matches_oracle)
{
    CHECK(family_matches_oracle("llama_fused_qkv", 30, 64, 0));
}

TEST(test_model_qwen2_matches_oracle)
{
    CHECK(family_matches_oracle("qwen2", 40, 16, 0));
    CHECK(family_matches_oracle("qwen2_output_bias", 20, 64, 5));
}

TEST(test_model_qwen3_matches_oracle)
{
    CHECK(family_matches_oracle("qwen3", 40, 16, 0));
}

TEST(test_model_phi3_matches_oracle)
{
    /* n_ctx 512 > original context 64: the long factors */
    CHECK(family_matches_oracle("phi3", 150, 64, 100));
    /* original context 512, not below the session's: the short factors */
    CHECK(family_matches_oracle("phi3_short", 60, 64, 0));
}
