/* llama_cpp_kld.h - the pieces of the tests that score a model with gguf-eval against a
 * KL-divergence base llama.cpp's llama-perplexity wrote (REF_BIN names llama.cpp's build/bin):
 * the tool's folder, the text both score, and gguf-eval's mean KLD. */
#ifndef LLAMA_CPP_KLD_H
#define LLAMA_CPP_KLD_H

/* REF_BIN when it holds llama-perplexity; else the test is skipped. */
const char *llama_perplexity_bin(void);

/* The first 20000 bytes of tests/eval/data/licenses.txt.gz as a plain text file in the test's
 * scratch folder (made once); NULL when that fails. Static buffer. */
const char *kld_plain_text(void);

/* The mean KLD `gguf-eval --json` reports for `model` against `base` (one thread); 1 when it
 * fails, with `what` and its output on stderr. */
double gguf_eval_mean_kld(const char *model, const char *base, const char *what);

#endif
