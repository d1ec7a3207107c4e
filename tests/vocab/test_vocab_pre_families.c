/* test_vocab_pre_families.c - every pre-tokenizer llama.cpp names: each compiles, each family
 * gives the ids of HF `tokenizers` built from the same vocabulary with the family's own regexes
 * (SmolLM2's vocabulary with tokenizer.ggml.pre rewritten, on the varied corpus), and with REF_BIN
 * set, the ids of llama.cpp's llama-tokenize for every family; with REF_SRC set, llama.cpp's
 * conformance vectors. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "test.h"
#include "vocab/pretokenize.h"
#include "vocab_test_support.h"

/* Every tokenizer.ggml.pre value of the table. */
static const char *const all_names[] = {
    "default", "llama3", "llama-v3", "llama-bpe", "falcon3", "falcon-h1", "pixtral", "midm-2.0", "lfm2",
    "jina-v5-nano", "dbrx", "smaug-bpe", "chatglm-bpe", "glm4", "gpt-2", "phi-2", "jina-es", "jina-de",
    "gigachat", "jina-v2-es", "jina-v2-de", "a.x-4.0", "mellum", "modern-bert", "mpt", "olmo", "jais",
    "trillion", "granite-docling", "exaone4", "starcoder", "refact", "command-r", "smollm", "codeshell",
    "exaone", "minerva-7b", "mellum2", "qwen2", "deepseek-r1-qwen", "kormo", "f2llmv2", "megrez",
    "stablelm2", "hunyuan", "solar-open", "grok-2", "qwen35", "falcon", "deepseek-llm", "deepseek-coder",
    "deepseek-v3", "hunyuan-dense", "joyai-llm", "poro-chat", "bloom", "gpt3-finnish", "viking", "tekken",
    "gpt-4o", "llama4", "kanana2", "talkie", "minimax-m2", "granite-embed-multi-97m", "chameleon",
    "kimi-k2", "seed-coder", "bailingmoe", "bailingmoe2", "llada-moe", "exaone-moe", "jais-2", "youtu",
    "minicpm5", "tiny_aya", "cohere2moe", "superbpe", "afmoe", "laguna",
};

/* The families hf_pre_compare.py models: llama.cpp and HF agree on every corpus text for them.
 * (The others differ from HF where llama.cpp's regex handling does: upper/lower case classes of
 * non-ASCII letters, '~' outside \p{S}, digit groups joined with the text before them; they are
 * checked against llama.cpp itself below.) */
static const char *const hf_families[] = {
    "default", "gpt-2", "llama-bpe", "dbrx", "chatglm-bpe", "qwen2", "qwen35", "smollm", "falcon",
    "poro-chat", "viking", "seed-coder", "minicpm5", "laguna", "jais-2", "superbpe",
};

TEST(test_vocab_every_pre_tokenizer_llama_cpp_names_compiles)
{
    for (size_t i = 0; i < sizeof all_names / sizeof all_names[0]; i++) {
        const inf_pretokenizer *def = inf_pretokenizer_find(all_names[i]);
        CHECK_MSG(def, "'%s' is not in the table", all_names[i]);
        inf_pre_program prog;
        const char *why = NULL;
        bool ok = inf_pre_program_init(&prog, def, &why);
        inf_pre_program_free(&prog);
        CHECK_MSG(ok, "'%s': %s", all_names[i], why ? why : "out of memory");
    }
    /* BPE without the byte alphabet, separator tokens, and unknown names are refused by name. */
    CHECK(!inf_pretokenizer_find("gemma4") && !inf_pretokenizer_find("roberta-bpe") && !inf_pretokenizer_find("llama"));
}

/* Write "<dir>/<name>.<pre>.ids" for every corpus text: ids without BOS/EOS or special parsing. */
static bool write_ids(const inf_vocab *v, const char *dir, const char *pre)
{
    char path[700];
    snprintf(path, sizeof path, "%s/list.txt", dir);
    size_t size;
    char *list = vt_read_file(path, &size);
    bool ok = list != NULL;
    for (char *name = ok ? strtok(list, "\n") : NULL; ok && name; name = strtok(NULL, "\n")) {
        snprintf(path, sizeof path, "%s/%s", dir, name);
        char *text = vt_read_file(path, &size);
        inf_token *ids = NULL;
        size_t n = 0;
        ok = text && inf_vocab_tokenize(v, text, size, 0, &ids, &n, NULL) == GGTK_OK;
        snprintf(path, sizeof path, "%s/%s.%s.ids", dir, name, pre);
        FILE *f = ok ? fopen(path, "w") : NULL;
        ok = f != NULL;
        for (size_t i = 0; ok && i < n; i++) {
            fprintf(f, "%d\n", (int)ids[i]);
        }
        if (f) {
            fclose(f);
        }
        free(ids);
        free(text);
    }
    free(list);
    return ok;
}

/* SmolLM2's vocabulary with tokenizer.ggml.pre = pre, written to a scratch file; its path. */
static const char *vocab_with_pre(const char *pre)
{
    static char path[600];
    snprintf(path, sizeof path, "%s", test_tmpfile("vocab-with-pre.gguf"));
    char *output = NULL;
    int status = test_run(&output, "python3 tests/vocab/py/vocab_with_pre.py %s %s %s", test_model_path(), path, pre);
    if (status != 0) {
        test_fail(__FILE__, __LINE__, "vocab_with_pre.py %s exited %d: %s", pre, status, output);
    }
    free(output);
    return status == 0 ? path : NULL;
}

TEST(test_vocab_pre_families_give_hf_tokenizers_ids)
{
    if (!test_model_path()) {
        SKIP("the model is absent (make models)");
    }
    const char *dir = vt_make_corpus("family_corpus");
    CHECK(dir);
    for (size_t i = 0; i < sizeof hf_families / sizeof hf_families[0]; i++) {
        const char *pre = hf_families[i];
        const char *path = vocab_with_pre(pre);
        CHECK(path);
        char err[512];
        inf_vocab *v = vt_load(path, err, sizeof err);
        CHECK_MSG(v, "%s: %s", pre, err);
        CHECK(strcmp(inf_vocab_pre_name(v), pre) == 0);
        bool written = write_ids(v, dir, pre);
        inf_vocab_free(v);
        CHECK_MSG(written, "%s: writing the ids", pre);
        char *output = NULL;
        int status = test_run(&output, "python3 tests/vocab/py/hf_pre_compare.py %s %s %s", path, pre, dir);
        CHECK_MSG(status == 0, "hf_pre_compare.py %s exited %d:\n%s", pre, status, output);
        fprintf(stderr, "    %s", output);
        free(output);
    }
}

static const char *ref_tool(const char *name)
{
    static char path[512];
    const char *bin = getenv("REF_BIN");
    if (!bin || !*bin) {
        SKIP("REF_BIN is not set (llama.cpp's build/bin)");
    }
    snprintf(path, sizeof path, "%s/%s", bin, name);
    struct stat st;
    if (stat(path, &st) != 0) {
        SKIP("%s is not built", path);
    }
    return path;
}

TEST(test_vocab_every_pre_family_gives_llama_tokenize_ids)
{
    const char *ref = ref_tool("llama-tokenize");
    if (!test_model_path()) {
        SKIP("the model is absent (make models)");
    }
    char dir[512];
    snprintf(dir, sizeof dir, "%s", test_tmpfile("joined_corpus"));
    CHECK(test_run(NULL, "python3 tests/vocab/py/make_corpus.py %s --joined 6", dir) == 0);
    /* One name per row of the table (the others share its regexes and flags). */
    static const char *const rows[] = {
        "default", "llama-bpe", "dbrx", "chatglm-bpe", "gpt-2", "smollm", "qwen2", "grok-2", "qwen35", "falcon",
        "deepseek-llm", "deepseek-coder", "deepseek-v3", "poro-chat", "viking", "tekken", "gpt-4o",
        "granite-embed-multi-97m", "chameleon", "kimi-k2", "seed-coder", "bailingmoe", "exaone-moe", "jais-2",
        "youtu", "minicpm5", "tiny_aya", "superbpe", "afmoe", "laguna",
    };
    char names[1024] = "";
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        strcat(strcat(names, " "), rows[i]);
    }
    char *output = NULL;
    int status = test_run(&output, "python3 tests/vocab/py/ref_compare.py %s %s %s %s %s%s", test_model_path(), dir,
                          test_tool("gguf-tokenize"), ref, test_tmpdir(), names);
    CHECK_MSG(status == 0, "ref_compare.py exited %d:\n%s", status, output);
    fprintf(stderr, "%s", output);
    free(output);
}

/* llama.cpp's vectors (REF_SRC/models/ggml-vocab-*.gguf.inp/.out) with the vocabularies found in
 * REF_SRC/models or, with REF_GIT naming a git directory of llama.cpp, taken from its HEAD. */
TEST(test_vocab_llama_cpp_conformance_vectors)
{
    const char *src = getenv("REF_SRC");
    if (!src || !*src) {
        SKIP("REF_SRC is not set (a llama.cpp source tree with models/ggml-vocab-*.gguf.inp/.out)");
    }
    static const char *const vocabs[] = {"gpt-2", "mpt", "starcoder", "refact", "falcon", "deepseek-llm", "deepseek-coder",
                                         "command-r", "llama-bpe", "qwen2", "qwen35", "llama-spm", "phi-3"};
    const char *git = getenv("REF_GIT");
    char dir[512];
    snprintf(dir, sizeof dir, "%s", test_tmpfile("conformance"));
    CHECK(test_run(NULL, "mkdir -p %s && cp %s/models/ggml-vocab-*.gguf %s/ 2>/dev/null; true", dir, src, dir) == 0);
    char names[512] = "";
    for (size_t i = 0; i < sizeof vocabs / sizeof vocabs[0]; i++) {
        if (git && *git) {
            test_run(NULL, "test -s %s/ggml-vocab-%s.gguf || git --git-dir=%s show HEAD:models/ggml-vocab-%s.gguf "
                     "> %s/ggml-vocab-%s.gguf 2>/dev/null", dir, vocabs[i], git, vocabs[i], dir, vocabs[i]);
        }
        strcat(strcat(names, " "), vocabs[i]);
    }
    /* a file git could not give is empty: drop it, conformance.py skips what is missing */
    test_run(NULL, "find %s -name '*.gguf' -size -64c -delete", dir);
    char *output = NULL;
    int status = test_run(&output, "python3 tests/vocab/py/conformance.py %s %s/models %s%s", test_tool("gguf-tokenize"),
                          src, dir, names);
    if (status == 3) {
        free(output);
        SKIP("no vocabulary GGUF found for the vectors (set REF_GIT to llama.cpp's git directory)");
    }
    CHECK_MSG(status == 0, "conformance.py exited %d:\n%s", status, output);
    fprintf(stderr, "%s", output);
    free(output);
}
