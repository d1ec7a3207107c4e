/* test_model_llama_cpp.c - every architecture against llama.cpp (REF_BIN names its build/bin):
 * llama-perplexity writes a KL-divergence base on a tiny random model of the family
 * (tests/model/py/tiny_arch.py), gguf-eval scores the same model against it. With F32 weights
 * both compute the same maths, so the mean KLD is the base file's 16-bit rounding (about 1e-7 on
 * these models, as llama-perplexity's KLD against its own base); F16 and Q8_0 copies (made by
 * gguf-quantize) differ by the two implementations' activation rounding (llama.cpp rounds
 * activations to F16 for F16 weights; both round them to Q8_0 blocks for Q8_0 weights, where a
 * different summation order may move a value to the next step). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "eval/llama_cpp_kld.h"
#include "model_test_support.h"
#include "test.h"

/* A copy of `model` with `type` weights (gguf-quantize), or the model itself for "f32". */
static const char *typed_copy(const char *model, const char *name, const char *type)
{
    static char path[512];
    if (strcmp(type, "f32") == 0)
        return model;
    char file[96];
    snprintf(file, sizeof file, "arch_%s_%s.gguf", name, type);
    snprintf(path, sizeof path, "%s", test_tmpfile(file));
    return test_run(NULL, "%s -q '%s' '%s' %s", test_tool("gguf-quantize"), model, path, type) == 0
               ? path
               : NULL;
}

/* The mean KLD gguf-eval reports for tiny_arch model `name` in weight type `type` against the
 * base llama-perplexity writes for it (chunks of n_ctx tokens, 512 in all, one thread each); 1 on
 * failure. */
static double kld_against_llama_cpp(const char *name, const char *type, int n_ctx)
{
    const char *bin = llama_perplexity_bin(), *text = kld_plain_text();
    const char *f32 = tiny_arch_model(name);
    const char *model = f32 && text ? typed_copy(f32, name, type) : NULL;
    if (!model)
        return 1;
    char base[600];
    snprintf(base, sizeof base, "%s.kld", model);
    char *out = NULL;
    double kld = 1;
    if (test_run(&out, "%s/llama-perplexity -m '%s' -f '%s' -c %d -b %d --chunks %d -t 1 "
                 "--kl-divergence-base '%s' 2>&1", bin, model, text, n_ctx, n_ctx, 512 / n_ctx,
                 base) != 0)
        fprintf(stderr, "    llama-perplexity failed on %s: %.300s\n", name, out ? out : "");
    else
        kld = gguf_eval_mean_kld(model, base, name);
    free(out);
    fprintf(stderr, "    %s %s, n_ctx %d: mean KLD %.3e\n", name, type, n_ctx, kld);
    return kld;
}

static int kld_below(const char *name, const char *type, double bound)
{
    double kld = kld_against_llama_cpp(name, type, 128);
    return kld < bound && kld > -bound;
}

/* One chunk of 512: the attention runs in query blocks, and positions reach 511. */
static int kld_below_at_512(const char *name, double bound)
{
    double kld = kld_against_llama_cpp(name, "f32", 512);
    return kld < bound && kld > -bound;
}

TEST(test_model_llama_variants_match_llama_perplexity)
{
    CHECK(kld_below("llama", "f32", 1e-6));
    CHECK(kld_below("llama_rope_freqs", "f32", 1e-6));
    CHECK(kld_below("llama_yarn", "f32", 1e-6));
    CHECK(kld_below("llama_fused_qkv", "f32", 1e-6));
    CHECK(kld_below("llama_longrope", "f32", 1e-6));
    CHECK(kld_below("llama_scaling_none", "f32", 1e-6));
    CHECK(kld_below_at_512("llama_yarn", 1e-6));
    CHECK(kld_below("llama", "f16", 1e-6));
    CHECK(kld_below("llama", "q8_0", 1e-5));
}

TEST(test_model_qwen2_matches_llama_perplexity)
{
    CHECK(kld_below("qwen2", "f32", 1e-6));
    CHECK(kld_below("qwen2_output_bias", "f32", 1e-6));
    CHECK(kld_below("qwen2", "f16", 1e-6));
    CHECK(kld_below("qwen2", "q8_0", 1e-5));
}

TEST(test_model_qwen3_matches_llama_perplexity)
{
    CHECK(kld_below("qwen3", "f32", 1e-6));
    CHECK(kld_below("qwen3_wide_heads", "f32", 1e-6));
    CHECK(kld_below_at_512("qwen3_wide_heads", 1e-6));
    CHECK(kld_below("qwen3", "f16", 1e-6));
    CHECK(kld_below("qwen3", "q8_0", 1e-5));
}

TEST(test_model_phi3_matches_llama_perplexity)
{
    /* original context 64: the long LongRoPE factors; 512: the short ones; 200: the long ones,
     * since a context of 128 counts as 256 */
    CHECK(kld_below("phi3", "f32", 1e-6));
    CHECK(kld_below("phi3_short", "f32", 1e-6));
    CHECK(kld_below("phi3_rounded", "f32", 1e-6));
    CHECK(kld_below_at_512("phi3", 1e-6));
    CHECK(kld_below("phi3", "f16", 1e-6));
    CHECK(kld_below("phi3", "q8_0", 1e-5));
}
