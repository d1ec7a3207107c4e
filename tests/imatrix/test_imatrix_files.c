/* test_imatrix_files.c - the two imatrix file formats: what the writers produce against bytes
 * laid out by hand from the format description, reading them back, byte-identical round trips,
 * the quantizer's weights and the coverage of a partly covered mixture-of-experts entry. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "imatrix_fixture.h"
#include "test.h"

enum { GGUF_TYPE_U32 = 4, GGUF_TYPE_STRING = 8, GGUF_TYPE_ARRAY = 9 };

static void tensor_info(bytes *b, const char *name, uint32_t n_dims, uint64_t ne0, uint64_t ne1,
                        uint64_t offset)
{
    bytes_gguf_string(b, name);
    bytes_u32(b, n_dims);
    bytes_u64(b, ne0);
    if (n_dims == 2)
        bytes_u64(b, ne1);
    bytes_u32(b, 0); /* F32 */
    bytes_u64(b, offset);
}

static void floats(bytes *b, const float *v, int n)
{
    for (int i = 0; i < n; i++)
        bytes_f32(b, v[i]);
    bytes_pad(b, 32);
}

/* The fixture as llama-imatrix lays out its GGUF file. */
static bytes expected_gguf(void)
{
    bytes b = {0};
    bytes_put(&b, "GGUF", 4);
    bytes_u32(&b, 3);
    bytes_u64(&b, 4); /* tensors */
    bytes_u64(&b, 4); /* pairs */
    bytes_gguf_string(&b, "general.type");
    bytes_u32(&b, GGUF_TYPE_STRING);
    bytes_gguf_string(&b, "imatrix");
    bytes_gguf_string(&b, "imatrix.datasets");
    bytes_u32(&b, GGUF_TYPE_ARRAY);
    bytes_u32(&b, GGUF_TYPE_STRING);
    bytes_u64(&b, 1);
    bytes_gguf_string(&b, "data.txt");
    bytes_gguf_string(&b, "imatrix.chunk_count");
    bytes_u32(&b, GGUF_TYPE_U32);
    bytes_u32(&b, 2);
    bytes_gguf_string(&b, "imatrix.chunk_size");
    bytes_u32(&b, GGUF_TYPE_U32);
    bytes_u32(&b, 4);
    tensor_info(&b, "blk.0.attn_q.weight.in_sum2", 1, 3, 1, 0);
    tensor_info(&b, "blk.0.attn_q.weight.counts", 1, 1, 1, 32);
    tensor_info(&b, "blk.1.ffn_up_exps.weight.in_sum2", 2, 2, 2, 64);
    tensor_info(&b, "blk.1.ffn_up_exps.weight.counts", 2, 1, 2, 96);
    bytes_pad(&b, 32);
    floats(&b, (const float[]){5, 16, 40}, 3);
    floats(&b, (const float[]){8}, 1);
    floats(&b, (const float[]){20, 45, 0, 0}, 4);
    floats(&b, (const float[]){5, 0}, 2);
    return b;
}

/* The fixture as llama-imatrix's legacy writer stores it: (sum / count) * ncall, ncall =
 * ceil(max count / 4), 1 * ncall for the expert without tokens. */
static bytes expected_legacy(void)
{
    bytes b = {0};
    bytes_i32(&b, 2);
    bytes_i32(&b, 19);
    bytes_put(&b, "blk.0.attn_q.weight", 19);
    bytes_i32(&b, 2);
    bytes_i32(&b, 3);
    bytes_f32(&b, 1.25f);
    bytes_f32(&b, 4.0f);
    bytes_f32(&b, 10.0f);
    bytes_i32(&b, 24);
    bytes_put(&b, "blk.1.ffn_up_exps.weight", 24);
    bytes_i32(&b, 2);
    bytes_i32(&b, 4);
    bytes_f32(&b, 8.0f);
    bytes_f32(&b, 18.0f);
    bytes_f32(&b, 2.0f);
    bytes_f32(&b, 2.0f);
    bytes_i32(&b, 2); /* chunk count */
    bytes_i32(&b, 8);
    bytes_put(&b, "data.txt", 8);
    return b;
}

static bool file_equals(const char *path, const bytes *expected)
{
    size_t n;
    unsigned char *data = fixture_read_file(path, &n);
    bool same = data && n == expected->len && memcmp(data, expected->data, n) == 0;
    if (data && !same) {
        size_t i = 0;
        while (i < n && i < expected->len && data[i] == expected->data[i])
            i++;
        fprintf(stderr, "    %s: %zu bytes, expected %zu; first difference at %zu\n", path, n,
                expected->len, i);
    }
    free(data);
    return same;
}

TEST(test_imatrix_gguf_writer_lays_out_bytes_as_llama_imatrix)
{
    inf_imatrix *m = fixture_small_imatrix();
    CHECK(m);
    const char *path = test_tmpfile("small.gguf");
    CHECK(inf_imatrix_write(m, path, INF_IMATRIX_GGUF, NULL) == GGTK_OK);
    bytes expected = expected_gguf();
    bool same = file_equals(path, &expected);
    bytes_free(&expected);
    inf_imatrix_free(m);
    CHECK(same);
}

TEST(test_imatrix_legacy_writer_stores_means_times_ncall)
{
    inf_imatrix *m = fixture_small_imatrix();
    CHECK(m);
    const char *path = test_tmpfile("small.dat");
    CHECK(inf_imatrix_write(m, path, INF_IMATRIX_LEGACY, NULL) == GGTK_OK);
    bytes expected = expected_legacy();
    bool same = file_equals(path, &expected);
    bytes_free(&expected);
    inf_imatrix_free(m);
    CHECK(same);
}

TEST(test_imatrix_gguf_reads_back_sums_counts_and_metadata)
{
    bytes b = expected_gguf();
    const char *path = test_tmpfile("hand.gguf");
    CHECK(fixture_write_file(path, b.data, b.len));
    bytes_free(&b);
    ggtk_error err;
    inf_imatrix *m = inf_imatrix_read(path, &err);
    CHECK_MSG(m, "%s", err.message);
    CHECK(inf_imatrix_get_format(m) == INF_IMATRIX_GGUF);
    CHECK(inf_imatrix_n_entries(m) == 2 && inf_imatrix_has_metadata(m));
    CHECK(inf_imatrix_chunk_count(m) == 2 && inf_imatrix_chunk_size(m) == 4);
    CHECK(inf_imatrix_n_datasets(m) == 1 && strcmp(inf_imatrix_dataset(m, 0), "data.txt") == 0);
    const inf_imatrix_entry *q = inf_imatrix_find(m, "blk.0.attn_q.weight");
    const inf_imatrix_entry *up = inf_imatrix_find(m, "blk.1.ffn_up_exps.weight");
    CHECK(q && up && inf_imatrix_entry_at(m, 0) == q && inf_imatrix_entry_at(m, 1) == up);
    CHECK(q->n_mat == 1 && q->n_per_row == 3 && q->counts[0] == 8 && q->values[2] == 40);
    CHECK(up->n_mat == 2 && up->n_per_row == 2 && up->counts[0] == 5 && up->counts[1] == 0);
    CHECK(up->values[1] == 45 && up->values[2] == 0);
    CHECK(inf_imatrix_coverage(q) == 1.0 && inf_imatrix_coverage(up) == 0.5);
    CHECK(inf_imatrix_find(m, "blk.0.attn_k.weight") == NULL);
    inf_imatrix_free(m);
}

/* llama-quantize: sums / count per matrix, 1 for a matrix without tokens (GGUF); values / ncall
 * (legacy). Both files of the fixture give the same weights. */
TEST(test_imatrix_weights_are_what_llama_quantize_computes)
{
    inf_imatrix *m = fixture_small_imatrix();
    CHECK(m);
    const char *path = test_tmpfile("weights.dat");
    CHECK(inf_imatrix_write(m, path, INF_IMATRIX_LEGACY, NULL) == GGTK_OK);
    inf_imatrix *legacy = inf_imatrix_read(path, NULL);
    CHECK(legacy && inf_imatrix_get_format(legacy) == INF_IMATRIX_LEGACY);
    const float dense[3] = {0.625f, 2, 5}, experts[4] = {4, 9, 1, 1};
    float w[4];
    inf_imatrix_weights(m, inf_imatrix_find(m, "blk.0.attn_q.weight"), w);
    CHECK(memcmp(w, dense, sizeof dense) == 0);
    inf_imatrix_weights(m, inf_imatrix_find(m, "blk.1.ffn_up_exps.weight"), w);
    CHECK(memcmp(w, experts, sizeof experts) == 0);
    inf_imatrix_weights(legacy, inf_imatrix_find(legacy, "blk.0.attn_q.weight"), w);
    CHECK(memcmp(w, dense, sizeof dense) == 0);
    const inf_imatrix_entry *up = inf_imatrix_find(legacy, "blk.1.ffn_up_exps.weight");
    CHECK(up->n_mat == 1 && up->n_per_row == 4 && up->counts[0] == 2);
    inf_imatrix_weights(legacy, up, w);
    CHECK(memcmp(w, experts, sizeof experts) == 0);
    CHECK(inf_imatrix_chunk_count(legacy) == 2 && inf_imatrix_chunk_size(legacy) == 0);
    CHECK(strcmp(inf_imatrix_dataset(legacy, 0), "data.txt") == 0);
    inf_imatrix_free(legacy);
    inf_imatrix_free(m);
}

/* Read, write, read, write: the second file equals the first, in both formats. */
TEST(test_imatrix_round_trips_are_byte_identical)
{
    inf_imatrix *m = fixture_small_imatrix();
    CHECK(m);
    const inf_imatrix_format formats[2] = {INF_IMATRIX_GGUF, INF_IMATRIX_LEGACY};
    for (int f = 0; f < 2; f++) {
        char first[512], second[512];
        snprintf(first, sizeof first, "%s", test_tmpfile(f ? "trip1.dat" : "trip1.gguf"));
        snprintf(second, sizeof second, "%s", test_tmpfile(f ? "trip2.dat" : "trip2.gguf"));
        CHECK(inf_imatrix_write(m, first, formats[f], NULL) == GGTK_OK);
        inf_imatrix *back = inf_imatrix_read(first, NULL);
        CHECK(back && inf_imatrix_get_format(back) == formats[f]);
        CHECK(inf_imatrix_write(back, second, formats[f], NULL) == GGTK_OK);
        inf_imatrix_free(back);
        CHECK_MSG(fixture_same_file(first, second), "format %d", f);
    }
    inf_imatrix_free(m);
}

TEST(test_imatrix_legacy_form_cannot_become_gguf)
{
    const char *path = test_tmpfile("form.dat");
    bytes b = expected_legacy();
    CHECK(fixture_write_file(path, b.data, b.len));
    bytes_free(&b);
    inf_imatrix *m = inf_imatrix_read(path, NULL);
    CHECK(m);
    ggtk_error err;
    CHECK(inf_imatrix_write(m, test_tmpfile("form.gguf"), INF_IMATRIX_GGUF, &err) ==
          GGTK_ERR_USAGE);
    CHECK(strstr(err.message, "legacy") != NULL);
    CHECK(inf_imatrix_accumulate(m, "blk.0.attn_q.weight", 1, 0, (const float[3]){0}, 3, 1, 3,
                                 NULL) == GGTK_ERR_USAGE);
    inf_imatrix_free(m);
}

/* A legacy file without the trailer (older llama-imatrix) reads, with chunk count 0. */
TEST(test_imatrix_legacy_trailer_is_optional)
{
    bytes b = expected_legacy();
    b.len -= 4 + 4 + 8;
    const char *path = test_tmpfile("notrailer.dat");
    CHECK(fixture_write_file(path, b.data, b.len));
    bytes_free(&b);
    ggtk_error err;
    inf_imatrix *m = inf_imatrix_read(path, &err);
    CHECK_MSG(m, "%s", err.message);
    CHECK(inf_imatrix_chunk_count(m) == 0 && inf_imatrix_n_datasets(m) == 0);
    inf_imatrix_free(m);
}

TEST(test_imatrix_accumulate_refuses_a_changed_shape)
{
    inf_imatrix *m = fixture_small_imatrix();
    CHECK(m);
    ggtk_error err;
    CHECK(inf_imatrix_accumulate(m, "blk.0.attn_q.weight", 1, 0, (const float[4]){0}, 4, 1, 4,
                                 &err) == GGTK_ERR_INVALID);
    CHECK(strstr(err.message, "blk.0.attn_q.weight") != NULL);
    CHECK(inf_imatrix_accumulate(m, "x", 2, 2, (const float[4]){0}, 4, 1, 4, NULL) ==
          GGTK_ERR_USAGE);
    CHECK(inf_imatrix_accumulate(m, "blk.0.attn_q.weight", 1, 0, (const float[3]){1e30f, 0, 0},
                                 3, 1, 3, &err) == GGTK_ERR_NONFINITE);
    CHECK(inf_imatrix_new(0, NULL, NULL) == NULL);
    inf_imatrix_free(m);
}
