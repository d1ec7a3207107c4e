/* Acceptance on the real SmolLM2 model: its F32 GGUF (gguf-quantize) goes to a Hugging Face
 * folder that PyPI safetensors reads back equal to gguf-py's tensors (q/k rows regrouped back),
 * and back to a GGUF with identical metadata (every key and value, tokenizer.* included) and
 * bit-identical tensors, and the same perplexity with gguf-eval (and with REF_BIN, llama.cpp's
 * llama-perplexity) as it is: no key added by a script. A BF16 export in shards comes back as the
 * BF16-rounded weights. Quantizing in the conversion (q8_0, q4_k_m) gives the bytes gguf-quantize gives from
 * the F32 GGUF. Each file is made once. */
#include "test.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static bool run_ok(const char *what, int rc, char *log)
{
    if (rc != 0)
        fprintf(stderr, "    %s failed (%d):\n%s", what, rc, log ? log : "");
    free(log);
    return rc == 0;
}

/* The first line of `command`'s output holding `needle` (malloc'd; NULL when none or it failed). */
static char *output_line(const char *command, const char *model, const char *needle)
{
    char *log = NULL;
    int rc = test_run(&log, command, model);
    const char *hit = rc == 0 && log ? strstr(log, needle) : NULL;
    char *line = hit ? strndup(hit, strcspn(hit, "\n")) : NULL;
    if (!line)
        fprintf(stderr, "    %s: no '%s' (%d):\n%s", command, needle, rc, log ? log : "");
    free(log);
    return line;
}

/* The same perplexity line from `command` (one %s: the model) on both models. */
static bool same_perplexity(const char *command, const char *a, const char *b, const char *needle)
{
    char *pa = output_line(command, a, needle), *pb = output_line(command, b, needle);
    bool same = pa && pb && strcmp(pa, pb) == 0;
    if (pa && pb && !same)
        fprintf(stderr, "    %s vs %s\n", pa, pb);
    free(pa);
    free(pb);
    return same;
}

#define RUN(what, ...)                                                                             \
    do {                                                                                           \
        char *log_ = NULL;                                                                         \
        int rc_ = test_run(&log_, __VA_ARGS__);                                                   \
        CHECK_MSG(run_ok(what, rc_, log_), "%s", what);                                           \
    } while (0)

TEST(test_convert_smollm2_round_trips_and_quantizes_in_one_pass)
{
    const char *model = test_model_path();
    if (!model)
        SKIP("models/SmolLM2-135M-Instruct.Q4_1.gguf missing (make models)");
    if (test_run(NULL, "python3 -c 'import gguf, numpy, safetensors' 2>/dev/null") != 0)
        SKIP("python3 with gguf, numpy and safetensors is needed (tests/requirements.txt)");
    char convert[512], quantize[512]; /* test_tool() returns a static buffer */
    snprintf(convert, sizeof convert, "%s", test_tool("gguf-convert"));
    snprintf(quantize, sizeof quantize, "%s", test_tool("gguf-quantize"));
    const char *py = "python3 tests/convert/py/check_roundtrip.py";
    char f32[512], hf[512], back[512], hf16[512], back16[512];
    snprintf(f32, sizeof f32, "%s", test_tmpfile("smollm2-f32.gguf"));
    snprintf(hf, sizeof hf, "%s", test_tmpfile("smollm2-hf"));
    snprintf(back, sizeof back, "%s", test_tmpfile("smollm2-back.gguf"));
    snprintf(hf16, sizeof hf16, "%s", test_tmpfile("smollm2-hf-bf16"));
    snprintf(back16, sizeof back16, "%s", test_tmpfile("smollm2-back-bf16.gguf"));
    RUN("f32", "%s -q --allow-requantize %s %s f32", quantize, model, f32);
    RUN("--to-hf", "%s --to-hf %s %s", convert, f32, hf);
    RUN("export check", "%s export %s %s", py, f32, hf);
    RUN("back", "%s --outtype f32 --metadata %s/gguf_metadata.json %s %s", convert, hf, hf, back);
    RUN("same", "%s same %s %s", py, f32, back);
    char eval[1024];
    snprintf(eval, sizeof eval, "%s -m %%s -f README.md -c 128 --chunks 2 -t 2 --json",
             test_tool("gguf-eval"));
    CHECK_MSG(same_perplexity(eval, f32, back, "\"ppl\""), "gguf-eval perplexity differs");
    const char *ref = getenv("REF_BIN");
    if (ref && *ref) {
        snprintf(eval, sizeof eval, "%s/llama-perplexity -m %%s -f README.md -c 128 --chunks 2 -t 2 2>&1",
                 ref);
        CHECK_MSG(same_perplexity(eval, f32, back, "Final estimate"), "llama-perplexity differs");
    }

    RUN("--to-hf bf16", "%s --to-hf --outtype bf16 --shard-size 100M %s %s", convert, f32, hf16);
    RUN("shards", "test -f %s/model.safetensors.index.json -a -f %s/model-00003-of-00003.safetensors",
        hf16, hf16);
    RUN("bf16 export check", "%s export --dtype bf16 %s %s", py, f32, hf16);
    RUN("bf16 back", "%s --outtype f32 --metadata %s/gguf_metadata.json %s %s", convert, hf16, hf16,
        back16);
    RUN("bf16 same", "%s same --bf16 %s %s", py, f32, back16);

    static const char *const types[] = {"q8_0", "q4_k_m"};
    for (size_t i = 0; i < sizeof types / sizeof types[0]; i++) {
        char direct[512], requant[512];
        snprintf(direct, sizeof direct, "%s", test_tmpfile("smollm2-direct.gguf"));
        snprintf(requant, sizeof requant, "%s", test_tmpfile("smollm2-quantized.gguf"));
        RUN("convert quantized", "%s --outtype %s --metadata %s/gguf_metadata.json %s %s", convert,
            types[i], hf, hf, direct);
        RUN("gguf-quantize", "%s -q %s %s %s", quantize, f32, requant, types[i]);
        RUN("same quantized", "%s same %s %s", py, requant, direct);
    }
}
