/* Split models in libgguf: ggtk_split_open() on small sets written here with the writer (parts
 * named and keyed as llama-gguf-split writes them), the part naming, and every hostile set: a
 * missing part, mismatched counts, a part of another model, a duplicate tensor, split.no out of
 * range, mistyped keys. Each failure must be one line naming the file and the field. Also the
 * writer side: ggtk_writer_split() cutting a whole file into parts, and a finish without rename. */
#include <ggtk/gguf.h>
#include "test.h"
#include "writer_test_support.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* What one part of a test set holds. */
typedef struct part_spec {
    int no, count, tensors_count; /* split.no, split.count, split.tensors.count; -1 leaves out */
    const char *arch;             /* general.architecture, NULL for none */
    const char *tensors[3];       /* names of its tensors (4 floats each), NULL-terminated */
} part_spec;

static char prefix[640];

static const char *part_path(int no, int count)
{
    static char path[700];
    ggtk_split_part_path(path, sizeof path, prefix, no, count);
    return path;
}

/* Write `spec` as part `file_no` of `file_count` (the name may disagree with the keys). Each
 * tensor's floats are its index in the part plus 100 * the part's file number. */
static void write_part(const part_spec *spec, int file_no, int file_count)
{
    ggtk_writer *w = ggtk_writer_new();
    CHECK(w);
    if (spec->arch)
        CHECK(ggtk_writer_set_string(w, "general.architecture", spec->arch) == GGTK_OK);
    if (spec->no >= 0)
        CHECK(ggtk_writer_set_u16(w, GGTK_SPLIT_KEY_NO, (uint16_t)spec->no) == GGTK_OK);
    if (spec->tensors_count >= 0)
        CHECK(ggtk_writer_set_i32(w, GGTK_SPLIT_KEY_TENSORS_COUNT, spec->tensors_count) == GGTK_OK);
    if (spec->count >= 0)
        CHECK(ggtk_writer_set_u16(w, GGTK_SPLIT_KEY_COUNT, (uint16_t)spec->count) == GGTK_OK);
    const uint64_t ne[1] = {4};
    int n = 0;
    while (n < 3 && spec->tensors[n])
        CHECK(ggtk_writer_add_tensor(w, spec->tensors[n++], GGTK_TENSOR_F32, 1, ne) == GGTK_OK);
    ggtk_error err = {0};
    CHECK_MSG(ggtk_writer_begin(w, part_path(file_no, file_count), &err) == GGTK_OK, "%s",
              err.message);
    for (int i = 0; i < n; i++) {
        float data[4];
        for (int k = 0; k < 4; k++)
            data[k] = (float)(100 * file_no + i);
        CHECK(ggtk_writer_write_data(w, data, sizeof data, &err) == GGTK_OK);
    }
    CHECK_MSG(ggtk_writer_finish(w, &err) == GGTK_OK, "%s", err.message);
    ggtk_writer_free(w);
}

/* A fresh directory with the parts of `specs` named 1..n of n. */
static void write_set(const char *dir_name, const part_spec *specs, int n)
{
    snprintf(prefix, sizeof prefix, "%s/model", support_make_dir(dir_name));
    for (int i = 0; i < n; i++)
        write_part(&specs[i], i, n);
}

/* A good set of three parts: five tensors. */
static const part_spec GOOD[3] = {
    {0, 3, 5, "llama", {"a", "b", NULL}},
    {1, 3, 5, NULL, {"c", NULL}},
    {2, 3, 5, NULL, {"d", "e", NULL}},
};

/* The failure of the latest expect_failure(). */
static ggtk_error failure;

/* Open part `no` of the set, which must fail with one line in `failure`. */
static void expect_failure(int no, int count)
{
    memset(&failure, 0, sizeof failure);
    ggtk_split *set = ggtk_split_open(part_path(no, count), GGTK_OPEN_MMAP, &failure);
    CHECK_MSG(!set, "the set opened");
    CHECK_MSG(failure.message[0] && !strchr(failure.message, '\n'), "not one line: '%s'",
              failure.message);
}

TEST(test_split_open_any_part_gives_every_tensor_in_part_order)
{
    write_set("split_good", GOOD, 3);
    for (int given = 0; given < 3; given++) {
        ggtk_error err = {0};
        ggtk_split *set = ggtk_split_open(part_path(given, 3), GGTK_OPEN_MMAP, &err);
        CHECK_MSG(set, "%s", err.message);
        CHECK(ggtk_split_part_count(set) == 3);
        CHECK(strcmp(ggtk_path(ggtk_split_part(set, 0)), part_path(0, 3)) == 0);
        CHECK(ggtk_split_tensor_count(set) == 5);
        static const char *const names[5] = {"a", "b", "c", "d", "e"};
        static const int parts[5] = {0, 0, 1, 2, 2};
        for (int i = 0; i < 5; i++) {
            int part = -1;
            const ggtk_tensor_info *t = ggtk_split_tensor(set, i, &part);
            CHECK(t && strcmp(t->name, names[i]) == 0 && part == parts[i]);
            CHECK(ggtk_split_find_tensor(set, names[i]) == i);
            /* The data is read from the tensor's own part. */
            float first;
            memcpy(&first, t->data, sizeof first);
            int index_in_part = i - (parts[i] == 0 ? 0 : parts[i] == 1 ? 2 : 3);
            CHECK_MSG(first == (float)(100 * parts[i] + index_in_part), "tensor %s: %g",
                      names[i], first);
        }
        CHECK(ggtk_split_find_tensor(set, "f") == -1);
        CHECK(ggtk_split_tensor(set, 5, NULL) == NULL);
        const char *arch = NULL;
        CHECK(ggtk_get_string(ggtk_split_part(set, 0), "general.architecture", &arch) == GGTK_OK);
        ggtk_split_close(set);
    }
}

TEST(test_split_open_plain_file_is_a_set_of_one)
{
    const char *model = test_model_path();
    if (!model)
        SKIP("the test model is missing (make models)");
    ggtk_error err = {0};
    ggtk_split *set = ggtk_split_open(model, GGTK_OPEN_METADATA, &err);
    CHECK_MSG(set, "%s", err.message);
    CHECK(ggtk_split_part_count(set) == 1);
    CHECK(ggtk_split_tensor_count(set) == ggtk_tensor_count(ggtk_split_part(set, 0)));
    CHECK(ggtk_split_find_tensor(set, "output_norm.weight") >= 0);
    ggtk_split_close(set);
}

TEST(test_split_part_names_follow_llama_gguf_split)
{
    char path[64];
    CHECK(ggtk_split_part_path(path, sizeof path, "dir/m", 1, 3) == strlen("dir/m-00002-of-00003.gguf"));
    CHECK(strcmp(path, "dir/m-00002-of-00003.gguf") == 0);
    CHECK(ggtk_split_prefix_length("dir/m-00002-of-00003.gguf", 1, 3) == 5);
    CHECK(ggtk_split_prefix_length("dir/m-00002-of-00003.gguf", 0, 3) == 0);
    CHECK(ggtk_split_prefix_length("-00002-of-00003.gguf", 1, 3) == 0);
    CHECK(ggtk_split_prefix_length("m-00002-of-00003.gguf.bak", 1, 3) == 0);
}

TEST(test_split_missing_part_names_it)
{
    write_set("split_missing", GOOD, 3);
    char missing[700];
    snprintf(missing, sizeof missing, "%s", part_path(1, 3));
    CHECK(remove(missing) == 0);
    expect_failure(2, 3);
    CHECK_MSG(failure.status == GGTK_ERR_IO && strstr(failure.message, missing) && strstr(failure.message, "part 2 of 3"),
              "%s", failure.message);
}

TEST(test_split_mismatched_split_count_is_refused)
{
    part_spec specs[3] = {GOOD[0], GOOD[1], GOOD[2]};
    specs[2].count = 4;
    write_set("split_count", specs, 3);
    expect_failure(0, 3);
    CHECK_MSG(failure.status == GGTK_ERR_INVALID && strstr(failure.message, part_path(2, 3)) &&
                  strstr(failure.message, "split.count is 4"), "%s", failure.message);
}

TEST(test_split_tensor_counts_must_add_up)
{
    part_spec specs[3] = {GOOD[0], GOOD[1], GOOD[2]};
    for (int i = 0; i < 3; i++)
        specs[i].tensors_count = 6;
    write_set("split_total", specs, 3);
    expect_failure(1, 3);
    CHECK_MSG(failure.status == GGTK_ERR_INVALID && strstr(failure.message, part_path(0, 3)) &&
                  strstr(failure.message, "split.tensors.count is 6, but the 3 parts hold 5"),
              "%s", failure.message);
}

TEST(test_split_part_of_another_model_is_refused)
{
    /* Another model's part: its own tensor total, or another architecture. */
    part_spec specs[3] = {GOOD[0], GOOD[1], GOOD[2]};
    specs[1].tensors_count = 9;
    write_set("split_other_total", specs, 3);
    expect_failure(0, 3);
    CHECK_MSG(failure.status == GGTK_ERR_INVALID && strstr(failure.message, part_path(1, 3)) &&
                  strstr(failure.message, "split.tensors.count is 9"), "%s", failure.message);
    specs[1].tensors_count = 5;
    specs[1].arch = "gemma3";
    write_set("split_other_arch", specs, 3);
    expect_failure(0, 3);
    CHECK_MSG(failure.status == GGTK_ERR_INVALID && strstr(failure.message, part_path(1, 3)) &&
                  strstr(failure.message, "general.architecture is 'gemma3'"), "%s", failure.message);
}

TEST(test_split_duplicate_tensor_across_parts_is_refused)
{
    part_spec specs[3] = {GOOD[0], GOOD[1], GOOD[2]};
    specs[2].tensors[1] = "b";
    write_set("split_duplicate", specs, 3);
    char first[700];
    snprintf(first, sizeof first, "%s", part_path(0, 3));
    expect_failure(0, 3);
    CHECK_MSG(failure.status == GGTK_ERR_DUPLICATE && strstr(failure.message, part_path(2, 3)) &&
                  strstr(failure.message, "tensor 'b' is also in") && strstr(failure.message, first),
              "%s", failure.message);
}

TEST(test_split_no_out_of_range_or_disagreeing_with_the_name_is_refused)
{
    part_spec specs[3] = {GOOD[0], GOOD[1], GOOD[2]};
    specs[2].no = 7;
    write_set("split_no_range", specs, 3);
    expect_failure(2, 3);
    CHECK_MSG(failure.status == GGTK_ERR_INVALID && strstr(failure.message, part_path(2, 3)) &&
                  strstr(failure.message, "split.no 7 is out of range for split.count 3"), "%s", failure.message);
    /* Found through another part: its split.no must match its place. */
    expect_failure(0, 3);
    CHECK_MSG(failure.status == GGTK_ERR_INVALID && strstr(failure.message, part_path(2, 3)) &&
                  strstr(failure.message, "split.no is 7, expected 2"), "%s", failure.message);
    /* Given directly, a part whose name says another place cannot lead to the others. */
    specs[2].no = 1;
    write_set("split_no_name", specs, 3);
    expect_failure(2, 3);
    CHECK_MSG(failure.status == GGTK_ERR_INVALID && strstr(failure.message, "-00002-of-00003.gguf"), "%s",
              failure.message);
}

TEST(test_split_keys_of_another_type_are_refused)
{
    write_set("split_key_type", GOOD, 3);
    /* Rewrite part 2 with split.count as uint32. */
    ggtk_writer *w = ggtk_writer_new();
    CHECK(w && ggtk_writer_set_u16(w, GGTK_SPLIT_KEY_NO, 1) == GGTK_OK &&
          ggtk_writer_set_u32(w, GGTK_SPLIT_KEY_COUNT, 3) == GGTK_OK);
    ggtk_error err = {0};
    CHECK(ggtk_writer_begin(w, part_path(1, 3), &err) == GGTK_OK &&
          ggtk_writer_finish(w, &err) == GGTK_OK);
    ggtk_writer_free(w);
    expect_failure(0, 3);
    CHECK_MSG(failure.status == GGTK_ERR_TYPE && strstr(failure.message, part_path(1, 3)) &&
                  strstr(failure.message, "split.count has type uint32, expected uint16") &&
                  strstr(failure.message, "(at byte"), "%s", failure.message);
}

TEST(test_split_missing_split_no_in_a_part_is_refused)
{
    part_spec specs[3] = {GOOD[0], GOOD[1], GOOD[2]};
    specs[1].no = -1;
    write_set("split_no_missing", specs, 3);
    expect_failure(0, 3);
    CHECK_MSG(failure.status == GGTK_ERR_NOT_FOUND && strstr(failure.message, part_path(1, 3)) &&
                  strstr(failure.message, "missing split.no"), "%s", failure.message);
}

/* A writer of the whole file for the cutting tests: general.name, then tensors t0..t<n-1> of
 * `floats[i]` F32 values each (shape [floats, 1], whose trailing 1 ggml does not write). */
static void whole_file(ggtk_writer **out, int n, const uint64_t *floats)
{
    ggtk_writer *w = *out = ggtk_writer_new();
    CHECK(w && ggtk_writer_set_string(w, "general.name", "whole") == GGTK_OK);
    CHECK(ggtk_writer_set_u16(w, GGTK_SPLIT_KEY_COUNT, 9) == GGTK_OK); /* dropped by the cut */
    for (int i = 0; i < n; i++) {
        char name[16];
        snprintf(name, sizeof name, "t%d", i);
        const uint64_t ne[2] = {floats[i], 1};
        CHECK(ggtk_writer_add_tensor(w, name, GGTK_TENSOR_F32, 2, ne) == GGTK_OK);
    }
}

static int64_t tensors_in(ggtk_writer *const *parts, int p)
{
    return ggtk_writer_tensor_count(parts[p]);
}

TEST(test_split_writer_cuts_by_tensor_count_with_the_split_keys_last)
{
    const uint64_t floats[5] = {8, 8, 8, 8, 8};
    ggtk_writer *whole;
    whole_file(&whole, 5, floats);
    ggtk_split_options options = {.max_tensors = 2};
    ggtk_writer **parts = NULL;
    int n_parts = 0;
    ggtk_error err = {0};
    CHECK_MSG(ggtk_writer_split(whole, &options, &parts, &n_parts, &err) == GGTK_OK, "%s",
              err.message);
    CHECK(n_parts == 3 && tensors_in(parts, 0) == 2 && tensors_in(parts, 1) == 2 &&
          tensors_in(parts, 2) == 1);
    CHECK(ggtk_writer_tensor(parts[2], 0)->n_dims == 1);
    /* Write the parts and read them back: metadata in the first part only, split keys last. */
    char dir[512];
    snprintf(dir, sizeof dir, "%s", support_make_dir("split_cut"));
    snprintf(prefix, sizeof prefix, "%s/cut", dir);
    for (int p = 0; p < n_parts; p++) {
        CHECK(ggtk_writer_begin(parts[p], part_path(p, n_parts), &err) == GGTK_OK);
        for (int64_t t = 0; t < tensors_in(parts, p); t++) {
            float data[8] = {0};
            CHECK(ggtk_writer_write_data(parts[p], data, sizeof data, &err) == GGTK_OK);
        }
        CHECK(ggtk_writer_finish(parts[p], &err) == GGTK_OK);
    }
    ggtk_split *set = ggtk_split_open(part_path(1, 3), GGTK_OPEN_METADATA, &err);
    CHECK_MSG(set, "%s", err.message);
    const ggtk_file *first = ggtk_split_part(set, 0), *last = ggtk_split_part(set, 2);
    CHECK(ggtk_kv_count(first) == 4 && strcmp(ggtk_kv_key(first, 0), "general.name") == 0);
    CHECK(strcmp(ggtk_kv_key(first, 1), GGTK_SPLIT_KEY_NO) == 0 &&
          strcmp(ggtk_kv_key(first, 2), GGTK_SPLIT_KEY_TENSORS_COUNT) == 0 &&
          strcmp(ggtk_kv_key(first, 3), GGTK_SPLIT_KEY_COUNT) == 0);
    CHECK(ggtk_kv_count(last) == 3 && ggtk_version(last) == 3);
    CHECK(ggtk_split_tensor_count(set) == 5);
    ggtk_split_close(set);
    ggtk_writer_split_free(parts, n_parts);
    ggtk_writer_free(whole);
}

TEST(test_split_writer_cuts_by_padded_size)
{
    /* 40, 24, 8 and 40 floats: 160, 96, 32 and 160 bytes, all multiples of 32. */
    const uint64_t floats[4] = {40, 24, 8, 40};
    ggtk_writer *whole;
    whole_file(&whole, 4, floats);
    ggtk_writer **parts = NULL;
    int n_parts = 0;
    ggtk_error err = {0};
    ggtk_split_options options = {.max_bytes = 288};
    CHECK(ggtk_writer_split(whole, &options, &parts, &n_parts, &err) == GGTK_OK);
    /* 160 + 96 + 32 = 288 fits; the last starts a part. */
    CHECK(n_parts == 2 && tensors_in(parts, 0) == 3 && tensors_in(parts, 1) == 1);
    ggtk_writer_split_free(parts, n_parts);
    options = (ggtk_split_options){.max_bytes = 287, .no_tensor_first_part = true};
    CHECK(ggtk_writer_split(whole, &options, &parts, &n_parts, &err) == GGTK_OK);
    /* 160 + 96 fit, + 32 would not; then 32 + 160. */
    CHECK(n_parts == 3 && tensors_in(parts, 0) == 0 && tensors_in(parts, 1) == 2 &&
          tensors_in(parts, 2) == 2);
    ggtk_writer_split_free(parts, n_parts);
    /* A tensor larger than a part can hold. */
    options = (ggtk_split_options){.max_bytes = 100};
    CHECK(ggtk_writer_split(whole, &options, &parts, &n_parts, &err) == GGTK_ERR_USAGE);
    CHECK_MSG(strstr(err.message, "part 1 would hold no tensor: tensor 't0' has 160 bytes"), "%s",
              err.message);
    options = (ggtk_split_options){0};
    CHECK(ggtk_writer_split(whole, &options, &parts, &n_parts, &err) == GGTK_ERR_USAGE);
    ggtk_writer_free(whole);
}

TEST(test_split_writer_finish_uncommitted_renames_only_on_commit)
{
    const char *dir = support_make_dir("split_uncommitted");
    char path[600];
    snprintf(path, sizeof path, "%s/out.gguf", dir);
    ggtk_writer *w = ggtk_writer_new();
    ggtk_error err = {0};
    CHECK(w && ggtk_writer_begin(w, path, &err) == GGTK_OK);
    ggtk_atomic_file *file = ggtk_writer_finish_uncommitted(w, &err);
    CHECK_MSG(file, "%s", err.message);
    CHECK(support_dir_entries(dir) == 1 && access(path, F_OK) != 0); /* only the temporary file */
    CHECK(ggtk_atomic_file_commit(file, &err) == GGTK_OK);
    ggtk_atomic_file_close(file);
    CHECK(support_dir_entries(dir) == 1 && access(path, F_OK) == 0);
    /* Closed without a commit, the finished file goes away. */
    CHECK(remove(path) == 0 && ggtk_writer_begin(w, path, &err) == GGTK_OK);
    file = ggtk_writer_finish_uncommitted(w, &err);
    CHECK(file);
    ggtk_atomic_file_close(file);
    CHECK(support_dir_entries(dir) == 0);
    ggtk_writer_free(w);
}
