/* test_eval_kld_compact.c - gguf-eval's compact base files end to end on the tiny model: written
 * by a run and by --kl-divergence-base-convert, read back by a KL-divergence run with the same
 * statistics as the llama-format base gives, and one error line (exit 2) for each option
 * combination that cannot work. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/model_test_support.h"
#include "test.h"

#define TEXT "tests/eval/data/licenses.txt.gz"

/* gguf-eval's stdout for `args` (stderr to a file), or NULL when it failed. */
static char *eval_output(const char *args)
{
    char *out = NULL;
    if (test_run(&out, "%s %s 2>'%s'", test_tool("gguf-eval"), args,
                 test_tmpfile("kld_compact.stderr")) != 0) {
        free(out);
        return NULL;
    }
    return out;
}

/* The number after `label` in `out`, or NAN. */
static double number_after(const char *out, const char *label)
{
    const char *at = out ? strstr(out, label) : NULL;
    return at ? atof(at + strlen(label)) : NAN;
}

TEST(test_eval_compact_base_gives_the_statistics_of_the_llama_base)
{
    char model[512], q_model[512], full[512], compact[512], converted[512], args[2048];
    const char *tiny = tiny_model("default"); /* a static buffer: copied before the next call */
    CHECK(tiny != NULL);
    snprintf(model, sizeof model, "%s", tiny);
    const char *q = tiny_model("q5_0");
    CHECK(q != NULL);
    snprintf(q_model, sizeof q_model, "%s", q);
    snprintf(full, sizeof full, "%s", test_tmpfile("tiny.kld"));
    snprintf(compact, sizeof compact, "%s", test_tmpfile("tiny.ckld"));
    snprintf(converted, sizeof converted, "%s", test_tmpfile("tiny-converted.ckld"));
    const char *formats[2][2] = {{"llama", full}, {"compact", compact}};
    for (int f = 0; f < 2; f++) {
        snprintf(args, sizeof args, "-m '%s' -f " TEXT " -c 32 --chunks 8 --kl-divergence-base "
                 "'%s' --kl-divergence-base-format %s", model, formats[f][1], formats[f][0]);
        char *out = eval_output(args);
        CHECK(out != NULL);
        free(out);
    }
    char convert[1200];
    snprintf(convert, sizeof convert, "--kl-divergence-base-convert '%s' '%s' "
             "--kl-divergence-epsilon 1e-5", full, converted);
    char *out = eval_output(convert);
    CHECK(out && !*out);
    free(out);

    const char *labels[] = {"Mean    KLD:", "Same top p:", "Mean PPL(Q)/PPL(base)         :",
                            "RMS Δp    :", "Mean PPL(base)                :"};
    double llama[5];
    const char *bases[3] = {full, compact, converted};
    for (int b = 0; b < 3; b++) {
        snprintf(args, sizeof args, "-m '%s' --kl-divergence-base '%s' --kl-divergence", q_model,
                 bases[b]);
        out = eval_output(args);
        CHECK_MSG(out != NULL, "base %s", bases[b]);
        for (int l = 0; l < 5; l++) {
            const double v = number_after(out, labels[l]);
            if (b == 0)
                llama[l] = v;
            /* KLD within 1e-4; the rest exact or to the llama rows' 2^-12 step. */
            const double tolerance = l == 0 ? 1e-4 : l == 1 ? 0 : 2e-3;
            CHECK_MSG(isfinite(v) && fabs(v - llama[l]) <= tolerance * (l == 0 ? 1 : llama[l]),
                      "%s %s: %g, llama base %g", bases[b], labels[l], v, llama[l]);
        }
        free(out);
    }
    CHECK_MSG(llama[0] > 1e-3, "mean KLD %g: the test needs a Q that differs", llama[0]);
}

/* gguf-eval `args` must fail with exit 2 and one line containing `needle`. */
static bool usage_fails_with(const char *args, const char *needle)
{
    char *out = NULL, *err = NULL;
    const char *err_path = test_tmpfile("kld_usage.stderr");
    int rc = test_run(&out, "%s %s 2>'%s'", test_tool("gguf-eval"), args, err_path);
    test_run(&err, "cat '%s'", err_path);
    int lines = 0;
    for (const char *p = err; p && *p; p++)
        lines += *p == '\n';
    const bool ok = rc == 2 && err && strstr(err, needle) && lines == 1;
    if (!ok)
        fprintf(stderr, "    gguf-eval %s -> exit %d, '%s' (wanted '%s')\n", args, rc,
                err ? err : "", needle);
    free(out);
    free(err);
    return ok;
}

TEST(test_eval_refuses_compact_options_that_cannot_work)
{
    CHECK(usage_fails_with("-m m.gguf --kl-divergence-base b --kl-divergence "
                           "--kl-divergence-base-format compact",
                           "reading tells it by the file"));
    CHECK(usage_fails_with("-m m.gguf -f t.txt --kl-divergence-base-format compact",
                           "--kl-divergence-base-format chooses the format"));
    CHECK(usage_fails_with("-m m.gguf -f t.txt --kl-divergence-base b --kl-divergence-epsilon 0.1",
                           "need --kl-divergence-base-format compact"));
    CHECK(usage_fails_with("-m m.gguf -f t.txt --kl-divergence-base b --kl-divergence-base-format "
                           "compact --kl-divergence-epsilon 1", "needs a number in [0, 1)"));
    CHECK(usage_fails_with("-m m.gguf -f t.txt --kl-divergence-base b --kl-divergence-base-format "
                           "zip", "must be llama or compact"));
    CHECK(usage_fails_with("--kl-divergence-base-convert a.kld", "needs IN OUT"));
    CHECK(usage_fails_with("--kl-divergence-base-convert a b -m m.gguf",
                           "takes no model, text or other file"));
}

TEST(test_eval_convert_refuses_a_compact_input_in_one_line)
{
    const char *tiny = tiny_model("default");
    CHECK(tiny != NULL);
    char model[512], compact[512], args[2048], *out = NULL, *err = NULL;
    snprintf(model, sizeof model, "%s", tiny);
    snprintf(compact, sizeof compact, "%s", test_tmpfile("convert-in.ckld"));
    snprintf(args, sizeof args, "-m '%s' -f " TEXT " -c 32 --chunks 2 --kl-divergence-base '%s' "
             "--kl-divergence-base-format compact", model, compact);
    out = eval_output(args);
    CHECK(out != NULL);
    free(out);
    const char *err_path = test_tmpfile("convert.stderr");
    int rc = test_run(NULL, "%s --kl-divergence-base-convert '%s' '%s.out' 2>'%s'",
                      test_tool("gguf-eval"), compact, compact, err_path);
    test_run(&err, "cat '%s'", err_path);
    CHECK_MSG(rc == 1 && err && strstr(err, "already a compact base"), "exit %d: %s", rc,
              err ? err : "");
    free(err);
    snprintf(args, sizeof args, "test ! -e '%s.out'", compact);
    CHECK(test_run(NULL, "%s", args) == 0);
}
