/* Tests of gguf-inspect on hostile input: names holding newlines, tabs and terminal escapes never
 * reach the output raw nor forge lines, the manifest stays exact for them, --verify covers
 * metadata and bounds what it reads, and --json keeps non-finite floats. */
#include "inspect_fixture.h"

#include <ggtk/gguf.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* True when `text` holds no control byte but the line ends (and no DEL). */
static bool printable_lines(const char *text)
{
    for (const unsigned char *p = (const unsigned char *)text; *p; p++)
        if ((*p < 0x20 && *p != '\n') || *p == 0x7F)
            return false;
    return true;
}

/* Lines of `text` that start with `prefix`. */
static int lines_starting_with(const char *text, const char *prefix)
{
    int n = 0;
    for (const char *line = text; *line;) {
        n += strncmp(line, prefix, strlen(prefix)) == 0;
        const char *end = strchr(line, '\n');
        if (!end)
            break;
        line = end + 1;
    }
    return n;
}

TEST(test_inspect_prints_hostile_names_escaped_one_line_each)
{
    const char *hostile = inspect_crafted("hostile.gguf");
    const char *small = inspect_crafted("small.gguf");
    CHECK(hostile && small);
    char *out = NULL;
    CHECK(test_run(&out, "%s %s", INSPECT, hostile) == 0);
    CHECK_MSG(printable_lines(out), "raw control byte in:\n%s", out);
    static const char *const expected[] = {
        "  key\\nforged.row       string  \"value\\nforged\"\n",
        "  esc\\x1b[31m.key       uint32  1\n",
        "  tab\\tkey              bool    true\n",
        "      0  line\\nforged  q8_0  [1]  f32 ",
        "      1  red\\x1b[31mname          f32 ",
        "      2  tab\\tname                f32 ",
        "      3  back\\\\slash              f32 ",
        "  architecture     evil\\x1b[2Jarch\\n\n",
    };
    const char *missing = inspect_first_missing(out, expected, sizeof expected / sizeof expected[0]);
    CHECK_MSG(!missing, "missing '%s' in:\n%s", missing, out);
    /* One row per key and per tensor: 4 keys (2 spaces of indent), 4 tensor rows. */
    CHECK_MSG(lines_starting_with(out, "      ") == 4, "%s", out);
    free(out);
    CHECK(test_run(&out, "%s %s %s", INSPECT, hostile, small) == 1);
    CHECK_MSG(printable_lines(out), "raw control byte in:\n%s", out);
    CHECK_MSG(strstr(out, "\ntensor_removed line\\nforged  q8_0  [1]  f32 [4]\n"), "%s", out);
    CHECK_MSG(lines_starting_with(out, "tensor_removed ") == 4, "%s", out);
    free(out);
}

TEST(test_inspect_check_names_a_hostile_tensor_escaped)
{
    const char *hostile = inspect_crafted("hostile.gguf");
    CHECK(hostile);
    char *out = NULL;
    CHECK(test_run(&out, "%s --check %s", INSPECT, hostile) == 1);
    CHECK_MSG(strstr(out, "tensor 'red\\x1b[31mname': element 2 is NaN"), "%s", out);
    CHECK(printable_lines(out) && inspect_count_lines(out) == 1);
    free(out);
}

TEST(test_inspect_hash_and_verify_stay_exact_for_hostile_names)
{
    const char *hostile = inspect_crafted("hostile.gguf");
    CHECK(hostile);
    const char *manifest = test_tmpfile("hostile.xxh64");
    char *out = NULL;
    CHECK(test_run(NULL, "%s --hash %s > %s", INSPECT, hostile, manifest) == 0);
    CHECK(test_run(&out, "cat %s", manifest) == 0);
    CHECK_MSG(printable_lines(out) && inspect_count_lines(out) == 4 + 4 + 1, "%s", out);
    CHECK_MSG(strstr(out, "  line\\nforged  q8_0  [1]\n") && strstr(out, "  back\\\\slash\n") &&
                  strstr(out, "  esc\\x1b[31m.key\n"),
              "%s", out);
    free(out);
    int rc = test_run(&out, "python3 tests/tools/py/check_hashes.py %s %s", hostile, manifest);
    CHECK_MSG(rc == 0 && strstr(out, "OK 4 tensors, 4 keys"), "exit %d: %s", rc, out);
    free(out);
    rc = test_run(&out, "%s --verify %s %s", INSPECT, manifest, hostile);
    CHECK_MSG(rc == 0 && strstr(out, ": OK, matches "), "exit %d: %s", rc, out);
    free(out);
}

/* A copy of small.gguf with general.name changed, made with the writer's copy-with-edits API. */
static const char *renamed_copy(const char *small)
{
    static char path[600];
    snprintf(path, sizeof path, "%s", test_tmpfile("renamed.gguf"));
    ggtk_file *source = ggtk_open(small, GGTK_OPEN_MMAP, NULL);
    ggtk_writer *w = source ? ggtk_writer_new_from_file(source) : NULL;
    bool ok = w && ggtk_writer_set_string(w, "general.name", "renamed") == GGTK_OK &&
              ggtk_writer_write_from(w, path, source, NULL) == GGTK_OK;
    ggtk_writer_free(w);
    ggtk_close(source);
    return ok ? path : NULL;
}

TEST(test_inspect_verify_reports_changed_metadata_and_matching_tensors)
{
    const char *small = inspect_crafted("small.gguf");
    CHECK(small);
    char manifest[600]; /* test_tmpfile() reuses its buffer */
    snprintf(manifest, sizeof manifest, "%s", test_tmpfile("small-meta.xxh64"));
    CHECK(test_run(NULL, "%s --hash %s > %s", INSPECT, small, manifest) == 0);
    const char *renamed = renamed_copy(small);
    CHECK(renamed);
    char *out = NULL;
    int rc = test_run(&out, "%s --verify %s %s", INSPECT, manifest, renamed);
    CHECK_MSG(rc == 1, "exit %d: %s", rc, out);
    CHECK_MSG(strstr(out, "DIFFERS  key general.name (manifest "), "%s", out);
    CHECK_MSG(strstr(out, "mismatches against") && strstr(out, "(metadata: 1 keys, tensors: 0)"),
              "%s", out);
    CHECK_MSG(strstr(out, ": tensor data OK, all ") && strstr(out, "metadata differs in 1 keys"),
              "%s", out);
    CHECK_MSG(inspect_count_lines(out) == 3, "only the key, tensor data OK and the summary: %s",
              out);
    free(out);
    /* --tensors narrows the check to tensor data, which is unchanged. */
    rc = test_run(&out, "%s --verify %s --tensors '*' %s", INSPECT, manifest, renamed);
    CHECK_MSG(rc == 0, "exit %d: %s", rc, out);
    free(out);
}

TEST(test_inspect_verify_notes_an_old_manifest_without_metadata)
{
    const char *small = inspect_crafted("small.gguf");
    CHECK(small);
    const char *manifest = test_tmpfile("old.xxh64");
    CHECK(test_run(NULL, "%s --hash %s | grep -v '^key ' > %s", INSPECT, small, manifest) == 0);
    char *out = NULL;
    int rc = test_run(&out, "%s --verify %s %s", INSPECT, manifest, small);
    CHECK_MSG(rc == 0 && strstr(out, "has no 'key' lines") && strstr(out, ": OK, matches "),
              "exit %d: %s", rc, out);
    free(out);
}

TEST(test_inspect_verify_refuses_a_20_mb_line_in_bounded_memory)
{
    const char *small = inspect_crafted("small.gguf");
    CHECK(small);
    const char *manifest = test_tmpfile("huge.xxh64");
    FILE *f = fopen(manifest, "w");
    CHECK(f);
    fputs("0123456789abcdef  ", f);
    for (int i = 0; i < 20 * 1024; i++)
        fprintf(f, "%01024d", i);
    CHECK(fclose(f) == 0);
    char *out = NULL;
#ifdef __SANITIZE_ADDRESS__
    const char *limit = ""; /* AddressSanitizer reserves terabytes of address space */
#else
    const char *limit = "ulimit -v 30000; "; /* 30 MB: a 20 MB line read whole would not fit */
#endif
    int rc = test_run(&out, "%s%s --verify %s %s", limit, INSPECT, manifest, small);
    CHECK_MSG(rc == 1 && strstr(out, "huge.xxh64: line 1: longer than 65536 bytes"), "exit %d: %s",
              rc, out);
    CHECK(inspect_count_lines(out) == 1);
    free(out);
}

TEST(test_inspect_verify_refuses_raw_control_bytes_in_a_manifest)
{
    const char *small = inspect_crafted("small.gguf");
    CHECK(small);
    const char *manifest = test_tmpfile("raw.xxh64");
    CHECK(test_run(NULL, "printf '0123456789abcdef  tok\\033[31m\\n' > %s", manifest) == 0);
    char *out = NULL;
    CHECK(test_run(&out, "%s --verify %s %s", INSPECT, manifest, small) == 1);
    CHECK_MSG(strstr(out, "raw.xxh64: line 1: the name holds a control character"), "%s", out);
    CHECK(printable_lines(out) && inspect_count_lines(out) == 1);
    free(out);
    /* One space or a tab is not the separator --hash writes. */
    CHECK(test_run(NULL, "printf '0123456789abcdef\\ttok.weight\\n' > %s", manifest) == 0);
    CHECK(test_run(&out, "%s --verify %s %s", INSPECT, manifest, small) == 1);
    CHECK_MSG(strstr(out, "raw.xxh64: line 1: expected '<16 hex digits>  <tensor name>'"), "%s",
              out);
    free(out);
}

TEST(test_inspect_json_keeps_non_finite_floats_as_strings)
{
    const char *nonfinite = inspect_crafted("nonfinite.gguf");
    CHECK(nonfinite);
    char *out = NULL;
    int rc = test_run(&out,
                      "%s --json %s | python3 -c 'import json, sys; d = json.load(sys.stdin); "
                      "v = {m[\"key\"]: m[\"value\"] for m in d[\"metadata\"]}; "
                      "print(v[\"test.nan\"], v[\"test.inf\"], v[\"test.neg_inf\"], v[\"test.floats\"])'",
                      INSPECT, nonfinite);
    CHECK_MSG(rc == 0 && strcmp(out, "nan inf -inf [1.5, 'nan']\n") == 0, "exit %d: %s", rc, out);
    free(out);
    json_t *doc = inspect_json(nonfinite, 0);
    CHECK(doc);
    CHECK(json_array_size(json_object_get(doc, "metadata")) == 5);
    json_decref(doc);
}
