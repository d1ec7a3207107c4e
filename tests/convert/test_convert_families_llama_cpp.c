/* Every family gguf-convert knows, from a tiny random Hugging Face folder with a real tokenizer
 * (tests/convert/py/family_kld.py: tiny_hf.py's shapes, a byte-level BPE tokenizer.json trained
 * by PyPI tokenizers, and for Gemma also a SentencePiece tokenizer.model) to a GGUF that
 * gguf-eval runs, and back. Without llama.cpp: gguf-eval scores a text to a finite perplexity,
 * the tokens it scored are the folder tokenizer's ids (PyPI tokenizers / sentencepiece), and
 * --to-hf gives back the folder's arrays. With REF_BIN (llama.cpp's build/bin): llama-perplexity
 * loads the converted F32 GGUF and writes a KL-divergence base (its tokens, too, are the folder
 * tokenizer's ids), and gguf-eval's mean KLD against it is below 1e-6: same weights, same maths,
 * so what is left is the base's 16-bit log-probabilities (within 3e-7 here), while one layer's
 * q rows left in HF order would give 0.24 (family_kld.py's weights make attention and logits
 * far from uniform). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "eval/llama_cpp_kld.h"
#include "test.h"

/* A family and its tokenizer: "bpe" (tokenizer.json) or "spm" (tokenizer.model). */
typedef struct family_case {
    const char *family, *tokenizer;
} family_case;

static const family_case cases[] = {
    {"llama", "bpe"},  {"mistral", "bpe"}, {"qwen2", "bpe"},  {"qwen3", "bpe"}, {"gemma2", "bpe"},
    {"gemma3", "bpe"}, {"phi3", "bpe"},    {"gemma2", "spm"}, {"gemma3", "spm"},
};
#define N_CASES (sizeof cases / sizeof cases[0])

/* 2 chunks of 128 tokens, one thread: what both tools score. */
#define EVAL_ARGS "-c 128 -b 128 --chunks 2 -t 1"

static void require_oracle(void)
{
    if (test_run(NULL, "python3 -c 'import numpy, safetensors, sentencepiece, tokenizers' "
                       "2>/dev/null") != 0)
        SKIP("python3 with numpy, safetensors, sentencepiece and tokenizers is needed "
             "(tests/requirements.txt)");
}

/* Run a command; on failure print what it said. */
static bool ran(const char *what, const family_case *c, char *log, int rc)
{
    if (rc != 0)
        fprintf(stderr, "    %s/%s: %s failed (%d):\n%s", c->family, c->tokenizer, what, rc,
                log ? log : "");
    free(log);
    return rc == 0;
}

/* The case's folder "<tmp>/kld_<family>_<tokenizer>" converted to "<folder>.gguf" (F32), made
 * once per run; false when a step fails. */
static bool converted(const family_case *c, char *dir, size_t n_dir, char *gguf, size_t n_gguf)
{
    char name[64];
    snprintf(name, sizeof name, "kld_%s_%s", c->family, c->tokenizer);
    snprintf(dir, n_dir, "%s", test_tmpfile(name));
    snprintf(gguf, n_gguf, "%s.gguf", dir);
    const char *text = kld_plain_text();
    if (!text)
        return false;
    if (access(gguf, R_OK) == 0)
        return true;
    char *log = NULL;
    return ran("family_kld.py make", c, log,
               test_run(&log, "python3 tests/convert/py/family_kld.py make %s '%s' '%s' %s",
                        c->family, dir, text, c->tokenizer)) &&
           ran("gguf-convert", c, log,
               test_run(&log, "%s --outtype f32 '%s' '%s'", test_tool("gguf-convert"), dir, gguf));
}

/* The number after `"key":` at the first occurrence of the key in `json`, NAN when absent. */
static double json_number(const char *json, const char *key)
{
    char needle[64];
    snprintf(needle, sizeof needle, "\"%s\":", key);
    const char *at = json ? strstr(json, needle) : NULL;
    return at ? strtod(at + strlen(needle), NULL) : NAN;
}

/* gguf-eval scores the text to a finite perplexity and writes a base whose tokens are PyPI
 * tokenizers' ids; --to-hf gives back the folder's arrays. */
static bool runs_and_round_trips(const family_case *c)
{
    char dir[400], gguf[512], base[512], back[512];
    if (!converted(c, dir, sizeof dir, gguf, sizeof gguf))
        return false;
    snprintf(base, sizeof base, "%s.own.kld", dir);
    snprintf(back, sizeof back, "%s-back", dir);
    char *out = NULL;
    int rc = test_run(&out, "%s -m '%s' -f '%s' " EVAL_ARGS " --kl-divergence-base '%s' --json "
                      "2>/dev/null", test_tool("gguf-eval"), gguf, kld_plain_text(), base);
    double ppl = json_number(out, "ppl");
    fprintf(stderr, "    %s/%s: gguf-eval PPL %.4f\n", c->family, c->tokenizer, ppl);
    bool ppl_ok = rc == 0 && isfinite(ppl) && ppl > 1;
    if (!ppl_ok)
        fprintf(stderr, "    %s/%s: gguf-eval failed (%d): %.300s\n", c->family, c->tokenizer, rc,
                out ? out : "");
    free(out);
    char *log = NULL;
    return ppl_ok &&
           ran("token check", c, log,
               test_run(&log, "python3 tests/convert/py/family_kld.py tokens '%s' '%s' '%s'", dir,
                        kld_plain_text(), base)) &&
           ran("--to-hf", c, log,
               test_run(&log, "%s --to-hf '%s' '%s'", test_tool("gguf-convert"), gguf, back)) &&
           ran("array check", c, log,
               test_run(&log, "python3 tests/convert/py/family_kld.py same %s '%s' '%s'",
                        c->family, dir, back));
}

TEST(test_convert_families_run_in_gguf_eval_and_round_trip)
{
    require_oracle();
    for (size_t i = 0; i < N_CASES; i++)
        CHECK_MSG(runs_and_round_trips(&cases[i]), "%s/%s", cases[i].family, cases[i].tokenizer);
}

/* llama-perplexity loads the converted case and writes its KL-divergence base, whose tokens are
 * the folder tokenizer's ids. */
static bool llama_cpp_base(const char *bin, const family_case *c, const char *dir,
                           const char *gguf, const char *base)
{
    char *log = NULL;
    return ran("llama-perplexity", c, log,
               test_run(&log, "%s/llama-perplexity -m '%s' -f '%s' " EVAL_ARGS
                        " --kl-divergence-base '%s' 2>&1", bin, gguf, kld_plain_text(), base)) &&
           ran("token check of llama.cpp's base", c, log,
               test_run(&log, "python3 tests/convert/py/family_kld.py tokens '%s' '%s' '%s'", dir,
                        kld_plain_text(), base));
}

/* gguf-eval's mean KLD against llama-perplexity's base for the converted case; 1 on failure. */
static double kld_against_llama_cpp(const char *bin, const family_case *c)
{
    char dir[400], gguf[512], base[512];
    if (!converted(c, dir, sizeof dir, gguf, sizeof gguf))
        return 1;
    snprintf(base, sizeof base, "%s.ref.kld", dir);
    if (!llama_cpp_base(bin, c, dir, gguf, base))
        return 1;
    char what[64];
    snprintf(what, sizeof what, "%s/%s", c->family, c->tokenizer);
    double kld = gguf_eval_mean_kld(gguf, base, what);
    fprintf(stderr, "    %s/%s: mean KLD %.3e\n", c->family, c->tokenizer, kld);
    return kld;
}

TEST(test_convert_families_match_llama_perplexity)
{
    const char *bin = llama_perplexity_bin();
    require_oracle();
    for (size_t i = 0; i < N_CASES; i++) {
        double kld = kld_against_llama_cpp(bin, &cases[i]);
        CHECK_MSG(fabs(kld) < 1e-6, "%s/%s: mean KLD %.3e", cases[i].family, cases[i].tokenizer,
                  kld);
    }
}
