/* llama_cpp_kld.c - gguf-eval against llama-perplexity's KL-divergence bases (see
 * llama_cpp_kld.h). */
#include "llama_cpp_kld.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "test.h"

const char *llama_perplexity_bin(void)
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

const char *kld_plain_text(void)
{
    static char path[512];
    snprintf(path, sizeof path, "%s", test_tmpfile("kld_plain_text.txt"));
    if (access(path, R_OK) != 0 &&
        test_run(NULL, "gzip -dc tests/eval/data/licenses.txt.gz | head -c 20000 > '%s'",
                 path) != 0)
        return NULL;
    return path;
}

double gguf_eval_mean_kld(const char *model, const char *base, const char *what)
{
    char *out = NULL;
    int rc = test_run(&out, "%s -m '%s' --kl-divergence-base '%s' --kl-divergence -t 1 --json "
                      "2>/dev/null", test_tool("gguf-eval"), model, base);
    const char *at = rc == 0 && out ? strstr(out, "\"kld\":") : NULL;
    at = at ? strstr(at, "\"value\":") : NULL;
    double kld = at ? atof(at + strlen("\"value\":")) : 1;
    if (!at)
        fprintf(stderr, "    %s: gguf-eval failed (%d): %.300s\n", what, rc, out ? out : "");
    free(out);
    return kld;
}
