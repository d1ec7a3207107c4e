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
#include <unistd.h>

#include "model_test_support.h"
#include "test.h"

/* REF_BIN when it holds llama-perplexity; else skip. */
static const char *ref_bin(void)
{
    const char *bin = getenv("REF_BIN");
    if (!bin || !*bin)
        SKIP("REF_BIN is unset (set it to llama.cpp's build/bin)");
    char tool[1024];
    snprintf(tool, sizeof tool, "%s/llama-perplexity", bin);
    if (access(tool, X_OK) != 0)
        SKIP("REF_BIN has no llama-perplexity");
    return bin;
}

static const char *plain_text(void)
{
    static char path[512];
    snprintf(path, sizeof path, "%s", test_tmpfile("family_text.txt"));
    if (access(path, R_OK) != 0 &&
        test_run(NULL, "gzip -dc tests/eval/data/licenses.txt.gz | head -c 20000 > '%s'",
                 path) != 0)
        return NULL;
    return path;
}

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
 * base llama-perplexity writes for it (4 chunks of 128 tokens, one thread each); 1 on failure. */
static double kld_against_llama_cpp(const char *name, const char *type)
{
    const char *bin = ref_bin(), *text = plain_text();
    const char *f32 = tiny_arch_model(name);
    const char *model = f32 && text ? typed_copy(f32, name, type) : NULL;
    if (!model)
        return 1;
    char base[600];
    snprintf(base, sizeof base, "%s.kld", model);
    char *out = NULL;
    double kld = 1;
    if (test_run(&out, "%s/llama-perplexity -m '%s' -f '%s' -c 128 -b 128 --chunks 4 -t 1 "
                 "--kl-divergence-base '%s' 2>&1", bin, model, text, base) != 0) {
        fprintf(stderr, "    llama-perplexity failed on %s: %.300s\n", name, out ? out : "");
    } else {
        free(out);
        out = NULL;
        const char *at = test_run(&out, "%s -m '%s' --kl-divergence-base '%s' --kl-divergence "
                                  "-t 1 --json 2>/dev/null", test_tool("gguf-eval"), model,
                                  base) == 0 && out ? strstr(out, "\"kld\":") : NULL;
        at = at ? strstr(at, "\"value\":") : NULL;
        if (at)
            kld = atof(at + strlen("\"value\":"));
        else
            fprintf(stderr, "    gguf-eval failed on %s: %.300s\n", name, out ? out : "");
    }
    free(out);
    fprintf(stderr, "    %s %s: mean KLD %.3e\n", name, type, kld);
    return kld;
}

static int kld_below(const char *name, const char *type, double bound)
{
    double kld = kld_against_llama_cpp(name, type);
    return kld < bound && kld > -bound;
}

TEST(test_model_llama_variants_match_llama_perplexity)
{
    CHECK(kld_below("llama", "f32", 1e-6));
    CHECK(kld_below("llama_rope_freqs", "f32", 1e-6));
    CHECK(kld_below("llama_yarn", "f32", 1e-6));
    CHECK(kld_below("llama_fused_qkv", "f32", 1e-6));
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
    CHECK(kld_below("qwen3", "f16", 1e-6));
    CHECK(kld_below("qwen3", "q8_0", 1e-5));
}

TEST(test_model_phi3_matches_llama_perplexity)
{
    /* original context 64: the long LongRoPE factors; 512: the short ones */
    CHECK(kld_below("phi3", "f32", 1e-6));
    CHECK(kld_below("phi3_short", "f32", 1e-6));
    CHECK(kld_below("phi3", "f16", 1e-6));
    CHECK(kld_below("phi3", "q8_0", 1e-5));
}
