/* gguf-tokenize from the command line: llama-tokenize's output formats, text from -p, a file or
 * stdin with llama.cpp's escape processing, a vocabulary-only file, special-token parsing and BOS
 * flags, one-line errors with a non-zero status; with REF_BIN, byte-identical output to
 * llama-tokenize on the real models. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "test.h"

static const char *model(void)
{
    const char *path = test_model_path();
    if (!path) {
        SKIP("the real model is not fetched (make models)");
    }
    return path;
}

/* stdout+stderr of `gguf-tokenize ARGS` in a static buffer; the exit status in *status. */
static const char *tokenize(int *status, const char *args)
{
    static char *output;
    free(output);
    output = NULL;
    *status = test_run(&output, "%s %s", test_tool("gguf-tokenize"), args);
    return output ? output : "";
}

static int count_lines(const char *s)
{
    int n = 0;
    for (; *s; s++) {
        n += *s == '\n';
    }
    return n;
}

TEST(test_tokenize_cli_prints_ids_as_one_list_and_pieces_one_per_line)
{
    const char *m = model();
    char args[1024];
    int status;
    /* SmolLM2 adds no BOS; "Hello world" is two tokens */
    snprintf(args, sizeof args, "-m %s -p 'Hello world' --ids", m);
    const char *out = tokenize(&status, args);
    CHECK_MSG(status == 0 && strcmp(out, "[19556, 905]\n") == 0, "status %d: '%s'", status, out);
    snprintf(args, sizeof args, "-m %s -p 'Hello world'", m);
    out = tokenize(&status, args);
    CHECK_MSG(status == 0 && strcmp(out, " 19556 -> 'Hello'\n   905 -> ' world'\n") == 0, "status %d: '%s'", status, out);
    snprintf(args, sizeof args, "-m %s -p 'Hello world' --show-count", m);
    out = tokenize(&status, args);
    CHECK_MSG(status == 0 && strstr(out, "Total number of tokens: 2\n"), "'%s'", out);
    snprintf(args, sizeof args, "-m %s -p '' --ids", m);
    out = tokenize(&status, args);
    CHECK_MSG(status == 0 && strcmp(out, "[]\n") == 0, "'%s'", out);
}

TEST(test_tokenize_cli_parses_special_tokens_by_default_as_llama_tokenize_does)
{
    const char *m = model();
    char args[1024];
    int status;
    snprintf(args, sizeof args, "-m %s -p '<|im_start|>user' --ids", m);
    const char *out = tokenize(&status, args);
    CHECK_MSG(status == 0 && strncmp(out, "[1, ", 4) == 0, "'%s'", out);
    snprintf(args, sizeof args, "-m %s -p '<|im_start|>user' --ids --parse-special", m);
    CHECK(strncmp(tokenize(&status, args), "[1, ", 4) == 0);
    snprintf(args, sizeof args, "-m %s -p '<|im_start|>user' --ids --no-parse-special", m);
    out = tokenize(&status, args);
    CHECK_MSG(status == 0 && strncmp(out, "[1, ", 4) != 0, "'%s'", out);
}

TEST(test_tokenize_cli_processes_escapes_unless_told_not_to)
{
    const char *m = model();
    char args[1024], other[1024];
    int status;
    /* "a\nb" as typed: a newline unless --no-escape */
    snprintf(args, sizeof args, "-m %s -p 'a\\nb' --ids", m);
    snprintf(other, sizeof other, "-m %s -p \"$(printf 'a\\nb')\" --ids", m);
    char *escaped = strdup(tokenize(&status, args));
    CHECK(status == 0);
    CHECK_MSG(strcmp(escaped, tokenize(&status, other)) == 0, "'%s'", escaped);
    snprintf(args, sizeof args, "-m %s -p 'a\\nb' --ids --no-escape", m);
    CHECK(strcmp(escaped, tokenize(&status, args)) != 0);
    /* \x41 is 'A', and escapes apply to files and stdin too */
    const char *file = test_tmpfile("escaped.txt");
    CHECK(test_run(NULL, "printf '%%s' '\\x41' > %s", file) == 0);
    snprintf(args, sizeof args, "-m %s -f %s --ids", m, file);
    char *from_file = strdup(tokenize(&status, args));
    snprintf(args, sizeof args, "-m %s -p A --ids", m);
    CHECK_MSG(strcmp(from_file, tokenize(&status, args)) == 0, "'%s'", from_file);
    snprintf(args, sizeof args, "-m %s --stdin --ids < %s", m, file);
    CHECK(strcmp(from_file, tokenize(&status, args)) == 0);
    free(escaped);
    free(from_file);
}

TEST(test_tokenize_cli_reads_files_byte_for_byte_and_stdin_wins)
{
    const char *m = model();
    const char *file = test_tmpfile("text.txt");
    CHECK(test_run(NULL, "printf 'one\\ntwo\\n' > %s", file) == 0);
    char args[1024];
    int status;
    snprintf(args, sizeof args, "-m %s -f %s", m, file);
    const char *out = tokenize(&status, args);
    /* the last newline is a token of its own: one, \n, two, \n */
    CHECK_MSG(status == 0 && count_lines(out) == 6, "'%s'", out);
    snprintf(args, sizeof args, "-m %s -p ignored -f %s --stdin --ids < /dev/null", m, file);
    out = tokenize(&status, args);
    CHECK_MSG(status == 0 && strcmp(out, "[]\n") == 0, "stdin must win: '%s'", out);
}

TEST(test_tokenize_cli_works_on_a_vocabulary_only_file)
{
    const char *m = model();
    const char *vocab = test_tmpfile("vocab-only.gguf");
    char *output = NULL;
    int status = test_run(&output, "python3 tests/vocab/py/vocab_with_pre.py %s %s smollm", m, vocab);
    CHECK_MSG(status == 0, "%s", output);
    free(output);
    char args[1024];
    snprintf(args, sizeof args, "-m %s -p 'I'\\''m 12 years old.' --ids", m);
    char *full = strdup(tokenize(&status, args));
    snprintf(args, sizeof args, "-m %s -p 'I'\\''m 12 years old.' --ids", vocab);
    const char *out = tokenize(&status, args);
    CHECK_MSG(status == 0 && strcmp(full, out) == 0, "'%s' vs '%s'", full, out);
    free(full);
}

TEST(test_tokenize_cli_refuses_bad_input_with_one_line)
{
    int status;
    const char *out = tokenize(&status, "-p text");
    CHECK_MSG(status == 2 && count_lines(out) == 1 && strstr(out, "gguf-tokenize: error: no model"), "%d '%s'", status, out);
    out = tokenize(&status, "-m x.gguf");
    CHECK_MSG(status == 2 && count_lines(out) == 1 && strstr(out, "no text"), "%d '%s'", status, out);
    out = tokenize(&status, "-m x.gguf -p a --frobnicate");
    CHECK_MSG(status == 2 && count_lines(out) == 1 && strstr(out, "--frobnicate"), "%d '%s'", status, out);
    out = tokenize(&status, "-m");
    CHECK_MSG(status == 2 && count_lines(out) == 1 && strstr(out, "-m wants a value"), "%d '%s'", status, out);
    out = tokenize(&status, "-m /nonexistent.gguf -p a");
    CHECK_MSG(status == 1 && count_lines(out) == 1 && strstr(out, "/nonexistent.gguf"), "%d '%s'", status, out);
    const char *m = model();
    char args[1024];
    snprintf(args, sizeof args, "-m %s -f /nonexistent.txt", m);
    out = tokenize(&status, args);
    CHECK_MSG(status == 1 && count_lines(out) == 1 && strstr(out, "/nonexistent.txt"), "%d '%s'", status, out);
    /* a file without a tokenizer: the metadata key is named */
    const char *empty = test_tmpfile("no-tokenizer.gguf");
    CHECK(test_run(NULL, "python3 -c \"import gguf; w = gguf.GGUFWriter('%s', 'llama'); w.write_header_to_file(); "
                         "w.write_kv_data_to_file(); w.write_tensors_to_file(); w.close()\"", empty) == 0);
    snprintf(args, sizeof args, "-m %s -p a", empty);
    out = tokenize(&status, args);
    CHECK_MSG(status == 1 && count_lines(out) == 1 && strstr(out, "tokenizer.ggml.model"), "%d '%s'", status, out);
    /* an unknown pre-tokenizer: refused by name */
    const char *odd = test_tmpfile("odd-pre.gguf");
    CHECK(test_run(NULL, "python3 tests/vocab/py/vocab_with_pre.py %s %s no-such-pre", m, odd) == 0);
    snprintf(args, sizeof args, "-m %s -p a", odd);
    out = tokenize(&status, args);
    CHECK_MSG(status == 1 && count_lines(out) == 1 && strstr(out, "'no-such-pre'"), "%d '%s'", status, out);
}

/* stdout of llama-tokenize and gguf-tokenize for the same options: identical bytes. */
TEST(test_tokenize_cli_output_is_llama_tokenize_output)
{
    const char *bin = getenv("REF_BIN");
    if (!bin || !*bin) {
        SKIP("REF_BIN is not set (llama.cpp's build/bin)");
    }
    char ref[512];
    snprintf(ref, sizeof ref, "%s/llama-tokenize", bin);
    struct stat st;
    if (stat(ref, &st) != 0) {
        SKIP("%s is not built", ref);
    }
    static const char *const models[] = {"models/SmolLM2-135M-Instruct.Q4_1.gguf", "models/gemma-3-270m-q4_k_m.gguf"};
    static const char *const options[] = {"", "--ids", "--no-bos", "--no-parse-special", "--ids --no-bos --no-escape"};
    const char *text = "'Hello  world!\\n<|im_start|><start_of_turn>user 12345 \\xe2\\x80\\x94 caf\\xc3\\xa9 "
                       "\\xe6\\x97\\xa5\\xe6\\x9c\\xac \\xf0\\x9f\\xa6\\x99\\ttab\\\\x'";
    int compared = 0;
    for (size_t i = 0; i < 2; i++) {
        if (stat(models[i], &st) != 0) {
            continue;
        }
        for (size_t k = 0; k < sizeof options / sizeof options[0]; k++) {
            char *ours = NULL, *theirs = NULL;
            int a = test_run(&ours, "%s -m %s -p %s %s 2>/dev/null", test_tool("gguf-tokenize"), models[i], text, options[k]);
            int b = test_run(&theirs, "%s -m %s -p %s %s --log-disable 2>/dev/null", ref, models[i], text, options[k]);
            bool same = a == 0 && b == 0 && ours && theirs && strcmp(ours, theirs) == 0;
            if (!same) {
                test_fail(__FILE__, __LINE__, "%s %s: ours (%d)\n%s\nllama-tokenize (%d)\n%s", models[i], options[k], a,
                          ours ? ours : "", b, theirs ? theirs : "");
            }
            free(ours);
            free(theirs);
            CHECK(same);
            compared++;
        }
    }
    if (compared == 0) {
        SKIP("no model (make models)");
    }
}
