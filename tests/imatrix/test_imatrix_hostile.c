/* test_imatrix_hostile.c - damaged and hostile imatrix files: each is refused with one line that
 * names the file and the field, the right status and (where a byte is at fault) its offset;
 * nothing crashes, however the counts and lengths lie. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "imatrix_fixture.h"
#include "test.h"

/* Read `b` as a file and expect failure with `status` and `fragment` in the message; offset
 * checked unless UINT64_MAX - 1 is given. */
static bool refused(const bytes *b, ggtk_status status, const char *fragment, uint64_t offset)
{
    const char *path = test_tmpfile("hostile.bin");
    if (!fixture_write_file(path, b->data, b->len))
        return false;
    ggtk_error err = {0};
    inf_imatrix *m = inf_imatrix_read(path, &err);
    bool ok = !m && err.status == status && strstr(err.message, path) &&
              strstr(err.message, fragment) && !strchr(err.message, '\n') &&
              (offset == UINT64_MAX - 1 || err.offset == offset);
    if (!ok)
        fprintf(stderr, "    got %s (status %d, offset %llu): %s\n", m ? "an imatrix" : "error",
                err.status, (unsigned long long)err.offset, err.message);
    inf_imatrix_free(m);
    return ok;
}

#define ANY_OFFSET (UINT64_MAX - 1)

/* ---------------------------------------------------------------------------------------------
 * Legacy files
 * ------------------------------------------------------------------------------------------- */

/* One entry "blk.0.w" with ncall and the values given, then the trailer. */
static bytes legacy(int32_t n_entries, int32_t name_len, int32_t ncall, int32_t n_values,
                    const float *values, int n_given)
{
    bytes b = {0};
    bytes_i32(&b, n_entries);
    bytes_i32(&b, name_len);
    bytes_put(&b, "blk.0.w", 7);
    bytes_i32(&b, ncall);
    bytes_i32(&b, n_values);
    for (int i = 0; i < n_given; i++)
        bytes_f32(&b, values[i]);
    bytes_i32(&b, 1);
    bytes_i32(&b, 4);
    bytes_put(&b, "text", 4);
    return b;
}

static const float TWO[2] = {1.5f, 2.5f};

TEST(test_imatrix_legacy_every_truncation_is_refused)
{
    bytes b = legacy(1, 7, 1, 2, TWO, 2);
    size_t body = 4 + 4 + 7 + 4 + 4 + 8; /* the trailer after it is optional */
    const char *path = test_tmpfile("cut.dat");
    for (size_t len = 0; len < b.len; len++) {
        if (len == body || len == body + 4)
            continue;
        CHECK(fixture_write_file(path, b.data, len));
        ggtk_error err = {0};
        inf_imatrix *m = inf_imatrix_read(path, &err);
        CHECK_MSG(!m, "a file cut to %zu bytes was accepted", len);
        CHECK_MSG(err.status == GGTK_ERR_TRUNCATED, "cut at %zu: %s", len, err.message);
    }
    bytes_free(&b);
}

TEST(test_imatrix_legacy_huge_entry_count_is_refused_before_allocating)
{
    bytes b = legacy(0x7fffffff, 7, 1, 2, TWO, 2);
    CHECK(refused(&b, GGTK_ERR_TRUNCATED, "entry count", 0));
    bytes_free(&b);
    b = legacy(0, 7, 1, 2, TWO, 2);
    CHECK(refused(&b, GGTK_ERR_INVALID, "entry count", 0));
    bytes_free(&b);
}

TEST(test_imatrix_legacy_name_length_past_the_end_is_refused)
{
    bytes b = legacy(1, 1 << 30, 1, 2, TWO, 2);
    CHECK(refused(&b, GGTK_ERR_TRUNCATED, "name of entry 0", 8));
    bytes_free(&b);
    b = legacy(1, -5, 1, 2, TWO, 2);
    CHECK(refused(&b, GGTK_ERR_INVALID, "name of entry 0", 4));
    bytes_free(&b);
    b = legacy(1, 0, 1, 2, TWO, 2);
    CHECK(refused(&b, GGTK_ERR_INVALID, "name of entry 0", 4));
    bytes_free(&b);
}

TEST(test_imatrix_legacy_huge_value_count_is_refused)
{
    bytes b = legacy(1, 7, 1, 0x7fffffff, TWO, 2);
    CHECK(refused(&b, GGTK_ERR_TRUNCATED, "values", 23));
    bytes_free(&b);
    b = legacy(1, 7, 1, -1, TWO, 2);
    CHECK(refused(&b, GGTK_ERR_INVALID, "value count", 19));
    bytes_free(&b);
}

TEST(test_imatrix_legacy_bad_values_and_ncall_are_refused)
{
    bytes b = legacy(1, 7, 1, 2, (const float[]){1, NAN}, 2);
    CHECK(refused(&b, GGTK_ERR_NONFINITE, "value 1 of entry 'blk.0.w'", 27));
    bytes_free(&b);
    b = legacy(1, 7, 1, 2, (const float[]){INFINITY, 1}, 2);
    CHECK(refused(&b, GGTK_ERR_NONFINITE, "value 0", 23));
    bytes_free(&b);
    b = legacy(1, 7, 1, 2, (const float[]){1, -2}, 2);
    CHECK(refused(&b, GGTK_ERR_INVALID, "value 1", 27));
    bytes_free(&b);
    b = legacy(1, 7, 0, 2, TWO, 2);
    CHECK(refused(&b, GGTK_ERR_INVALID, "ncall", 15));
    bytes_free(&b);
}

TEST(test_imatrix_legacy_duplicates_nul_names_and_trailing_bytes_are_refused)
{
    bytes b = {0};
    bytes_i32(&b, 2);
    for (int i = 0; i < 2; i++) {
        bytes_i32(&b, 7);
        bytes_put(&b, "blk.0.w", 7);
        bytes_i32(&b, 1);
        bytes_i32(&b, 1);
        bytes_f32(&b, 1);
    }
    CHECK(refused(&b, GGTK_ERR_DUPLICATE, "appears twice", ANY_OFFSET));
    bytes_free(&b);
    b = legacy(1, 7, 1, 2, TWO, 2);
    b.data[4 + 4 + 3] = '\0';
    CHECK(refused(&b, GGTK_ERR_INVALID, "NUL", 8));
    bytes_free(&b);
    b = legacy(1, 7, 1, 2, TWO, 2);
    bytes_put(&b, "junk", 4);
    CHECK(refused(&b, GGTK_ERR_LAYOUT, "unexpected bytes", b.len - 4));
    bytes_free(&b);
    b = legacy(1, 7, 1, 2, TWO, 2);
    memcpy(b.data + b.len - 8, &(int32_t){-3}, 4);
    CHECK(refused(&b, GGTK_ERR_INVALID, "dataset name", b.len - 8));
    bytes_free(&b);
}

/* ---------------------------------------------------------------------------------------------
 * GGUF files
 * ------------------------------------------------------------------------------------------- */

typedef struct hand_tensor {
    const char *name;
    uint32_t type;     /* 0 F32, 1 F16 */
    uint64_t ne0, ne1; /* ne1 1: one dimension */
    const float *values;
} hand_tensor;

enum { META_GOOD, META_DATASETS_NOT_STRINGS, META_CHUNK_COUNT_STRING, META_NONE };

/* A GGUF file with the given tensors (F16 data is written as zeros). */
static bytes gguf(const hand_tensor *t, int n, int meta)
{
    bytes b = {0};
    bytes_put(&b, "GGUF", 4);
    bytes_u32(&b, 3);
    bytes_u64(&b, (uint64_t)n);
    bytes_u64(&b, meta == META_NONE ? 1 : 3);
    bytes_gguf_string(&b, "general.type");
    bytes_u32(&b, 8);
    bytes_gguf_string(&b, "imatrix");
    if (meta != META_NONE) {
        bytes_gguf_string(&b, "imatrix.datasets");
        bytes_u32(&b, 9);
        bytes_u32(&b, meta == META_DATASETS_NOT_STRINGS ? 4 : 8);
        bytes_u64(&b, 1);
        if (meta == META_DATASETS_NOT_STRINGS)
            bytes_u32(&b, 7);
        else
            bytes_gguf_string(&b, "text");
        bytes_gguf_string(&b, "imatrix.chunk_count");
        bytes_u32(&b, meta == META_CHUNK_COUNT_STRING ? 8 : 4);
        if (meta == META_CHUNK_COUNT_STRING)
            bytes_gguf_string(&b, "two");
        else
            bytes_u32(&b, 2);
    }
    uint64_t offset = 0;
    for (int i = 0; i < n; i++) {
        uint64_t size = t[i].ne0 * t[i].ne1 * (t[i].type ? 2 : 4);
        bytes_gguf_string(&b, t[i].name);
        bytes_u32(&b, t[i].ne1 == 1 ? 1 : 2);
        bytes_u64(&b, t[i].ne0);
        if (t[i].ne1 != 1)
            bytes_u64(&b, t[i].ne1);
        bytes_u32(&b, t[i].type);
        bytes_u64(&b, offset);
        offset += (size + 31) / 32 * 32;
    }
    bytes_pad(&b, 32);
    for (int i = 0; i < n; i++) {
        for (uint64_t j = 0; j < t[i].ne0 * t[i].ne1; j++) {
            if (t[i].type)
                bytes_put(&b, "\0", 2);
            else
                bytes_f32(&b, t[i].values[j]);
        }
        bytes_pad(&b, 32);
    }
    return b;
}

static bool gguf_refused(const hand_tensor *t, int n, int meta, ggtk_status status,
                         const char *fragment)
{
    bytes b = gguf(t, n, meta);
    bool ok = refused(&b, status, fragment, ANY_OFFSET);
    bytes_free(&b);
    return ok;
}

static const float SUMS[4] = {1, 2, 3, 4};

TEST(test_imatrix_gguf_hand_made_file_is_read)
{
    const hand_tensor t[2] = {{"blk.0.w.in_sum2", 0, 2, 2, SUMS}, {"blk.0.w.counts", 0, 1, 2,
                                                                     (const float[]){3, 1}}};
    bytes b = gguf(t, 2, META_GOOD);
    const char *path = test_tmpfile("good.gguf");
    CHECK(fixture_write_file(path, b.data, b.len));
    bytes_free(&b);
    ggtk_error err;
    inf_imatrix *m = inf_imatrix_read(path, &err);
    CHECK_MSG(m, "%s", err.message);
    /* Without imatrix.chunk_size the metadata is incomplete, as llama-quantize would say. */
    CHECK(!inf_imatrix_has_metadata(m) && inf_imatrix_chunk_count(m) == 2);
    inf_imatrix_free(m);
}

TEST(test_imatrix_gguf_nonfinite_and_negative_values_are_refused)
{
    hand_tensor t[2] = {{"blk.0.w.in_sum2", 0, 2, 2, (const float[]){1, NAN, 3, 4}},
                        {"blk.0.w.counts", 0, 1, 2, (const float[]){3, 1}}};
    CHECK(gguf_refused(t, 2, META_GOOD, GGTK_ERR_NONFINITE, "value 1 of 'blk.0.w.in_sum2'"));
    t[0].values = (const float[]){1, 2, -3, 4};
    CHECK(gguf_refused(t, 2, META_GOOD, GGTK_ERR_INVALID, "value 2"));
    t[0].values = SUMS;
    t[1].values = (const float[]){3, INFINITY};
    CHECK(gguf_refused(t, 2, META_GOOD, GGTK_ERR_NONFINITE, "count 1 of 'blk.0.w.counts'"));
    t[1].values = (const float[]){3, 1.5f};
    CHECK(gguf_refused(t, 2, META_GOOD, GGTK_ERR_INVALID, "whole number"));
    t[1].values = (const float[]){-1, 1};
    CHECK(gguf_refused(t, 2, META_GOOD, GGTK_ERR_INVALID, "count 0"));
}

/* A zero count is an expert no token reached: fine with zero sums, impossible with others. */
TEST(test_imatrix_gguf_zero_count_with_sums_is_refused)
{
    hand_tensor t[2] = {{"blk.0.w.in_sum2", 0, 2, 2, (const float[]){1, 2, 0, 0}},
                        {"blk.0.w.counts", 0, 1, 2, (const float[]){3, 0}}};
    bytes b = gguf(t, 2, META_GOOD);
    const char *path = test_tmpfile("partial.gguf");
    CHECK(fixture_write_file(path, b.data, b.len));
    bytes_free(&b);
    inf_imatrix *m = inf_imatrix_read(path, NULL);
    CHECK(m && inf_imatrix_coverage(inf_imatrix_find(m, "blk.0.w")) == 0.5);
    inf_imatrix_free(m);
    t[0].values = (const float[]){1, 2, 0, 5};
    CHECK(gguf_refused(t, 2, META_GOOD, GGTK_ERR_INVALID, "count is 0"));
}

TEST(test_imatrix_gguf_mismatched_sizes_and_pairs_are_refused)
{
    hand_tensor t[2] = {{"blk.0.w.in_sum2", 0, 3, 1, SUMS},
                        {"blk.0.w.counts", 0, 1, 2, (const float[]){3, 1}}};
    CHECK(gguf_refused(t, 2, META_GOOD, GGTK_ERR_INVALID, "not a whole number of rows"));
    t[0].ne0 = 4;
    CHECK(gguf_refused(t, 1, META_GOOD, GGTK_ERR_INVALID, "has no partner 'blk.0.w.counts'"));
    CHECK(gguf_refused(t + 1, 1, META_GOOD, GGTK_ERR_INVALID, "has no partner"));
    t[0].type = 1;
    CHECK(gguf_refused(t, 2, META_GOOD, GGTK_ERR_INVALID, "expected f32"));
    const hand_tensor other = {"token_embd.weight", 0, 4, 1, SUMS};
    CHECK(gguf_refused(&other, 1, META_GOOD, GGTK_ERR_INVALID, "not an imatrix file"));
}

TEST(test_imatrix_gguf_metadata_of_the_wrong_type_is_refused)
{
    const hand_tensor t[2] = {{"blk.0.w.in_sum2", 0, 4, 1, SUMS},
                              {"blk.0.w.counts", 0, 1, 1, (const float[]){3}}};
    CHECK(gguf_refused(t, 2, META_DATASETS_NOT_STRINGS, GGTK_ERR_TYPE, "imatrix.datasets"));
    CHECK(gguf_refused(t, 2, META_CHUNK_COUNT_STRING, GGTK_ERR_TYPE, "imatrix.chunk_count"));
}

TEST(test_imatrix_gguf_truncated_file_is_refused)
{
    const hand_tensor t[2] = {{"blk.0.w.in_sum2", 0, 4, 1, SUMS},
                              {"blk.0.w.counts", 0, 1, 1, (const float[]){3}}};
    bytes b = gguf(t, 2, META_NONE);
    const char *path = test_tmpfile("cut.gguf");
    /* The last tensor's padding (28 bytes after its one count) may be missing, as for any GGUF. */
    for (size_t len = 4; len < b.len - 28; len += 7) {
        CHECK(fixture_write_file(path, b.data, len));
        ggtk_error err = {0};
        inf_imatrix *m = inf_imatrix_read(path, &err);
        CHECK_MSG(!m && err.status != GGTK_OK, "a file cut to %zu bytes was accepted", len);
        CHECK(strstr(err.message, path) != NULL);
    }
    bytes_free(&b);
}
