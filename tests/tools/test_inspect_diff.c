/* Tests of gguf-inspect A B (diff) and --check. */
#include "inspect_fixture.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

TEST(test_inspect_diff_of_a_file_with_itself_is_identical)
{
    const char *model = inspect_model_or_skip();
    char *out = NULL;
    int rc = test_run(&out, "%s %s %s", INSPECT, model, model);
    CHECK_MSG(rc == 0, "exit %d: %s", rc, out);
    CHECK_MSG(strstr(out, "identical: 0 differences; 272 tensors"), "%s", out);
    free(out);
}

TEST(test_inspect_diff_finds_edited_keys_and_changed_tensors)
{
    const char *small = inspect_crafted("small.gguf");
    const char *edited = inspect_crafted("edited.gguf");
    CHECK(small && edited);
    char *out = NULL;
    int rc = test_run(&out, "%s --diff %s %s", INSPECT, small, edited);
    CHECK_MSG(rc == 1, "exit %d: %s", rc, out);
    static const char *const expected[] = {
        "key_removed    test.u8  uint8 200\n",
        "key_added      extra.key  string \"added\"\n",
        "key_changed    general.name  string \"small\"  ->  string \"small v2\"\n",
        "tensor_removed ids  i32 [5]\n",
        "tensor_added   new.tensor  f32 [4]\n",
        "tensor_type    blk.0.w  f16 -> f32\n",
        "tensor_data    blk.1.w  xxh64 ",
        "different: 7 differences; 3 tensors",
    };
    const char *missing = inspect_first_missing(out, expected, sizeof expected / sizeof expected[0]);
    CHECK_MSG(!missing, "missing '%s' in:\n%s", missing, out);
    CHECK(!strstr(out, "tok.weight"));
    CHECK(!strstr(out, "norm.weight"));
    free(out);
}

TEST(test_inspect_diff_json_lists_the_differences)
{
    const char *small = inspect_crafted("small.gguf");
    const char *edited = inspect_crafted("edited.gguf");
    CHECK(small && edited);
    char args[1300];
    snprintf(args, sizeof args, "%s %s", small, edited);
    json_t *doc = inspect_json(args, 1);
    CHECK(doc);
    CHECK(json_is_false(json_object_get(doc, "identical")));
    json_t *list = json_object_get(doc, "differences");
    CHECK(json_array_size(list) == 7);
    json_t *changed = json_array_get(list, 2);
    CHECK(strcmp(json_string_value(json_object_get(changed, "kind")), "key_changed") == 0);
    CHECK(strcmp(json_string_value(json_object_get(changed, "name")), "general.name") == 0);
    CHECK(strcmp(json_string_value(json_object_get(changed, "a")), "small") == 0);
    CHECK(strcmp(json_string_value(json_object_get(changed, "b")), "small v2") == 0);
    json_t *removed = json_array_get(list, 0);
    CHECK(json_integer_value(json_object_get(removed, "a")) == 200);
    CHECK(json_object_get(removed, "b") == NULL);
    json_t *last = json_array_get(list, 6);
    CHECK(strcmp(json_string_value(json_object_get(last, "kind")), "tensor_data") == 0);
    CHECK(strcmp(json_string_value(json_object_get(last, "name")), "blk.1.w") == 0);
    const char *hash_a = json_string_value(json_object_get(last, "a"));
    const char *hash_b = json_string_value(json_object_get(last, "b"));
    CHECK(hash_a && hash_b && strlen(hash_a) == 16 && strcmp(hash_a, hash_b) != 0);
    json_decref(doc);
}

TEST(test_inspect_diff_names_the_changed_tensor_of_the_model)
{
    const char *model = inspect_model_or_skip();
    const char *modified = inspect_modified_model();
    CHECK(modified);
    char *out = NULL;
    int rc = test_run(&out, "%s %s %s", INSPECT, model, modified);
    CHECK_MSG(rc == 1, "exit %d: %s", rc, out);
    CHECK_MSG(strstr(out, "\ntensor_data    " MODIFIED_TENSOR "  xxh64 "), "%s", out);
    CHECK_MSG(strstr(out, "different: 1 differences; 272 tensors"), "%s", out);
    free(out);
}

TEST(test_inspect_diff_with_glob_ignores_other_tensors)
{
    const char *model = inspect_model_or_skip();
    const char *modified = inspect_modified_model();
    CHECK(modified);
    char *out = NULL;
    int rc = test_run(&out, "%s --tensors 'blk.4.*' %s %s", INSPECT, model, modified);
    CHECK_MSG(rc == 0, "exit %d: %s", rc, out);
    free(out);
}

TEST(test_inspect_check_accepts_the_model)
{
    const char *model = inspect_model_or_skip();
    char *out = NULL;
    int rc = test_run(&out, "%s --check %s", INSPECT, model);
    CHECK_MSG(rc == 0 && strstr(out, ": OK (version 3, 33 keys, 272 tensors)"), "exit %d: %s", rc,
              out);
    free(out);
}

TEST(test_inspect_check_rejects_a_truncated_model_in_one_line)
{
    const char *model = inspect_model_or_skip();
    const char *truncated = test_tmpfile("truncated.gguf");
    CHECK(test_run(NULL, "head -c 50000000 %s > %s", model, truncated) == 0);
    char *out = NULL;
    CHECK(test_run(&out, "%s --check %s", INSPECT, truncated) == 1);
    CHECK_MSG(strstr(out, "gguf-inspect: ") == out && strstr(out, "truncated.gguf: "), "%s", out);
    CHECK_MSG(inspect_count_lines(out) == 1, "%s", out);
    free(out);
}

TEST(test_inspect_check_rejects_a_nan_weight_in_one_line)
{
    const char *nan_file = inspect_crafted("nan.gguf");
    CHECK(nan_file);
    char *out = NULL;
    CHECK(test_run(&out, "%s --check %s", INSPECT, nan_file) == 1);
    CHECK_MSG(strstr(out, "tensor 'norm.weight': element 3 is NaN or infinite"), "%s", out);
    CHECK(inspect_count_lines(out) == 1);
    free(out);
    CHECK(test_run(NULL, "%s --check %s", INSPECT, inspect_crafted("small.gguf")) == 0);
}

/* Quantized tensors are checked through their dequantizer: element 256 is the first of the
 * second Q4_K block, whose scale is NaN. */
TEST(test_inspect_check_rejects_a_nan_block_scale_in_one_line)
{
    const char *nan_file = inspect_crafted("nan_q4_k.gguf");
    CHECK(nan_file);
    char *out = NULL;
    CHECK(test_run(&out, "%s --check %s", INSPECT, nan_file) == 1);
    CHECK_MSG(strstr(out, "tensor 'blk.2.k': element 256 (q4_K block at byte "), "%s", out);
    CHECK(inspect_count_lines(out) == 1);
    free(out);
}
