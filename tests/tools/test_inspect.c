/* Tests of gguf-inspect's report (text and JSON), tensor filter and command line, on the real
 * model and on small files written by gguf-py. */
#include "inspect_fixture.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

TEST(test_inspect_report_lists_header_keys_tensors_and_summaries)
{
    const char *model = inspect_model_or_skip();
    char *out = NULL;
    int rc = test_run(&out, "%s %s", INSPECT, model);
    CHECK_MSG(rc == 0, "exit %d: %s", rc, out);
    static const char *const expected[] = {
        "version         3\n",
        "kv count        33\n",
        "tensor count    272\n",
        "file size       98362432 ",
        "tokenizer.ggml.tokens                   array[string,49152]  [\"<|endoftext|>\"",
        "... (49152 elements)]",
        "llama.rope.freq_base                    float32              100000\n",
        "general.file_type                       uint32               3\n",
        "tensors: 272 ",
        "token_embd.weight          q8_0     [576, 49152]             0      30081024",
        "output_norm.weight",
        "tensor types: 3\n",
        "  f32           61 ",
        "  q4_1         210 ",
        "  q8_0           1 ",
        "architecture     llama\n",
        "parameters       134515008 (134.52 M)\n",
        "(92.10 MiB)",
        "bits per weight  5.74\n",
        "file type        3 MOSTLY_Q4_1 (llama.cpp: Q4_1)\n",
    };
    const char *missing = inspect_first_missing(out, expected, sizeof expected / sizeof expected[0]);
    CHECK_MSG(!missing, "missing '%s' in:\n%s", missing, out);
    free(out);
}

TEST(test_inspect_report_prints_every_value_type_and_escapes_strings)
{
    const char *small = inspect_crafted("small.gguf");
    CHECK(small);
    char *out = NULL;
    CHECK(test_run(&out, "%s %s", INSPECT, small) == 0);
    static const char *const expected[] = {
        "uint8             200\n", "int8              -100\n", "uint16            60000\n",
        "int16             -30000\n", "uint32            4000000000\n",
        "int32             -2000000000\n", "float32           0.1\n",
        "uint64            18000000000000000000\n", "int64             -9000000000000000000\n",
        "float64           2.5e-300\n", "bool              true\n",
        "\"say \\\"hi\\\"\\n\\tnaïve \\\\ end\"",
        "array[int32,100]  [0, 1, 2, 3, 4, 5, ... (100 elements)]",
        "array[string,3]   [\"alpha\", \"beta\", \"gamma\"]", "[0.5, -1.25, 3]",
        "tok.weight   q8_0     [32, 2]", "7 MOSTLY_Q8_0 (llama.cpp: Q8_0)",
    };
    const char *missing = inspect_first_missing(out, expected, sizeof expected / sizeof expected[0]);
    CHECK_MSG(!missing, "missing '%s' in:\n%s", missing, out);
    free(out);
}

TEST(test_inspect_escapes_invalid_utf8_and_control_sequences)
{
    const char *bytes = inspect_crafted("bytes.gguf");
    CHECK(bytes);
    char *out = NULL;
    CHECK(test_run(&out, "%s %s", INSPECT, bytes) == 0);
    CHECK_MSG(strstr(out, "\"ok\\xff\\xc3!\""), "%s", out);
    CHECK_MSG(strstr(out, "\"\\x1b[31mred\\xc2\\x9b2J\""), "%s", out);
    CHECK_MSG(strstr(out, "array[array,2]  [[1, 2], [3, 4, 5]]"), "%s", out);
    free(out);
    json_t *doc = inspect_json(bytes, 0);
    CHECK(doc);
    json_t *invalid = json_array_get(json_object_get(doc, "metadata"), 1);
    const char *replaced = "ok\xEF\xBF\xBD\xEF\xBF\xBD!"; /* each bad byte is U+FFFD */
    CHECK(strcmp(json_string_value(json_object_get(invalid, "value")), replaced) == 0);
    json_decref(doc);
}

TEST(test_inspect_full_prints_arrays_whole)
{
    const char *small = inspect_crafted("small.gguf");
    CHECK(small);
    char *out = NULL;
    CHECK(test_run(&out, "%s --full %s", INSPECT, small) == 0);
    CHECK(strstr(out, "[0, 1, 2, 3, 4, 5, 6, 7,"));
    CHECK(strstr(out, ", 98, 99]\n"));
    CHECK(!strstr(out, "elements)"));
    free(out);
}

TEST(test_inspect_guesses_file_type_like_llama_cpp_when_absent)
{
    const char *guess = inspect_crafted("guess.gguf");
    CHECK(guess);
    char *out = NULL;
    CHECK(test_run(&out, "%s %s", INSPECT, guess) == 0);
    CHECK_MSG(strstr(out, "file type        1 MOSTLY_F16 (llama.cpp: F16), "
                          "guessed: no valid general.file_type"),
              "%s", out);
    free(out);
}

TEST(test_inspect_json_has_the_report_fields)
{
    const char *model = inspect_model_or_skip();
    json_t *doc = inspect_json(model, 0);
    CHECK(doc);
    json_t *header = json_object_get(doc, "header");
    CHECK(json_integer_value(json_object_get(header, "kv_count")) == 33);
    CHECK(json_integer_value(json_object_get(header, "tensor_count")) == 272);
    CHECK(json_array_size(json_object_get(doc, "metadata")) == 33);
    CHECK(json_array_size(json_object_get(doc, "tensors")) == 272);
    json_t *model_info = json_object_get(doc, "model");
    CHECK(json_integer_value(json_object_get(model_info, "parameters")) == 134515008);
    CHECK(strcmp(json_string_value(json_object_get(model_info, "file_type_name")),
                 "MOSTLY_Q4_1") == 0);
    json_t *first = json_array_get(json_object_get(doc, "tensors"), 0);
    CHECK(strcmp(json_string_value(json_object_get(first, "type")), "q8_0") == 0);
    json_decref(doc);
}

TEST(test_inspect_json_matches_gguf_py_on_model)
{
    const char *model = inspect_model_or_skip();
    const char *json_path = test_tmpfile("model.json");
    char *out = NULL;
    CHECK(test_run(NULL, "%s --json %s > %s", INSPECT, model, json_path) == 0);
    int rc = test_run(&out, "python3 tests/tools/py/check_inspect_json.py %s %s", model, json_path);
    CHECK_MSG(rc == 0 && strstr(out, "OK 33 keys, 272 tensors"), "exit %d: %s", rc, out);
    free(out);
}

TEST(test_inspect_json_full_matches_gguf_py_on_crafted_files)
{
    static const char *const names[] = {"small.gguf", "edited.gguf", "guess.gguf"};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        const char *path = inspect_crafted(names[i]);
        CHECK(path);
        char json_path[600];
        snprintf(json_path, sizeof json_path, "%s", test_tmpfile("crafted.json"));
        char *out = NULL;
        CHECK(test_run(NULL, "%s --json --full %s > %s", INSPECT, path, json_path) == 0);
        int rc = test_run(&out, "python3 tests/tools/py/check_inspect_json.py %s %s --full", path,
                          json_path);
        CHECK_MSG(rc == 0, "%s: exit %d: %s", names[i], rc, out);
        free(out);
    }
}

TEST(test_inspect_tensors_glob_filters_text_and_json)
{
    const char *model = inspect_model_or_skip();
    char *out = NULL;
    CHECK(test_run(&out, "%s --tensors 'blk.1.*' %s", INSPECT, model) == 0);
    CHECK_MSG(strstr(out, "tensors: 9 of 272 match 'blk.1.*'"), "%s", out);
    CHECK(strstr(out, "blk.1.attn_q.weight"));
    CHECK(!strstr(out, "blk.2.attn_q.weight"));
    CHECK(!strstr(out, "token_embd.weight"));
    free(out);

    char args[600];
    snprintf(args, sizeof args, "--tensors '*_norm.weight' %s", model);
    json_t *doc = inspect_json(args, 0);
    CHECK(doc);
    json_t *tensors = json_object_get(doc, "tensors");
    CHECK(json_array_size(tensors) == 61);
    for (size_t i = 0; i < json_array_size(tensors); i++) {
        const char *name = json_string_value(json_object_get(json_array_get(tensors, i), "name"));
        CHECK(name && strstr(name, "_norm.weight"));
    }
    json_decref(doc);
}

TEST(test_inspect_rejects_unknown_option_with_usage_and_exit_2)
{
    char *out = NULL;
    CHECK(test_run(&out, "%s --bogus x.gguf 2>&1 >/dev/null", INSPECT) == 2);
    CHECK(strstr(out, "gguf-inspect: unknown or incomplete option '--bogus'"));
    CHECK(strstr(out, "usage: gguf-inspect"));
    free(out);
    CHECK(test_run(NULL, "%s", INSPECT) == 2);
    CHECK(test_run(NULL, "%s --check --hash x.gguf", INSPECT) == 2);
}

TEST(test_inspect_reports_unreadable_file_in_one_line)
{
    char *out = NULL;
    CHECK(test_run(&out, "%s /nonexistent/model.gguf", INSPECT) == 1);
    CHECK_MSG(strncmp(out, "gguf-inspect: /nonexistent/model.gguf: ", 39) == 0, "%s", out);
    CHECK(inspect_count_lines(out) == 1);
    free(out);
}

/* Write `len` bytes to the scratch file `name`; its path, or NULL. */
static const char *scratch_file(const char *name, const char *bytes, size_t len)
{
    const char *path = test_tmpfile(name);
    FILE *f = fopen(path, "wb");
    bool ok = f && fwrite(bytes, 1, len, f) == len;
    return f && fclose(f) == 0 && ok ? path : NULL;
}

TEST(test_inspect_bad_inputs_fail_in_one_line_naming_file_and_field)
{
    static const struct {
        const char *name, *bytes;
        size_t len;
        const char *needle;
    } cases[] = {
        {"empty.gguf", "", 0, "magic needs 4 bytes from byte 0 but the file ends at byte 0"},
        {"cut.gguf", "GGU", 3, "magic needs 4 bytes from byte 0 but the file ends at byte 3"},
        {"text.gguf", "hello, world", 12, "magic is 68 65 6c 6c, expected \"GGUF\""},
        {"header.gguf", "GGUF\3\0\0\0", 8, "tensor count needs 8 bytes from byte 8"},
        {NULL, NULL, 0, "is a directory, expected a GGUF file"}, /* the scratch directory */
    };
    static const char *const modes[] = {"", "--check", "--hash", "--json", "--full"};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char path[600];
        const char *made = cases[i].name
                               ? scratch_file(cases[i].name, cases[i].bytes, cases[i].len)
                               : test_tmpdir();
        CHECK(made);
        snprintf(path, sizeof path, "%s", made);
        char expected[700];
        snprintf(expected, sizeof expected, "gguf-inspect: %s: %s", path, cases[i].needle);
        for (size_t m = 0; m < sizeof modes / sizeof modes[0]; m++) {
            char *out = NULL;
            int rc = test_run(&out, "%s %s %s 2>&1 >/dev/null", INSPECT, modes[m], path);
            CHECK_MSG(rc == 1 && strstr(out, expected) == out && inspect_count_lines(out) == 1,
                      "%s %s: exit %d: %s", modes[m], path, rc, out);
            free(out);
        }
    }
}
