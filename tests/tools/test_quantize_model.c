/* Acceptance test of gguf-quantize on the real SmolLM2 model: Q4_1 -> F32 (dequantized, with
 * --allow-requantize), then F32 -> Q8_0 and F32 -> Q4_0 with --pure. Every tensor of every output
 * is compared with PyPI gguf-py (gguf.quants) by tests/tools/py/compare_quantized.py: the data
 * must be identical, and gguf-py must read the files without error. Each file is made once. */
#include "test.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int quantize(const char *flags, const char *in, const char *out, const char *type)
{
    char *log = NULL;
    int rc = test_run(&log, "%s -q %s %s %s %s", test_tool("gguf-quantize"), flags, in, out, type);
    if (rc != 0)
        fprintf(stderr, "    gguf-quantize %s -> %s failed (%d): %s", in, type, rc, log);
    free(log);
    return rc;
}

TEST(test_quantize_smollm2_data_identical_to_gguf_py)
{
    const char *model = test_model_path();
    if (!model)
        SKIP("models/SmolLM2-135M-Instruct.Q4_1.gguf missing (make models)");
    char f32[512], q8[512], q4[512];
    snprintf(f32, sizeof f32, "%s", test_tmpfile("smollm2-f32.gguf"));
    snprintf(q8, sizeof q8, "%s", test_tmpfile("smollm2-q8_0.gguf"));
    snprintf(q4, sizeof q4, "%s", test_tmpfile("smollm2-q4_0.gguf"));
    CHECK(quantize("--allow-requantize", model, f32, "f32") == 0);
    CHECK(quantize("--pure", f32, q8, "q8_0") == 0);
    CHECK(quantize("--pure", f32, q4, "q4_0") == 0);
    char *log = NULL;
    int rc = test_run(&log, "python3 tests/tools/py/compare_quantized.py %s %s f32 0 %s %s q8_0 7 "
                            "%s %s q4_0 2",
                      model, f32, f32, q8, f32, q4);
    fprintf(stderr, "%s", log);
    CHECK(rc == 0);
    /* One summary per output: every weight matrix converted, the 61 norms kept, no problem. */
    CHECK(strstr(log, "smollm2-f32.gguf: 272 tensors compared, types {'F32': 272}, 0 problems"));
    CHECK(strstr(log, "smollm2-q8_0.gguf: 272 tensors compared, types {'Q8_0': 211, 'F32': 61}, "
                      "0 problems"));
    CHECK(strstr(log, "smollm2-q4_0.gguf: 272 tensors compared, types {'Q4_0': 211, 'F32': 61}, "
                      "0 problems"));
    free(log);
    /* One thread writes the same bytes as all of them (batches are split among threads). */
    char q4_one[512];
    snprintf(q4_one, sizeof q4_one, "%s", test_tmpfile("smollm2-q4_0-t1.gguf"));
    CHECK(quantize("--pure -t 1", f32, q4_one, "q4_0") == 0);
    CHECK(test_run(NULL, "cmp -s %s %s", q4, q4_one) == 0);
    unlink(q4_one);
    /* gguf-inspect, where built, must see the new types and file type. */
    if (access(test_tool("gguf-inspect"), X_OK) == 0) {
        CHECK(test_run(&log, "%s %s | tail -12", test_tool("gguf-inspect"), q4) == 0);
        CHECK_MSG(strstr(log, "f32           61") && strstr(log, "q4_0         211") &&
                      strstr(log, "file type        2 MOSTLY_Q4_0"),
                  "%s", log);
        free(log);
    }
    unlink(f32);
    unlink(q8);
    unlink(q4);
}
