/* test_eval_smollm2.c - gguf-eval on the real model against numbers recorded from llama.cpp's
 * llama-perplexity on the same text (tests/eval/data/licenses.txt.gz, -c 512 -b 512, its default
 * F16 KV cache and flash attention; see docs/eval.md).
 *
 * With float weights both tools compute the same thing up to summation order, so two chunks
 * agree to 0.05%. With quantized weights each rounds activations to 8 bits, which turns tiny
 * differences into different quantization steps; over two chunks that moves the PPL by up to
 * ~1.5% between two correct implementations (llama-perplexity itself moves 1.3% between flash
 * attention on and off), and only the whole text (55 chunks) brings them within 0.05%: that
 * comparison is tests/bench/bench_eval.sh's and docs/eval.md's. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "test.h"

#define TEXT "tests/eval/data/licenses.txt.gz"

/* The final PPL gguf-eval prints for `model` over two chunks, or NAN. */
static double two_chunk_ppl(const char *model)
{
    char *out = NULL;
    double ppl = NAN;
    if (test_run(&out, "%s -m '%s' -f " TEXT " -c 512 -b 512 -t 2 --chunks 2 2>/dev/null",
                 test_tool("gguf-eval"), model) == 0) {
        const char *at = strstr(out, "Final estimate: PPL = ");
        if (at)
            ppl = atof(at + strlen("Final estimate: PPL = "));
    }
    if (isnan(ppl))
        fprintf(stderr, "    gguf-eval output: %s\n", out ? out : "");
    free(out);
    return ppl;
}

TEST(test_eval_smollm2_f32_two_chunks_match_llama_cpp)
{
    const char *q41 = test_model_path();
    if (!q41)
        SKIP("the real model is not fetched (make models)");
    char f32[512];
    snprintf(f32, sizeof f32, "%s", test_tmpfile("smollm2-f32.gguf"));
    CHECK(test_run(NULL, "%s -q --allow-requantize '%s' '%s' f32", test_tool("gguf-quantize"), q41,
                   f32) == 0);
    /* llama-perplexity: [1]16.2628,[2]17.6855, Final estimate: PPL = 17.6855 +/- 2.15... */
    const double llama_cpp = 17.6855;
    double ppl = two_chunk_ppl(f32);
    CHECK_MSG(fabs(ppl / llama_cpp - 1) < 5e-4, "gguf-eval %.4f, llama-perplexity %.4f", ppl,
              llama_cpp);
}

TEST(test_eval_smollm2_q4_1_two_chunks_near_llama_cpp)
{
    const char *q41 = test_model_path();
    if (!q41)
        SKIP("the real model is not fetched (make models)");
    /* llama-perplexity: 17.8938 (flash attention, its default), 17.6529 (-fa off). */
    const double llama_cpp = 17.8938;
    double ppl = two_chunk_ppl(q41);
    CHECK_MSG(fabs(ppl / llama_cpp - 1) < 0.015, "gguf-eval %.4f, llama-perplexity %.4f", ppl,
              llama_cpp);
}
