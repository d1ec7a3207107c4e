/* test_kld_compact_smollm2.c - the compact base format on the real model: SmolLM2 Q4_1 writes a
 * base in both formats over two chunks of the test text (and the llama one is converted), a
 * Q4_0 copy is compared against each; the mean KL-divergence must agree within 1e-4 and the
 * compact file must be at least 6x smaller (measured 6.6x; docs/eval.md). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "test.h"

#define TEXT "tests/eval/data/licenses.txt.gz"

/* The mean KLD and same-top percentage gguf-eval prints for `model` against `base` (NAN when
 * it failed). */
static void kld_statistics(const char *model, const char *base, double *kld, double *same_top)
{
    char *out = NULL;
    *kld = *same_top = NAN;
    if (test_run(&out, "%s -m '%s' -t 2 --kl-divergence-base '%s' --kl-divergence 2>/dev/null",
                 test_tool("gguf-eval"), model, base) == 0) {
        const char *at = strstr(out, "Mean    KLD:"), *top = strstr(out, "Same top p:");
        if (at && top) {
            *kld = atof(at + strlen("Mean    KLD:"));
            *same_top = atof(top + strlen("Same top p:"));
        }
    }
    if (isnan(*kld))
        fprintf(stderr, "    gguf-eval output: %s\n", out ? out : "");
    free(out);
}

static long long size_of(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 ? (long long)st.st_size : -1;
}

TEST(test_kld_compact_base_smollm2_agrees_with_the_llama_format_and_is_6x_smaller)
{
    const char *q41 = test_model_path();
    if (!q41)
        SKIP("the real model is not fetched (make models)");
    char q40[512], full[512], compact[512], converted[512];
    snprintf(q40, sizeof q40, "%s", test_tmpfile("compact-q4_0.gguf"));
    snprintf(full, sizeof full, "%s", test_tmpfile("base.kld"));
    snprintf(compact, sizeof compact, "%s", test_tmpfile("base.ckld"));
    snprintf(converted, sizeof converted, "%s", test_tmpfile("converted.ckld"));
    char eval[512];
    snprintf(eval, sizeof eval, "%s", test_tool("gguf-eval"));
    CHECK(test_run(NULL, "%s -q --allow-requantize '%s' '%s' q4_0 2>/dev/null",
                   test_tool("gguf-quantize"), q41, q40) == 0);
    CHECK(test_run(NULL, "%s -m '%s' -f " TEXT " --chunks 2 -t 2 --kl-divergence-base '%s' "
                   ">/dev/null 2>&1", eval, q41, full) == 0);
    CHECK(test_run(NULL, "%s -m '%s' -f " TEXT " --chunks 2 -t 2 --kl-divergence-base '%s' "
                   "--kl-divergence-base-format compact >/dev/null 2>&1", eval, q41, compact) == 0);
    CHECK(test_run(NULL, "%s --kl-divergence-base-convert '%s' '%s'", eval, full, converted) == 0);

    double kld_full, kld_compact, kld_converted, top_full, top_compact, top_converted;
    kld_statistics(q40, full, &kld_full, &top_full);
    kld_statistics(q40, compact, &kld_compact, &top_compact);
    kld_statistics(q40, converted, &kld_converted, &top_converted);
    CHECK_MSG(kld_full > 0.1 && fabs(kld_compact - kld_full) < 1e-4 &&
                  fabs(kld_converted - kld_full) < 1e-4,
              "mean KLD: llama %.6f, compact %.6f, converted %.6f", kld_full, kld_compact,
              kld_converted);
    CHECK_MSG(fabs(top_full - top_compact) < 0.2 && fabs(top_full - top_converted) < 0.2,
              "same top p: %.3f %%, compact %.3f %%, converted %.3f %%", top_full, top_compact,
              top_converted);
    const long long bytes_full = size_of(full), bytes_compact = size_of(compact);
    CHECK_MSG(bytes_compact > 0 && bytes_full >= 6 * bytes_compact,
              "llama format %lld bytes, compact %lld (%.2fx)", bytes_full, bytes_compact,
              (double)bytes_full / (double)bytes_compact);
}
