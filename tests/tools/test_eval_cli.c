/* test_eval_cli.c - gguf-eval end to end on tiny models: llama-perplexity's output format, the
 * method itself against the numpy oracle, JSON, plot, KL-divergence base files, and one clear
 * error line (exit 1, or 2 for usage) for every bad input. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "model/model_test_support.h"
#include "test.h"

#define TEXT "tests/eval/data/licenses.txt.gz"

/* Run gguf-eval with `args`; stdout and stderr are kept apart in *out and *err. */
static int eval(char **out, char **err, const char *args)
{
    char err_path[512];
    snprintf(err_path, sizeof err_path, "%s", test_tmpfile("eval.stderr"));
    int rc = test_run(out, "%s %s 2>'%s'", test_tool("gguf-eval"), args, err_path);
    if (err)
        test_run(err, "cat '%s'", err_path);
    return rc;
}

/* gguf-eval must fail with exit code `code` and print exactly one line containing `needle`. */
static int eval_fails_with(int code, const char *needle, const char *fmt, const char *a,
                           const char *b)
{
    char args[2048];
    snprintf(args, sizeof args, fmt, a ? a : "", b ? b : "");
    char *out = NULL, *err = NULL;
    int rc = eval(&out, &err, args);
    int lines = 0;
    for (const char *p = err; p && *p; p++)
        lines += *p == '\n';
    int ok = rc == code && err && strstr(err, needle) && lines == 1 &&
             strncmp(err, "gguf-eval: error: ", 18) == 0 && out && !*out;
    if (!ok)
        fprintf(stderr, "    gguf-eval %s\n    -> exit %d, stderr '%s' (wanted %d, '%s')\n", args, rc,
                err ? err : "", code, needle);
    free(out);
    free(err);
    return ok;
}

TEST(test_eval_prints_llama_perplexity_format_and_progress)
{
    const char *model = tiny_model("default");
    CHECK(model != NULL);
    char args[1024], *out = NULL, *err = NULL;
    snprintf(args, sizeof args, "-m '%s' -f " TEXT " -c 64 --chunks 3 -t 2", model);
    CHECK(eval(&out, &err, args) == 0);
    double p1, p2, p3, ppl, error;
    CHECK_MSG(sscanf(out, "[1]%lf,[2]%lf,[3]%lf,\nFinal estimate: PPL = %lf +/- %lf", &p1, &p2, &p3,
                     &ppl, &error) == 5, "stdout: %s", out);
    CHECK(p3 == ppl && error > 0);
    CHECK(strstr(err, "chunk 3/3") && strstr(err, "tokens/s") && strstr(err, "ETA"));
    CHECK(strstr(err, "peak memory") && strstr(err, "KV cache") && strstr(err, "compute buffer"));
    CHECK(strstr(err, "BOS added"));
    const char *loaded = strstr(err, "model loaded in ");
    double load_ms = -1;
    CHECK_MSG(loaded && sscanf(loaded, "model loaded in %lf ms", &load_ms) == 1 && load_ms >= 0,
              "stderr: %s", err);
    free(out);
    free(err);
}

TEST(test_eval_perplexity_equals_the_oracle_method)
{
    /* The "bytes" model tokenizes a text into its bytes, so the oracle can follow
     * llama-perplexity's method on its own: BOS, chunks, BOS per chunk, second half scored. */
    const char *model = tiny_model("bytes");
    CHECK(model != NULL);
    char *expected = NULL, *out = NULL, args[1024];
    CHECK(test_run(&expected, "python3 tests/model/py/tiny_llama.py ppl '%s' " TEXT " 64 3",
                   model) == 0);
    snprintf(args, sizeof args, "-m '%s' -f " TEXT " -c 64 --chunks 3 --kv-type f32 --json",
             model);
    CHECK(eval(&out, NULL, args) == 0);
    const char *at = strstr(out, "\"ppl\": ");
    CHECK(at != NULL);
    double ours = atof(at + 7), theirs = atof(expected);
    CHECK_MSG(fabs(ours / theirs - 1) < 1e-5, "ours %.6f, oracle %.6f", ours, theirs);
    free(expected);
    free(out);
}

TEST(test_eval_json_and_plot)
{
    const char *model = tiny_model("default");
    CHECK(model != NULL);
    char args[2048], svg[512], json[512];
    snprintf(svg, sizeof svg, "%s", test_tmpfile("run.svg"));
    snprintf(json, sizeof json, "%s", test_tmpfile("run.json"));
    snprintf(args, sizeof args, "-m '%s' -f " TEXT " -c 32 --chunks 4 --json --plot '%s' > '%s'",
             model, svg, json);
    CHECK(eval(NULL, NULL, args) == 0);
    CHECK(test_run(NULL, "python3 -c \"import json,sys; d=json.load(open(sys.argv[1])); "
                         "assert len(d['chunks']) == 4 and d['n_ctx'] == 32; "
                         "assert d['chunks'][3]['ppl'] == d['ppl'] and d['ppl_error'] > 0; "
                         "assert d['tokens_per_second'] > 0 and d['peak_rss_bytes'] > 0\" '%s'",
                   json) == 0);
    CHECK(test_run(NULL, "python3 -c \"import sys, xml.etree.ElementTree as E; "
                         "E.parse(sys.argv[1])\" '%s'", svg) == 0);
}

TEST(test_eval_kl_divergence_against_own_base_is_zero_and_small_for_q8_0)
{
    const char *base_model = tiny_model("default");
    CHECK(base_model != NULL);
    char base_copy[512], base[512], args[2048], *out = NULL;
    snprintf(base_copy, sizeof base_copy, "%s", base_model);
    snprintf(base, sizeof base, "%s", test_tmpfile("tiny.kld"));
    snprintf(args, sizeof args, "-m '%s' -f " TEXT " -c 32 --chunks 8 --kl-divergence-base '%s'",
             base_copy, base);
    CHECK(eval(&out, NULL, args) == 0);
    free(out);
    snprintf(args, sizeof args, "-m '%s' --kl-divergence-base '%s' --kl-divergence", base_copy,
             base);
    CHECK(eval(&out, NULL, args) == 0);
    double kld = -1, same_top = -1;
    const char *at = strstr(out, "Mean    KLD:");
    CHECK_MSG(at && sscanf(at, "Mean    KLD: %lf", &kld) == 1, "%s", out);
    at = strstr(out, "Same top p:");
    CHECK(at && sscanf(at, "Same top p: %lf", &same_top) == 1);
    CHECK_MSG(fabs(kld) < 1e-4 && same_top == 100.0, "kld %g same top %g", kld, same_top);
    CHECK(strstr(out, "chunk             PPL") && strstr(out, "====== Perplexity statistics"));
    free(out);

    const char *q8 = tiny_model("q8_0");
    CHECK(q8 != NULL);
    snprintf(args, sizeof args, "-m '%s' --kl-divergence-base '%s' --kl-divergence --json", q8,
             base);
    CHECK(eval(&out, NULL, args) == 0);
    at = strstr(out, "\"kld\": {\n      \"value\": ");
    CHECK_MSG(at != NULL, "%s", out);
    kld = atof(at + strlen("\"kld\": {\n      \"value\": "));
    CHECK_MSG(kld > 1e-6 && kld < 0.05, "q8_0 kld %g", kld);
    free(out);
}

TEST(test_eval_reports_each_bad_input_in_one_line)
{
    const char *model = tiny_model("default");
    CHECK(model != NULL);
    char m[512], short_text[512], empty[512];
    snprintf(m, sizeof m, "%s", model);
    snprintf(short_text, sizeof short_text, "%s", test_tmpfile("short.txt"));
    snprintf(empty, sizeof empty, "%s", test_tmpfile("empty.txt"));
    CHECK(test_run(NULL, "printf 'only a few words' > '%s' && : > '%s'", short_text, empty) == 0);
    CHECK(eval_fails_with(1, "-c 1024 exceeds the model's context length of 512",
                          "-m '%s' -f " TEXT " -c 1024%s", m, NULL));
    CHECK(eval_fails_with(1, "a context of 64 needs at least 128", "-m '%s' -f '%s' -c 64", m,
                          short_text));
    CHECK(eval_fails_with(1, "the text is empty", "-m '%s' -f '%s' -c 64", m, empty));
    CHECK(eval_fails_with(1, "cannot open", "-m '%s' -f /nonexistent.txt -c 64%s", m, NULL));
    CHECK(eval_fails_with(1, "nonexistent.gguf", "-m /nonexistent.gguf -f " TEXT "%s%s", NULL,
                          NULL));
    CHECK(eval_fails_with(2, "-m MODEL is required", "-f " TEXT "%s%s", NULL, NULL));
    CHECK(eval_fails_with(2, "needs --kl-divergence-base", "-m '%s' --kl-divergence%s", m, NULL));
    CHECK(eval_fails_with(2, "unknown option '--bogus'", "-m '%s' --bogus%s", m, NULL));
    CHECK(eval_fails_with(2, "needs a whole number", "-m '%s' -c ten%s", m, NULL));
    CHECK(eval_fails_with(1, "not a base log-probability file",
                          "-m '%s' --kl-divergence --kl-divergence-base '%s'", m, empty));
}

static bool remove_merges(ggtk_writer *w)
{
    return ggtk_writer_remove(w, "tokenizer.ggml.merges") == GGTK_OK;
}
static bool arch_falcon(ggtk_writer *w)
{
    return ggtk_writer_set_string(w, "general.architecture", "falcon") == GGTK_OK;
}
static bool drop_attn_v(ggtk_writer *w)
{
    return ggtk_writer_remove_tensor(w, "blk.0.attn_v.weight") == GGTK_OK;
}
static bool one_kv_head(ggtk_writer *w)
{
    return ggtk_writer_set_u32(w, "llama.attention.head_count_kv", 1) == GGTK_OK;
}

TEST(test_eval_reports_each_broken_model_in_one_line)
{
    const char *model = tiny_model("default");
    CHECK(model != NULL);
    char source[512];
    snprintf(source, sizeof source, "%s", model);
    const char *fmt = "-m '%s' -f " TEXT " -c 64%s";
    CHECK(eval_fails_with(1, "unsupported architecture 'falcon'", fmt,
                          edited_model(source, "falcon.gguf", arch_falcon), NULL));
    CHECK(eval_fails_with(1, "missing tensor blk.0.attn_v.weight", fmt,
                          edited_model(source, "no_v.gguf", drop_attn_v), NULL));
    CHECK(eval_fails_with(1, "has shape [64, 32, 1, 1], expected [64, 16]", fmt,
                          edited_model(source, "kv1.gguf", one_kv_head), NULL));
    CHECK(eval_fails_with(1, "tokenizer.ggml.merges", fmt,
                          edited_model(source, "no_merges.gguf", remove_merges), NULL));
    CHECK(eval_fails_with(1, "truncated", fmt, truncated_model(source, "cut.gguf", 300000), NULL));
}

TEST(test_eval_reads_weights_into_memory_with_the_same_result)
{
    const char *model = tiny_model("default");
    CHECK(model != NULL);
    char args[1024], *mapped = NULL, *read = NULL;
    snprintf(args, sizeof args, "-m '%s' -f " TEXT " -c 64 --chunks 2", model);
    CHECK(eval(&mapped, NULL, args) == 0);
    snprintf(args, sizeof args, "-m '%s' -f " TEXT " -c 64 --chunks 2 --no-mmap", model);
    CHECK(eval(&read, NULL, args) == 0);
    CHECK(strcmp(mapped, read) == 0);
    free(mapped);
    free(read);
    /* --mlock locks 0.4 MiB, or fails in one line when the memory-lock limit is lower. */
    char *err = NULL;
    snprintf(args, sizeof args, "-m '%s' -f " TEXT " -c 64 --chunks 2 --mlock", model);
    int rc = eval(NULL, &err, args);
    CHECK_MSG(rc == 0 || (rc == 1 && strstr(err, "cannot lock") && strstr(err, "ulimit -l")),
              "exit %d: %s", rc, err);
    CHECK(rc != 0 || strstr(err, "mapped, locked"));
    free(err);
}
