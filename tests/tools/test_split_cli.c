/* gguf-split on the real model: split by tensor count and by size, merged back byte for byte;
 * against llama.cpp's llama-gguf-split (REF_BIN) in both directions; a split model read by
 * gguf-eval, gguf-quantize and gguf-inspect as the whole file is; the set written atomically and
 * never over an input; hostile sets and bad command lines refused with one line. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "test.h"

static const char *model(void)
{
    const char *path = test_model_path();
    if (!path)
        SKIP("the real model is not fetched (make models)");
    return path;
}

static const char *ref_split(void)
{
    static char path[512];
    const char *bin = getenv("REF_BIN");
    if (!bin || !*bin)
        SKIP("REF_BIN is not set (llama.cpp's build/bin)");
    snprintf(path, sizeof path, "%s/llama-gguf-split", bin);
    struct stat st;
    if (stat(path, &st) != 0)
        SKIP("%s is not built", path);
    return path;
}

/* Make `dir` the fresh directory "<tmpdir>/<name>". */
static void fresh_dir(char *dir, size_t size, const char *name)
{
    snprintf(dir, size, "%s/%s", test_tmpdir(), name);
    CHECK(test_run(NULL, "rm -rf '%s' && mkdir -p '%s'", dir, dir) == 0);
}

static bool same_bytes(const char *a, const char *b)
{
    return test_run(NULL, "cmp -s '%s' '%s'", a, b) == 0;
}

/* Number of files in `dir`. */
static int count_files(const char *dir)
{
    char *out = NULL;
    test_run(&out, "ls -A '%s' | wc -l", dir);
    int n = out ? atoi(out) : -1;
    free(out);
    return n;
}

static void remove_dir(const char *dir) { test_run(NULL, "rm -rf '%s'", dir); }

TEST(test_split_cli_by_tensors_merges_back_to_the_original)
{
    const char *in = model();
    char dir[512];
    fresh_dir(dir, sizeof dir, "split_tensors");
    char *out = NULL;
    CHECK(test_run(&out, "%s --split-max-tensors 100 '%s' %s/m", test_tool("gguf-split"), in,
                   dir) == 0);
    CHECK_MSG(out && strstr(out, "files: 3"), "%s", out ? out : "");
    free(out);
    CHECK(count_files(dir) == 3);
    /* Parts 1 and 2 hold 100 tensors each, part 3 the other 72. */
    CHECK(test_run(&out, "%s %s/m-00003-of-00003.gguf", test_tool("gguf-inspect"), dir) == 0);
    CHECK_MSG(out && strstr(out, "tensor count    72") && strstr(out, "split model: 3 parts"),
              "%s", out ? out : "");
    free(out);
    CHECK(test_run(&out, "%s --json %s/m-00003-of-00003.gguf | python3 -c \"import json,sys; "
                         "s=json.load(sys.stdin)['split']; print(s['tensor_count'], "
                         "[p['tensor_count'] for p in s['parts']])\"",
                   test_tool("gguf-inspect"), dir) == 0);
    CHECK_MSG(out && strcmp(out, "272 [100, 100, 72]\n") == 0, "%s", out ? out : "");
    free(out);
    CHECK(test_run(NULL, "%s --merge --strip-split-keys %s/m-00002-of-00003.gguf %s/stripped.gguf",
                   test_tool("gguf-split"), dir, dir) == 0);
    char merged[600];
    snprintf(merged, sizeof merged, "%s/stripped.gguf", dir);
    CHECK_MSG(same_bytes(in, merged), "merged --strip-split-keys differs from the original");
    /* The default merge keeps llama-gguf-split's keys: three more pairs, split.count 0, which
     * is not a part any more. */
    CHECK(test_run(NULL, "%s --merge %s/m-00001-of-00003.gguf %s/merged.gguf",
                   test_tool("gguf-split"), dir, dir) == 0);
    CHECK(test_run(&out, "%s %s/merged.gguf", test_tool("gguf-inspect"), dir) == 0);
    CHECK_MSG(out && strstr(out, "split.count") && strstr(out, "split.tensors.count") &&
                  !strstr(out, "split model:"), "%s", out ? out : "");
    free(out);
    CHECK(test_run(&out, "%s --merge %s/merged.gguf %s/again.gguf", test_tool("gguf-split"), dir,
                   dir) == 1);
    CHECK_MSG(out && strstr(out, "split.count is 0"), "%s", out ? out : "");
    free(out);
    remove_dir(dir);
}

TEST(test_split_cli_by_size_keeps_parts_under_the_limit)
{
    const char *in = model();
    char dir[512];
    fresh_dir(dir, sizeof dir, "split_size");
    CHECK(test_run(NULL, "%s --split-max-size 40M '%s' %s/m", test_tool("gguf-split"), in,
                   dir) == 0);
    CHECK(count_files(dir) == 3);
    for (int p = 1; p <= 3; p++) {
        char path[600];
        snprintf(path, sizeof path, "%s/m-%05d-of-00003.gguf", dir, p);
        struct stat st;
        /* The limit is on tensor data; the first part adds the metadata (1.7 MB). */
        CHECK_MSG(stat(path, &st) == 0 && st.st_size < 42000000, "%s: %lld bytes", path,
                  (long long)st.st_size);
    }
    CHECK(test_run(NULL, "%s --merge --strip-split-keys %s/m-00003-of-00003.gguf %s/back.gguf",
                   test_tool("gguf-split"), dir, dir) == 0);
    char back[600];
    snprintf(back, sizeof back, "%s/back.gguf", dir);
    CHECK(same_bytes(in, back));
    /* A tensor larger than the limit cannot be placed (token_embd.weight has 30.08 MB). */
    char *out = NULL;
    CHECK(test_run(&out, "%s --dry-run --split-max-size 30M '%s' %s/x", test_tool("gguf-split"),
                   in, dir) == 2);
    CHECK_MSG(out && strstr(out, "token_embd.weight"), "%s", out ? out : "");
    free(out);
    remove_dir(dir);
}

/* Split `in` with `options` by both tools into `dir` (prefixes ours/ref); every part the same. */
static void compare_split(const char *ref, const char *in, const char *dir, const char *options,
                          int n_parts)
{
    CHECK(test_run(NULL, "%s %s '%s' %s/ours", test_tool("gguf-split"), options, in, dir) == 0);
    CHECK(test_run(NULL, "%s %s '%s' %s/ref >/dev/null", ref, options, in, dir) == 0);
    for (int p = 0; p < n_parts; p++) {
        char ours[600], theirs[600];
        snprintf(ours, sizeof ours, "%s/ours-%05d-of-%05d.gguf", dir, p + 1, n_parts);
        snprintf(theirs, sizeof theirs, "%s/ref-%05d-of-%05d.gguf", dir, p + 1, n_parts);
        CHECK_MSG(same_bytes(ours, theirs), "%s: %s differs from llama-gguf-split's", options,
                  ours);
    }
}

TEST(test_split_cli_parts_equal_llama_gguf_split)
{
    const char *ref = ref_split();
    const char *in = model();
    char dir[512];
    fresh_dir(dir, sizeof dir, "split_ref_parts");
    compare_split(ref, in, dir, "--split-max-tensors 100", 3);
    test_run(NULL, "rm -f %s/*", dir);
    compare_split(ref, in, dir, "--split-max-size 40M", 3);
    test_run(NULL, "rm -f %s/*", dir);
    compare_split(ref, in, dir, "--no-tensor-first-split --split-max-size 40M", 4);
    test_run(NULL, "rm -f %s/*", dir);
    compare_split(ref, in, dir, "", 3);
    remove_dir(dir);
}

TEST(test_split_cli_merges_equal_llama_gguf_split_both_ways)
{
    const char *ref = ref_split();
    const char *in = model();
    char dir[512];
    fresh_dir(dir, sizeof dir, "split_ref_merge");
    /* llama.cpp splits, we merge; we split, llama.cpp merges: both give llama.cpp's merge. */
    CHECK(test_run(NULL, "%s --split-max-tensors 100 '%s' %s/ref >/dev/null", ref, in, dir) == 0);
    CHECK(test_run(NULL, "%s --split-max-tensors 90 '%s' %s/ours", test_tool("gguf-split"), in,
                   dir) == 0);
    CHECK(test_run(NULL, "%s --merge %s/ref-00001-of-00003.gguf %s/ref_by_ref.gguf >/dev/null",
                   ref, dir, dir) == 0);
    CHECK(test_run(NULL, "%s --merge %s/ref-00003-of-00003.gguf %s/ref_by_ours.gguf",
                   test_tool("gguf-split"), dir, dir) == 0);
    CHECK(test_run(NULL, "%s --merge %s/ours-00001-of-00004.gguf %s/ours_by_ref.gguf >/dev/null",
                   ref, dir, dir) == 0);
    char a[600], b[600], c[600];
    snprintf(a, sizeof a, "%s/ref_by_ref.gguf", dir);
    snprintf(b, sizeof b, "%s/ref_by_ours.gguf", dir);
    snprintf(c, sizeof c, "%s/ours_by_ref.gguf", dir);
    CHECK_MSG(same_bytes(a, b), "our merge of llama.cpp's parts differs from its own merge");
    CHECK_MSG(same_bytes(a, c), "llama.cpp's merge of our parts differs from its merge of its own");
    /* Stripped of the split keys, our merge of llama.cpp's parts is the original. */
    CHECK(test_run(NULL, "%s --merge --strip-split-keys %s/ref-00002-of-00003.gguf %s/orig.gguf",
                   test_tool("gguf-split"), dir, dir) == 0);
    snprintf(a, sizeof a, "%s/orig.gguf", dir);
    CHECK(same_bytes(in, a));
    remove_dir(dir);
}

/* The "Final estimate" line gguf-eval prints for `path` (malloc'd), or NULL. */
static char *final_estimate(const char *path)
{
    char *out = NULL;
    char *line = NULL;
    if (test_run(&out, "%s -m '%s' -f tests/eval/data/licenses.txt.gz -c 128 -b 128 -t 2 "
                       "--chunks 2 2>/dev/null", test_tool("gguf-eval"), path) == 0 && out) {
        const char *at = strstr(out, "Final estimate: PPL = ");
        if (at)
            line = strndup(at, strcspn(at, "\n"));
    }
    free(out);
    return line;
}

TEST(test_split_cli_eval_quantize_and_inspect_read_a_split_model_as_the_whole)
{
    const char *in = model();
    char dir[512];
    fresh_dir(dir, sizeof dir, "split_tools");
    CHECK(test_run(NULL, "%s --split-max-size 40M '%s' %s/m", test_tool("gguf-split"), in,
                   dir) == 0);
    char part[600];
    snprintf(part, sizeof part, "%s/m-00002-of-00003.gguf", dir);
    char *whole = final_estimate(in), *split = final_estimate(part);
    CHECK_MSG(whole && split && strcmp(whole, split) == 0, "whole: %s, split: %s",
              whole ? whole : "(none)", split ? split : "(none)");
    free(whole);
    free(split);
    CHECK(test_run(NULL, "%s -q --allow-requantize '%s' %s/from_whole.gguf q8_0 2>/dev/null",
                   test_tool("gguf-quantize"), in, dir) == 0);
    CHECK(test_run(NULL, "%s -q --allow-requantize '%s' %s/from_split.gguf q8_0 2>/dev/null",
                   test_tool("gguf-quantize"), part, dir) == 0);
    char a[600], b[600];
    snprintf(a, sizeof a, "%s/from_whole.gguf", dir);
    snprintf(b, sizeof b, "%s/from_split.gguf", dir);
    CHECK_MSG(same_bytes(a, b), "quantized from the parts differs from quantized from the file");
    char *out = NULL;
    CHECK(test_run(&out, "%s --check '%s'", test_tool("gguf-inspect"), part) == 0);
    CHECK_MSG(out && strstr(out, "OK (split model of 3 parts") && strstr(out, "272 tensors"),
              "%s", out ? out : "");
    free(out);
    /* A missing part: every tool says so in one line. */
    CHECK(test_run(NULL, "mv %s/m-00003-of-00003.gguf %s/away.gguf", dir, dir) == 0);
    char commands[3][1400];
    snprintf(commands[0], sizeof commands[0], "%s --check '%s'", test_tool("gguf-inspect"), part);
    snprintf(commands[1], sizeof commands[1],
             "%s -m '%s' -f tests/eval/data/licenses.txt.gz --chunks 1",
             test_tool("gguf-eval"), part);
    snprintf(commands[2], sizeof commands[2], "%s --merge '%s' %s/merged.gguf",
             test_tool("gguf-split"), part, dir);
    for (int i = 0; i < 3; i++) {
        CHECK(test_run(&out, "%s 2>&1 >/dev/null", commands[i]) == 1);
        CHECK_MSG(out && strstr(out, "m-00003-of-00003.gguf: cannot open") &&
                      strstr(out, "part 3 of 3") && strchr(out, '\n') == out + strlen(out) - 1,
                  "%s: %s", commands[i], out ? out : "");
        free(out);
    }
    remove_dir(dir);
}

TEST(test_split_cli_never_overwrites_an_input)
{
    const char *in = model();
    char dir[512];
    fresh_dir(dir, sizeof dir, "split_inputs");
    /* A plain model whose name is that of the first part the split would write. */
    CHECK(test_run(NULL, "cp '%s' %s/m-00001-of-00003.gguf", in, dir) == 0);
    char *out = NULL;
    CHECK(test_run(&out, "%s --split-max-tensors 100 %s/m-00001-of-00003.gguf %s/m",
                   test_tool("gguf-split"), dir, dir) == 1);
    CHECK_MSG(out && strstr(out, "m-00001-of-00003.gguf") && count_files(dir) == 1, "%s",
              out ? out : "");
    free(out);
    CHECK(test_run(NULL, "%s --split-max-tensors 100 %s/m-00001-of-00003.gguf %s/p",
                   test_tool("gguf-split"), dir, dir) == 0);
    CHECK(test_run(&out, "%s --merge %s/p-00001-of-00003.gguf %s/p-00002-of-00003.gguf",
                   test_tool("gguf-split"), dir, dir) == 1);
    CHECK_MSG(out && strstr(out, "p-00002-of-00003.gguf"), "%s", out ? out : "");
    free(out);
    remove_dir(dir);
}

TEST(test_split_cli_a_failed_write_leaves_no_part)
{
    const char *in = model();
    char dir[512];
    fresh_dir(dir, sizeof dir, "split_atomic");
    /* Files may not grow past 10 MB: part 1 (metadata only) is written, part 2 fails. */
    char *out = NULL;
    CHECK(test_run(&out, "trap '' XFSZ; ulimit -f 10000; %s --no-tensor-first-split "
                         "--split-max-size 40M '%s' %s/m", test_tool("gguf-split"), in,
                   dir) == 1);
    CHECK_MSG(out && strstr(out, "m-00002-of-00004.gguf"), "%s", out ? out : "");
    free(out);
    CHECK_MSG(count_files(dir) == 0, "files left in %s", dir);
    remove_dir(dir);
}

TEST(test_split_cli_refuses_bad_command_lines)
{
    static const char *const lines[] = {
        "--split --merge a b",      "--split-max-size 10K a b", "--split-max-size 0M a b",
        "--split-max-tensors 0 a b", "--split-max-tensors 4 --split-max-size 1G a b",
        "--merge --split-max-tensors 4 a b", "--strip-split-keys a b", "a",
        "--bogus a b",
    };
    for (size_t i = 0; i < sizeof lines / sizeof lines[0]; i++) {
        char *out = NULL;
        CHECK(test_run(&out, "%s %s", test_tool("gguf-split"), lines[i]) == 2);
        CHECK_MSG(out && strncmp(out, "gguf-split: ", 12) == 0 &&
                      strchr(out, '\n') == out + strlen(out) - 1, "'%s': %s", lines[i],
                  out ? out : "");
        free(out);
    }
}

TEST(test_split_cli_quantize_writes_the_parts_gguf_split_cuts)
{
    const char *in = model();
    char dir[512];
    fresh_dir(dir, sizeof dir, "split_quantize");
    /* From a split input to split outputs: the parts of the quantized whole file. */
    CHECK(test_run(NULL, "%s --split-max-tensors 100 '%s' %s/in", test_tool("gguf-split"), in,
                   dir) == 0);
    CHECK(test_run(NULL, "%s -q --allow-requantize '%s' %s/whole.gguf q8_0 2>/dev/null",
                   test_tool("gguf-quantize"), in, dir) == 0);
    static const char *const limits[] = {"--split-max-size 40M", "--split-max-tensors 50"};
    static const int n_parts[] = {4, 6};
    for (int l = 0; l < 2; l++) {
        char *out = NULL;
        CHECK(test_run(&out, "%s %s --allow-requantize %s/in-00002-of-00003.gguf %s/q q8_0 "
                             "2>/dev/null", test_tool("gguf-quantize"), limits[l], dir, dir) == 0);
        char parts_line[64];
        snprintf(parts_line, sizeof parts_line, "parts:   3 -> %d", n_parts[l]);
        CHECK_MSG(out && strstr(out, parts_line), "%s", out ? out : "");
        free(out);
        CHECK(test_run(NULL, "%s %s %s/whole.gguf %s/ref", test_tool("gguf-split"), limits[l],
                       dir, dir) == 0);
        for (int p = 0; p < n_parts[l]; p++) {
            char ours[600], theirs[600];
            snprintf(ours, sizeof ours, "%s/q-%05d-of-%05d.gguf", dir, p + 1, n_parts[l]);
            snprintf(theirs, sizeof theirs, "%s/ref-%05d-of-%05d.gguf", dir, p + 1, n_parts[l]);
            CHECK_MSG(same_bytes(ours, theirs), "%s: %s differs from gguf-split's part",
                      limits[l], ours);
        }
        CHECK(test_run(NULL, "rm -f %s/q-* %s/ref-*", dir, dir) == 0);
    }
    /* A failure in a later part leaves no part at all. */
    char *out = NULL;
    CHECK(test_run(&out, "trap '' XFSZ; ulimit -f 10000; %s -q --split-max-tensors 50 "
                         "--no-tensor-first-split --allow-requantize '%s' %s/q q8_0",
                   test_tool("gguf-quantize"), in, dir) == 1);
    CHECK_MSG(out && strstr(out, "q-00002-of-00007.gguf") && strstr(out, "File too large"), "%s",
              out ? out : "");
    free(out);
    CHECK(test_run(&out, "ls -A %s | grep -c '^q\\|tmp'", dir) == 1);
    free(out);
    remove_dir(dir);
}

TEST(test_split_cli_quantize_refuses_bad_split_options)
{
    static const char *const lines[] = {
        "--split-max-tensors 4 --split-max-size 1G a b q8_0", "--split-max-size 5 a b q8_0",
        "--split-max-tensors -1 a b q8_0", "--no-tensor-first-split a b q8_0",
    };
    for (size_t i = 0; i < sizeof lines / sizeof lines[0]; i++) {
        char *out = NULL;
        CHECK(test_run(&out, "%s %s", test_tool("gguf-quantize"), lines[i]) == 2);
        CHECK_MSG(out && strncmp(out, "gguf-quantize: ", 15) == 0 &&
                      strchr(out, '\n') == out + strlen(out) - 1, "'%s': %s", lines[i],
                  out ? out : "");
        free(out);
    }
}
