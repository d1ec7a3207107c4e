/* Tests of the gguf-quantize command line on small fixtures: every option, the dry run, the
 * report, and every refusal (exit status, one clear line, no output file left). */
#include "gguf/writer_test_support.h"
#include "quantize_fixture.h"
#include "test.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* A fresh directory holding the default fixture as in.gguf; returns the directory. */
static const char *fixture_dir(const char *name, const fixture_options *options)
{
    const char *dir = support_make_dir(name);
    char path[512];
    snprintf(path, sizeof path, "%s/in.gguf", dir);
    if (!fixture_write(path, options)) {
        fprintf(stderr, "cannot write fixture %s\n", path);
        abort();
    }
    return dir;
}

/* Run gguf-quantize with `args` (a printf format ending in the arguments) inside `dir`. */
#define QUANTIZE(out, dir, fmt, ...) \
    test_run(out, "cd %s && %s/" TEST_BIN_DIR "/gguf-quantize " fmt, dir, cwd(), __VA_ARGS__)

static const char *cwd(void)
{
    static char path[512];
    return getcwd(path, sizeof path) ? path : ".";
}

static int type_in(const char *dir, const char *file, const char *tensor)
{
    char path[512];
    snprintf(path, sizeof path, "%s/%s", dir, file);
    return fixture_tensor_type(path, tensor);
}

TEST(test_cli_default_run_prints_table_and_totals)
{
    const char *dir = fixture_dir("cli_default", &(fixture_options){0});
    char *out = NULL;
    int rc = QUANTIZE(&out, dir, "%s", "in.gguf out.gguf Q4_0");
    CHECK_MSG(rc == 0, "rc %d: %s", rc, out);
    CHECK(strstr(out, "blk.0.attn_q.weight") && strstr(out, "f32 -> q4_0"));
    CHECK(strstr(out, "output.weight") && strstr(out, "f32 -> q8_0"));
    CHECK(strstr(out, "blk.0.attn_norm.weight") && strstr(out, "copied"));
    CHECK(strstr(out, "bits per weight") && strstr(out, "MB/s"));
    CHECK_MSG(strstr(out, "warning: rows of 48 elements do not split into q4_0 blocks of 32: 1 "
                      "tensor falls back to f16 (blk.0.odd.weight)"),
              "%s", out);
    CHECK(type_in(dir, "out.gguf", "blk.0.attn_q.weight") == GGTK_TENSOR_Q4_0);
    CHECK(type_in(dir, "out.gguf", "output.weight") == GGTK_TENSOR_Q8_0);
    CHECK(type_in(dir, "out.gguf", "blk.0.odd.weight") == GGTK_TENSOR_F16);
    free(out);
}

TEST(test_cli_every_file_type_sets_llama_ftype)
{
    static const struct {
        const char *name;
        int type;
        int64_t ftype;
    } cases[] = {{"f32", GGTK_TENSOR_F32, 0},   {"F16", GGTK_TENSOR_F16, 1},
                 {"bf16", GGTK_TENSOR_BF16, 32}, {"Q4_0", GGTK_TENSOR_Q4_0, 2},
                 {"q4_1", GGTK_TENSOR_Q4_1, 3},  {"q5_0", GGTK_TENSOR_Q5_0, 8},
                 {"9", GGTK_TENSOR_Q5_1, 9},     {"q8_0", GGTK_TENSOR_Q8_0, 7}};
    const char *dir = fixture_dir("cli_types", &(fixture_options){0});
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char *out = NULL;
        int rc = QUANTIZE(&out, dir, "--pure -q in.gguf %s.gguf %s", cases[i].name, cases[i].name);
        CHECK_MSG(rc == 0, "%s: %s", cases[i].name, out);
        char file[64], path[600];
        snprintf(file, sizeof file, "%s.gguf", cases[i].name);
        snprintf(path, sizeof path, "%s/%s", dir, file);
        CHECK(type_in(dir, file, "blk.0.ffn_down.weight") == cases[i].type);
        CHECK(type_in(dir, file, "blk.0.attn_norm.weight") == GGTK_TENSOR_F32);
        CHECK_MSG(fixture_file_type(path) == cases[i].ftype, "%s", cases[i].name);
        free(out);
    }
}

TEST(test_cli_pure_output_embd_and_tensor_type_options)
{
    const char *dir = fixture_dir("cli_options", &(fixture_options){.tied = true});
    char *out = NULL;
    CHECK(QUANTIZE(&out, dir, "%s", "-q in.gguf default.gguf q5_0") == 0);
    CHECK(type_in(dir, "default.gguf", "token_embd.weight") == GGTK_TENSOR_Q8_0); /* tied */
    CHECK(QUANTIZE(&out, dir, "%s", "-q --pure in.gguf pure.gguf q5_0") == 0);
    CHECK(type_in(dir, "pure.gguf", "token_embd.weight") == GGTK_TENSOR_Q5_0);
    CHECK(QUANTIZE(&out, dir, "%s", "-q in.gguf embd.gguf q5_0 --embd-type f16") == 0);
    CHECK(type_in(dir, "embd.gguf", "token_embd.weight") == GGTK_TENSOR_F16);
    CHECK(QUANTIZE(&out, dir, "%s", "-q --output-tensor-type q4_1 in.gguf outt.gguf q5_0") == 0);
    CHECK(type_in(dir, "outt.gguf", "token_embd.weight") == GGTK_TENSOR_Q4_1); /* tied */
    int rc = QUANTIZE(&out, dir, "%s",
                      "-q in.gguf rules.gguf q4_0 --tensor-type 'attn_[qk]=q8_0' "
                      "--tensor-type ffn_down=bf16 -t 2");
    CHECK_MSG(rc == 0, "%s", out);
    CHECK(type_in(dir, "rules.gguf", "blk.0.attn_q.weight") == GGTK_TENSOR_Q8_0);
    CHECK(type_in(dir, "rules.gguf", "blk.0.attn_k.weight") == GGTK_TENSOR_Q8_0);
    CHECK(type_in(dir, "rules.gguf", "blk.0.ffn_down.weight") == GGTK_TENSOR_BF16);
    free(out);
}

TEST(test_cli_dry_run_shows_k_mix_rules_fallbacks_and_bits_per_weight)
{
    /* Planned whether or not this build writes K types. */
    const char *dir = fixture_dir("cli_dry_k", &(fixture_options){0});
    char *out = NULL;
    int rc = QUANTIZE(&out, dir, "%s", "--dry-run in.gguf Q4_K_M");
    CHECK_MSG(rc == 0, "%s", out);
    /* ffn_down (96-element rows, layer 0 of 0: use_more_bits) wants q6_K, falls back to q8_0. */
    CHECK_MSG(strstr(out, "f32 -> q8_0") && strstr(out, "ffn_down: use_more_bits; fallback: "
                                                          "96-element rows are not whole q6_K"),
              "%s", out);
    CHECK(strstr(out, "attn_q.weight") && strstr(out, "f32 -> q5_0") && strstr(out, "  5.50  "));
    CHECK(strstr(out, "output: rows not whole blocks, q8_0"));
    CHECK(strstr(out, "48-element rows are not whole q4_K blocks") && strstr(out, "f32 -> f16"));
    CHECK(strstr(out, "file type: Q4_K_M (general.file_type 15)"));
    CHECK(support_dir_entries(dir) == 1);
    rc = QUANTIZE(&out, dir, "%s", "--dry-run --no-fallback in.gguf q4_k_m");
    CHECK_MSG(rc == 2 && strstr(out, "tensor 'token_embd.weight': rows of 64 elements do not "
                                     "split into q4_K blocks of 256") &&
                  strstr(out, "--no-fallback"),
              "%s", out);
    free(out);
}

TEST(test_cli_dry_run_prints_the_plan_and_writes_nothing)
{
    const char *dir = fixture_dir("cli_dry", &(fixture_options){0});
    char *out = NULL;
    int rc = QUANTIZE(&out, dir, "%s", "--dry-run in.gguf q8_0");
    CHECK_MSG(rc == 0, "%s", out);
    CHECK(strstr(out, "blk.0.ffn_down.weight") && strstr(out, "96x64"));
    CHECK(strstr(out, "f32 -> q8_0") && strstr(out, "fallback"));
    CHECK(support_dir_entries(dir) == 1);
    CHECK(QUANTIZE(&out, dir, "%s", "--dry-run in.gguf planned.gguf q8_0") == 0);
    CHECK(support_dir_entries(dir) == 1);
    /* The size the dry run promises is the size the real run writes. */
    char promised[64] = "";
    const char *bytes = strstr(out, " bytes)");
    const char *open = bytes;
    while (open && open > out && open[-1] != '(')
        open--;
    CHECK(open && bytes - open < 60);
    snprintf(promised, sizeof promised, "%.*s", (int)(bytes - open), open);
    CHECK(QUANTIZE(&out, dir, "%s", "-q in.gguf real.gguf q8_0") == 0);
    char path[600];
    snprintf(path, sizeof path, "%s/real.gguf", dir);
    size_t size = 0;
    free(support_read_file(path, &size));
    CHECK_MSG((unsigned long long)size == strtoull(promised, NULL, 10), "%zu vs %s", size, promised);
    free(out);
}

TEST(test_cli_quiet_prints_only_warnings)
{
    const char *dir = fixture_dir("cli_quiet", &(fixture_options){0});
    char *out = NULL;
    CHECK(QUANTIZE(&out, dir, "%s", "-q --pure in.gguf out.gguf q8_0") == 0);
    static const char expected[] = "gguf-quantize: warning: rows of 48 elements";
    CHECK_MSG(strncmp(out, expected, sizeof expected - 1) == 0 &&
                  strchr(out, '\n') == out + strlen(out) - 1,
              "%s", out);
    free(out);
}

TEST(test_cli_allow_requantize_converts_quantized_input_with_a_warning)
{
    const char *dir = fixture_dir("cli_requant", &(fixture_options){.matrix_type = GGTK_TENSOR_Q8_0});
    char *out = NULL;
    int rc = QUANTIZE(&out, dir, "%s", "in.gguf out.gguf q4_0");
    CHECK(rc == 1 && strstr(out, "requantizing from q8_0 is disabled") &&
          strstr(out, "--allow-requantize"));
    CHECK(support_dir_entries(dir) == 1);
    rc = QUANTIZE(&out, dir, "%s", "--allow-requantize -q in.gguf out.gguf q4_0");
    CHECK_MSG(rc == 0 && strstr(out, "warning: requantizing 4 tensors"), "%s", out);
    CHECK(type_in(dir, "out.gguf", "blk.0.attn_q.weight") == GGTK_TENSOR_Q4_0);
    free(out);
}

TEST(test_cli_refuses_output_that_is_the_input)
{
    const char *dir = fixture_dir("cli_same", &(fixture_options){0});
    char *out = NULL;
    CHECK(QUANTIZE(&out, dir, "%s", "in.gguf in.gguf q8_0") == 1);
    CHECK_MSG(strstr(out, "OUT in.gguf: is the input IN in.gguf"), "%s", out);
    CHECK(QUANTIZE(&out, dir, "%s", "in.gguf ./in.gguf q8_0") == 1);
    CHECK(strstr(out, "OUT ./in.gguf: is the input IN in.gguf"));
    CHECK(test_run(NULL, "cd %s && ln in.gguf hard.gguf", dir) == 0);
    CHECK(QUANTIZE(&out, dir, "%s", "in.gguf hard.gguf q8_0") == 1);
    CHECK(strstr(out, "OUT hard.gguf: is the input IN in.gguf"));
    CHECK(type_in(dir, "in.gguf", "blk.0.attn_q.weight") == GGTK_TENSOR_F32);
    CHECK(support_dir_entries(dir) == 2);
    free(out);
}

TEST(test_cli_refuses_bad_types_and_options_with_usage_status)
{
    const char *dir = fixture_dir("cli_usage", &(fixture_options){0});
    char *out = NULL;
    CHECK(QUANTIZE(&out, dir, "%s", "in.gguf out.gguf q4_7") == 2);
    CHECK(strstr(out, "unknown file type 'q4_7'") && strstr(out, "Q4_K_M"));
    CHECK(QUANTIZE(&out, dir, "%s", "in.gguf out.gguf q8_1") == 2); /* no llama.cpp ftype */
    CHECK(QUANTIZE(&out, dir, "%s", "in.gguf out.gguf iq2_xs") == 2); /* rules not ported */
    CHECK(strstr(out, "unsupported file type 'iq2_xs'"));
    CHECK(QUANTIZE(&out, dir, "%s", "in.gguf out.gguf q4_0 --tensor-type attn_q") == 2);
    CHECK(strstr(out, "PATTERN=TYPE"));
    CHECK(QUANTIZE(&out, dir, "%s", "in.gguf out.gguf q4_0 --tensor-type 'a(b=q8_0'") == 2);
    CHECK(strstr(out, "regular expression"));
    CHECK(QUANTIZE(&out, dir, "%s", "in.gguf out.gguf q4_0 --output-type i32") == 2);
    CHECK(QUANTIZE(&out, dir, "%s", "in.gguf out.gguf q4_0 --embd-type q8_1") == 2);
    CHECK(strstr(out, "unsupported tensor type 'q8_1'") && strstr(out, "bf16"));
    CHECK(QUANTIZE(&out, dir, "%s", "in.gguf out.gguf q4_0 -t 0") == 2);
    CHECK(QUANTIZE(&out, dir, "%s", "in.gguf out.gguf q4_0 --bogus") == 2);
    CHECK(QUANTIZE(&out, dir, "%s", "in.gguf q4_0") == 2);
    CHECK(strstr(out, "expected IN OUT TYPE"));
    CHECK(QUANTIZE(&out, dir, "%s", "--help") == 0 && strstr(out, "usage: gguf-quantize"));
    CHECK(support_dir_entries(dir) == 1);
    free(out);
}

TEST(test_cli_refuses_nan_input_and_keeps_no_output)
{
    fixture_options nan = {.poison_tensor = "blk.0.attn_k.weight", .poison_row = 5,
                           .poison = 0.0f / 0.0f};
    const char *dir = fixture_dir("cli_nan", &nan);
    char *out = NULL;
    CHECK(QUANTIZE(&out, dir, "%s", "in.gguf out.gguf q8_0") == 1);
    CHECK_MSG(strstr(out, "tensor 'blk.0.attn_k.weight' row 5 column 3 holds NaN"), "%s", out);
    CHECK(support_dir_entries(dir) == 1);
    free(out);
}

TEST(test_cli_refuses_unreadable_input_and_unwritable_output)
{
    const char *dir = fixture_dir("cli_io", &(fixture_options){0});
    char *out = NULL;
    CHECK(QUANTIZE(&out, dir, "%s", "missing.gguf out.gguf q8_0") == 1);
    CHECK(strstr(out, "missing.gguf"));
    CHECK(test_run(NULL, "cd %s && head -c 100 in.gguf > short.gguf", dir) == 0);
    CHECK(QUANTIZE(&out, dir, "%s", "short.gguf out.gguf q8_0") == 1);
    CHECK(strstr(out, "short.gguf"));
    CHECK(QUANTIZE(&out, dir, "%s", "in.gguf no/such/dir/out.gguf q8_0") == 1);
    CHECK(strstr(out, "no/such/dir/out.gguf"));
    /* A directory nobody can create files in, even root: /proc. */
    CHECK(QUANTIZE(&out, dir, "%s", "in.gguf /proc/out.gguf q8_0") == 1);
    CHECK(strstr(out, "/proc/out.gguf"));
    if (geteuid() != 0) {
        CHECK(test_run(NULL, "mkdir %s/ro && chmod 555 %s/ro", dir, dir) == 0);
        CHECK(QUANTIZE(&out, dir, "%s", "in.gguf ro/out.gguf q8_0") == 1);
        char ro[600];
        snprintf(ro, sizeof ro, "%s/ro", dir);
        CHECK(support_dir_entries(ro) == 0);
    }
    CHECK(support_dir_entries(dir) == 2 + (geteuid() != 0));
    free(out);
}

TEST(test_cli_progress_bar_only_on_a_terminal_and_not_quiet)
{
    const char *dir = fixture_dir("cli_progress", &(fixture_options){0});
    char *out = NULL;
    CHECK(QUANTIZE(&out, dir, "%s", "in.gguf piped.gguf q8_0") == 0);
    CHECK(!strstr(out, "ETA"));
    free(out);
    if (access("/usr/bin/script", X_OK) != 0)
        SKIP("no /usr/bin/script to give the tool a terminal");
    /* script(1) runs the tool on a pseudo-terminal; stdout (the table) is dropped. */
    int rc = test_run(&out, "cd %s && script -qec '%s/" TEST_BIN_DIR "/gguf-quantize in.gguf "
                            "tty.gguf q8_0 >/dev/null' /dev/null",
                      dir, cwd());
    CHECK_MSG(rc == 0 && strstr(out, "10/10 tensors") && strstr(out, "MB/s") && strstr(out, "ETA"),
              "%s", out);
    free(out);
    rc = test_run(&out, "cd %s && script -qec '%s/" TEST_BIN_DIR "/gguf-quantize -q in.gguf "
                        "quiet.gguf q8_0 >/dev/null' /dev/null",
                  dir, cwd());
    CHECK_MSG(rc == 0 && !strstr(out, "ETA"), "%s", out);
    free(out);
}
