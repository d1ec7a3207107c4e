/* Tests of gguf-inspect --hash and --verify: hashes agree with the xxhash Python package, a
 * manifest verifies its own file and names the tensor that changed in a modified copy. */
#include "inspect_fixture.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Write the manifest of `path` to the scratch file `name`; returns its path (static buffer). */
static const char *write_manifest(const char *path, const char *name)
{
    static char manifest[600];
    snprintf(manifest, sizeof manifest, "%s", test_tmpfile(name));
    if (test_run(NULL, "%s --hash %s > %s", INSPECT, path, manifest) != 0)
        return NULL;
    return manifest;
}

TEST(test_inspect_hash_matches_python_xxhash_on_model)
{
    const char *model = inspect_model_or_skip();
    const char *manifest = write_manifest(model, "model.xxh64");
    CHECK(manifest);
    char *out = NULL;
    int rc = test_run(&out, "python3 tests/tools/py/check_hashes.py %s %s", model, manifest);
    CHECK_MSG(rc == 0 && strstr(out, "OK 272"), "exit %d: %s", rc, out);
    free(out);
}

TEST(test_inspect_hash_matches_python_xxhash_on_crafted_file)
{
    const char *small = inspect_crafted("small.gguf");
    CHECK(small);
    const char *manifest = write_manifest(small, "small.xxh64");
    CHECK(manifest);
    char *out = NULL;
    int rc = test_run(&out, "python3 tests/tools/py/check_hashes.py %s %s", small, manifest);
    CHECK_MSG(rc == 0 && strstr(out, "OK 5"), "exit %d: %s", rc, out);
    free(out);
}

TEST(test_inspect_hash_with_glob_lists_only_matching_tensors)
{
    const char *model = inspect_model_or_skip();
    char *out = NULL;
    CHECK(test_run(&out, "%s --hash --tensors 'blk.0.*' %s", INSPECT, model) == 0);
    CHECK_MSG(inspect_count_lines(out) == 9, "%s", out);
    CHECK(strstr(out, "  blk.0.ffn_up.weight\n"));
    CHECK(!strstr(out, "  all\n"));
    free(out);
}

TEST(test_inspect_json_with_hash_carries_the_manifest_hashes)
{
    const char *small = inspect_crafted("small.gguf");
    CHECK(small);
    char *manifest = NULL, *json = NULL;
    CHECK(test_run(&manifest, "%s --hash %s", INSPECT, small) == 0);
    CHECK(test_run(&json, "%s --hash --json %s", INSPECT, small) == 0);
    char all[17] = {0}, expected[64];
    memcpy(all, strstr(manifest, "  all\n") - 16, 16);
    snprintf(expected, sizeof expected, "\"xxh64_all\": \"%s\"", all);
    CHECK_MSG(strstr(json, expected), "%s not in %s", expected, json);
    free(manifest);
    free(json);
}

TEST(test_inspect_verify_accepts_the_file_the_manifest_came_from)
{
    const char *model = inspect_model_or_skip();
    const char *manifest = write_manifest(model, "verify.xxh64");
    CHECK(manifest);
    char *out = NULL;
    int rc = test_run(&out, "%s --verify %s %s", INSPECT, manifest, model);
    CHECK_MSG(rc == 0 && strstr(out, ": OK, matches "), "exit %d: %s", rc, out);
    free(out);
}

TEST(test_inspect_verify_names_the_modified_tensor)
{
    const char *model = inspect_model_or_skip();
    const char *manifest = write_manifest(model, "original.xxh64");
    CHECK(manifest);
    const char *modified = inspect_modified_model();
    CHECK(modified);
    char *out = NULL;
    int rc = test_run(&out, "%s --verify %s %s", INSPECT, manifest, modified);
    CHECK_MSG(rc == 1, "exit %d: %s", rc, out);
    CHECK_MSG(strstr(out, "DIFFERS  " MODIFIED_TENSOR " (manifest "), "%s", out);
    CHECK(strstr(out, "DIFFERS  all (manifest "));
    CHECK(strstr(out, "gguf-inspect: "));
    CHECK_MSG(inspect_count_lines(out) == 3, "expected two mismatches and the error: %s", out);
    free(out);
}

TEST(test_inspect_verify_rejects_a_malformed_manifest)
{
    const char *small = inspect_crafted("small.gguf");
    CHECK(small);
    const char *manifest = test_tmpfile("bad.xxh64");
    CHECK(test_run(NULL, "printf 'not-a-hash  tok.weight\\n' > %s", manifest) == 0);
    char *out = NULL;
    CHECK(test_run(&out, "%s --verify %s %s", INSPECT, manifest, small) == 1);
    CHECK_MSG(strstr(out, "bad.xxh64: line 1: expected"), "%s", out);
    CHECK(inspect_count_lines(out) == 1);
    free(out);
    /* An empty manifest is refused, unless a filter could have left it empty. */
    manifest = test_tmpfile("empty.xxh64");
    CHECK(test_run(NULL, ": > %s", manifest) == 0);
    CHECK(test_run(&out, "%s --verify %s %s", INSPECT, manifest, small) == 1);
    CHECK_MSG(strstr(out, "gguf-inspect: ") == out && strstr(out, "empty.xxh64: no manifest lines"),
              "%s", out);
    CHECK(inspect_count_lines(out) == 1);
    free(out);
    CHECK(test_run(NULL, "%s --verify %s --tensors 'no.such.*' %s", INSPECT, manifest, small) == 0);
    CHECK(test_run(&out, "%s --verify %s %s", INSPECT, test_tmpdir(), small) == 1);
    CHECK_MSG(strstr(out, ": cannot read manifest: Is a directory"), "%s", out);
    CHECK(inspect_count_lines(out) == 1);
    free(out);
}
