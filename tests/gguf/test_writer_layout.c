/* Tests of the writer's header bytes and layout: field encoding, offsets, alignment padding,
 * refusal of bad tensors, values and alignments, and byte-stable output. */
#include <ggtk/gguf.h>
#include "test.h"
#include "writer_test_support.h"

#include <stdlib.h>
#include <string.h>

/* Little-endian fields appended to an expected-bytes buffer. */
typedef struct expected {
    unsigned char bytes[512];
    size_t size;
} expected;

static void put(expected *e, uint64_t value, int width)
{
    for (int i = 0; i < width; i++)
        e->bytes[e->size++] = (unsigned char)(value >> (8 * i));
}

static void put_string(expected *e, const char *s)
{
    put(e, strlen(s), 8);
    memcpy(e->bytes + e->size, s, strlen(s));
    e->size += strlen(s);
}

static void put_zeros_to(expected *e, size_t end)
{
    while (e->size < end)
        e->bytes[e->size++] = 0;
}

TEST(test_writer_header_matches_gguf_v3_layout)
{
    ggtk_writer *w = ggtk_writer_new();
    CHECK(ggtk_writer_set_u32(w, "a", 7) == GGTK_OK);
    CHECK(ggtk_writer_add_tensor(w, "t0", GGTK_TENSOR_F32, 1, (uint64_t[]){3}) == GGTK_OK);
    CHECK(ggtk_writer_add_tensor(w, "t1", GGTK_TENSOR_Q8_0, 2, (uint64_t[]){32, 2}) == GGTK_OK);
    const char *path = test_tmpfile("layout.gguf");
    ggtk_error err = {0};
    CHECK(ggtk_writer_begin(w, path, &err) == GGTK_OK);
    unsigned char t0[12], t1[68];
    support_fill(t0, sizeof t0, 1);
    support_fill(t1, sizeof t1, 2);
    CHECK(ggtk_writer_write_data(w, t0, sizeof t0, &err) == GGTK_OK);
    CHECK(ggtk_writer_write_data(w, t1, sizeof t1, &err) == GGTK_OK);
    CHECK_MSG(ggtk_writer_finish(w, &err) == GGTK_OK, "%s", err.message);

    expected e = {0};
    put(&e, 0x46554747, 4); /* "GGUF" */
    put(&e, 3, 4);          /* version */
    put(&e, 2, 8);          /* tensors */
    put(&e, 1, 8);          /* pairs */
    put_string(&e, "a");
    put(&e, GGTK_VALUE_UINT32, 4);
    put(&e, 7, 4);
    put_string(&e, "t0");
    put(&e, 1, 4);
    put(&e, 3, 8);
    put(&e, GGTK_TENSOR_F32, 4);
    put(&e, 0, 8);
    put_string(&e, "t1");
    put(&e, 2, 4);
    put(&e, 32, 8);
    put(&e, 2, 8);
    put(&e, GGTK_TENSOR_Q8_0, 4);
    put(&e, 32, 8); /* 12 bytes of t0 padded to 32 */
    CHECK(e.size == 117);
    put_zeros_to(&e, 128);
    memcpy(e.bytes + e.size, t0, sizeof t0);
    e.size += sizeof t0;
    put_zeros_to(&e, 160);
    memcpy(e.bytes + e.size, t1, sizeof t1);
    e.size += sizeof t1;
    put_zeros_to(&e, 256); /* the last tensor is padded too, as llama.cpp and gguf-py do */

    size_t size = 0;
    unsigned char *got = support_read_file(path, &size);
    CHECK(got && size == e.size && ggtk_writer_file_size(w) == size);
    for (size_t i = 0; i < size; i++)
        CHECK_MSG(got[i] == e.bytes[i], "byte %zu is %u, expected %u", i, got[i], e.bytes[i]);
    free(got);
    ggtk_writer_free(w);
}

TEST(test_writer_offsets_follow_alignment_changes)
{
    ggtk_writer *w = ggtk_writer_new();
    CHECK(ggtk_writer_add_tensor(w, "a", GGTK_TENSOR_F16, 1, (uint64_t[]){5}) == GGTK_OK);
    CHECK(ggtk_writer_add_tensor(w, "b", GGTK_TENSOR_Q4_K, 2, (uint64_t[]){256, 3}) == GGTK_OK);
    CHECK(ggtk_writer_add_tensor(w, "c", GGTK_TENSOR_I8, 1, (uint64_t[]){1}) == GGTK_OK);
    CHECK(ggtk_writer_tensor(w, 1)->offset == 32 && ggtk_writer_tensor(w, 1)->size == 432);
    CHECK(ggtk_writer_tensor(w, 2)->offset == 32 + 448);
    CHECK(ggtk_writer_set_u32(w, "general.alignment", 256) == GGTK_OK);
    CHECK(ggtk_writer_tensor(w, 1)->offset == 256 && ggtk_writer_tensor(w, 2)->offset == 768);
    CHECK(ggtk_writer_file_size(w) % 256 == 0);
    CHECK(ggtk_writer_set_u32(w, "general.alignment", 1) == GGTK_OK);
    CHECK(ggtk_writer_tensor(w, 1)->offset == 10 && ggtk_writer_tensor(w, 2)->offset == 442);
    CHECK(ggtk_writer_remove(w, "general.alignment") == GGTK_OK);
    CHECK(ggtk_writer_tensor(w, 2)->offset == 32 + 448);
    /* Changing a type or removing a tensor moves the later ones. */
    CHECK(ggtk_writer_set_tensor_type(w, "b", GGTK_TENSOR_F32) == GGTK_OK);
    CHECK(ggtk_writer_tensor(w, 1)->size == 3072 && ggtk_writer_tensor(w, 2)->offset == 3104);
    CHECK(ggtk_writer_remove_tensor(w, "a") == GGTK_OK);
    CHECK(ggtk_writer_tensor_count(w) == 2 && ggtk_writer_tensor(w, 1)->offset == 3072);
    CHECK(strcmp(ggtk_writer_tensor(w, 0)->name, "b") == 0 && !ggtk_writer_tensor(w, 2));
    CHECK(ggtk_writer_remove_tensor(w, "a") == GGTK_ERR_NOT_FOUND);
    ggtk_writer_free(w);
}

TEST(test_writer_info_offsets_and_size_track_metadata)
{
    ggtk_writer *w = ggtk_writer_new();
    CHECK(ggtk_writer_file_size(w) == 32); /* 24-byte header padded to 32 */
    CHECK(ggtk_writer_add_tensor(w, "x", GGTK_TENSOR_F32, 2, (uint64_t[]){2, 2}) == GGTK_OK);
    CHECK(ggtk_writer_tensor(w, 0)->info_offset == 24);
    CHECK(ggtk_writer_tensor(w, 0)->ne[2] == 1 && ggtk_writer_tensor(w, 0)->ne[3] == 1);
    CHECK(ggtk_writer_set_string(w, "name", "abc") == GGTK_OK); /* 8+4 + 4 + 8+3 bytes */
    CHECK(ggtk_writer_tensor(w, 0)->info_offset == 24 + 27);
    CHECK(ggtk_writer_set_string(w, "name", "") == GGTK_OK);
    CHECK(ggtk_writer_tensor(w, 0)->info_offset == 24 + 24);
    CHECK(ggtk_writer_remove(w, "name") == GGTK_OK);
    CHECK(ggtk_writer_remove(w, "name") == GGTK_ERR_NOT_FOUND);
    CHECK(ggtk_writer_tensor(w, 0)->info_offset == 24);
    /* header 24 + info (8+1 + 4 + 16 + 4 + 8) = 65 -> 96, then 16 bytes padded to 32 */
    CHECK(ggtk_writer_file_size(w) == 128);
    ggtk_writer_free(w);
}

TEST(test_writer_refuses_bad_tensors_and_keeps_its_table)
{
    ggtk_writer *w = ggtk_writer_new();
    CHECK(ggtk_writer_add_tensor(w, "t", GGTK_TENSOR_Q4_0, 1, (uint64_t[]){32}) == GGTK_OK);
    uint64_t size = ggtk_writer_file_size(w);
    uint64_t ne[5] = {32, 1, 1, 1, 1};
    CHECK(ggtk_writer_add_tensor(w, "t", GGTK_TENSOR_Q4_0, 1, ne) == GGTK_ERR_DUPLICATE);
    CHECK(ggtk_writer_add_tensor(w, "u", GGTK_TENSOR_Q4_0, 0, ne) == GGTK_ERR_INVALID);
    CHECK(ggtk_writer_add_tensor(w, "u", GGTK_TENSOR_Q4_0, 5, ne) == GGTK_ERR_INVALID);
    CHECK(ggtk_writer_add_tensor(w, "u", GGTK_TENSOR_Q4_0, 1, (uint64_t[]){33}) ==
          GGTK_ERR_INVALID);
    CHECK(ggtk_writer_add_tensor(w, "u", GGTK_TENSOR_F32, 2, (uint64_t[]){4, 0}) ==
          GGTK_ERR_INVALID);
    CHECK(ggtk_writer_add_tensor(w, "u", GGTK_TENSOR_F32, 1, (uint64_t[]){1ull << 63}) ==
          GGTK_ERR_INVALID);
    CHECK(ggtk_writer_add_tensor(w, "u", GGTK_TENSOR_F32, 2, (uint64_t[]){1ull << 40, 1ull << 40})
          == GGTK_ERR_OVERFLOW);
    CHECK(ggtk_writer_add_tensor(w, "u", (ggtk_tensor_type)4, 1, ne) == GGTK_ERR_INVALID);
    CHECK(ggtk_writer_add_tensor(w, "u", (ggtk_tensor_type)31, 1, ne) == GGTK_ERR_INVALID);
    CHECK(ggtk_writer_add_tensor(w, "u", GGTK_TENSOR_TYPE_COUNT, 1, ne) == GGTK_ERR_INVALID);
    CHECK(ggtk_writer_add_tensor(w, "", GGTK_TENSOR_F32, 1, ne) == GGTK_ERR_INVALID);
    char long_name[80];
    memset(long_name, 'n', 64);
    long_name[64] = '\0';
    CHECK(ggtk_writer_add_tensor(w, long_name, GGTK_TENSOR_F32, 1, ne) == GGTK_ERR_INVALID);
    long_name[63] = '\0';
    CHECK(ggtk_writer_add_tensor(w, long_name, GGTK_TENSOR_F32, 1, ne) == GGTK_OK);
    CHECK(ggtk_writer_remove_tensor(w, long_name) == GGTK_OK);
    CHECK(ggtk_writer_add_tensor(w, NULL, GGTK_TENSOR_F32, 1, ne) == GGTK_ERR_USAGE);
    CHECK(ggtk_writer_add_tensor(w, "u", GGTK_TENSOR_F32, 1, NULL) == GGTK_ERR_USAGE);
    /* A type whose blocks do not divide the rows is refused, the old type kept. */
    CHECK(ggtk_writer_set_tensor_type(w, "t", GGTK_TENSOR_Q4_K) == GGTK_ERR_INVALID);
    CHECK(ggtk_writer_set_tensor_type(w, "t", (ggtk_tensor_type)5) == GGTK_ERR_INVALID);
    CHECK(ggtk_writer_set_tensor_type(w, "nope", GGTK_TENSOR_F32) == GGTK_ERR_NOT_FOUND);
    CHECK(ggtk_writer_tensor_count(w) == 1 && ggtk_writer_file_size(w) == size);
    CHECK(ggtk_writer_tensor(w, 0)->type == GGTK_TENSOR_Q4_0);
    ggtk_writer_free(w);
}

TEST(test_writer_refuses_bad_alignment_values)
{
    ggtk_writer *w = ggtk_writer_new();
    CHECK(ggtk_writer_add_tensor(w, "a", GGTK_TENSOR_I8, 1, (uint64_t[]){1}) == GGTK_OK);
    CHECK(ggtk_writer_add_tensor(w, "b", GGTK_TENSOR_I8, 1, (uint64_t[]){1}) == GGTK_OK);
    CHECK(ggtk_writer_set_u32(w, "general.alignment", 0) == GGTK_ERR_INVALID);
    CHECK(ggtk_writer_set_u32(w, "general.alignment", 48) == GGTK_ERR_INVALID);
    CHECK(ggtk_writer_set_u32(w, "general.alignment", 3) == GGTK_ERR_INVALID);
    CHECK(ggtk_writer_set_u64(w, "general.alignment", 64) == GGTK_ERR_INVALID);
    CHECK(ggtk_writer_set_i32(w, "general.alignment", 64) == GGTK_ERR_INVALID);
    CHECK(ggtk_writer_set_string(w, "general.alignment", "64") == GGTK_ERR_INVALID);
    CHECK(ggtk_writer_tensor(w, 1)->offset == 32);
    CHECK(ggtk_writer_remove(w, "general.alignment") == GGTK_ERR_NOT_FOUND);
    CHECK(ggtk_writer_set_u32(w, "general.alignment", 1u << 31) == GGTK_OK);
    CHECK(ggtk_writer_tensor(w, 1)->offset == 1u << 31);
    ggtk_writer_free(w);
}

TEST(test_writer_refuses_malformed_values)
{
    ggtk_writer *w = ggtk_writer_new();
    ggtk_value bad_type = {.type = (ggtk_value_type)13};
    CHECK(ggtk_writer_set(w, "k", &bad_type) == GGTK_ERR_INVALID);
    uint8_t flags[] = {1, 0, 2};
    CHECK(ggtk_writer_set_array(w, "k", GGTK_VALUE_BOOL, 3, flags) == GGTK_ERR_INVALID);
    CHECK(ggtk_writer_set_array(w, "k", GGTK_VALUE_BOOL, 2, flags) == GGTK_OK);
    CHECK(ggtk_writer_set_array(w, "k", (ggtk_value_type)99, 1, flags) == GGTK_ERR_INVALID);
    CHECK(ggtk_writer_set_array(w, "k", GGTK_VALUE_STRING, 1, flags) == GGTK_ERR_USAGE);
    CHECK(ggtk_writer_set_array(w, "k", GGTK_VALUE_UINT32, 2, NULL) == GGTK_ERR_USAGE);
    CHECK(ggtk_writer_set_array(w, "k", GGTK_VALUE_UINT64, UINT64_MAX / 4, flags) ==
          GGTK_ERR_OVERFLOW);
    ggtk_value not_arrays[2] = {{.type = GGTK_VALUE_ARRAY}, {.type = GGTK_VALUE_UINT8}};
    ggtk_value nested = {.type = GGTK_VALUE_ARRAY, .v.arr = {GGTK_VALUE_ARRAY, 2, not_arrays}};
    CHECK(ggtk_writer_set(w, "k", &nested) == GGTK_ERR_INVALID);
    ggtk_value no_data = {.type = GGTK_VALUE_STRING, .v.str = {3, NULL}};
    CHECK(ggtk_writer_set(w, "k", &no_data) == GGTK_ERR_USAGE);
    CHECK(ggtk_writer_set(w, "", &no_data) == GGTK_ERR_USAGE);
    CHECK(ggtk_writer_set(w, NULL, &no_data) == GGTK_ERR_USAGE);
    CHECK(ggtk_writer_set(w, "k", NULL) == GGTK_ERR_USAGE);
    const char *strings[] = {"a", NULL};
    CHECK(ggtk_writer_set_string_array(w, "s", strings, 2) == GGTK_ERR_USAGE);
    CHECK(ggtk_writer_set_string(w, "s", NULL) == GGTK_ERR_USAGE);
    /* Only the one good array was stored: 24 + (8+1 + 4 + 4+8+2) = 51 -> 64 */
    CHECK(ggtk_writer_file_size(w) == 64);
    ggtk_writer_free(w);
}

/* A writer with a few keys and tensors of several types. */
static ggtk_writer *sample_writer(void)
{
    ggtk_writer *w = ggtk_writer_new();
    const char *tokens[] = {"<s>", "", "hello"};
    float scores[] = {0.5f, -1.0f, 2.0f};
    if (ggtk_writer_set_string(w, "general.architecture", "llama") != GGTK_OK ||
        ggtk_writer_set_string_array(w, "tokenizer.ggml.tokens", tokens, 3) != GGTK_OK ||
        ggtk_writer_set_array(w, "tokenizer.ggml.scores", GGTK_VALUE_FLOAT32, 3, scores) ||
        ggtk_writer_set_f32(w, "eps", 1e-5f) != GGTK_OK ||
        ggtk_writer_set_bool(w, "flag", true) != GGTK_OK ||
        ggtk_writer_add_tensor(w, "q", GGTK_TENSOR_Q6_K, 2, (uint64_t[]){256, 3}) != GGTK_OK ||
        ggtk_writer_add_tensor(w, "n", GGTK_TENSOR_F32, 1, (uint64_t[]){7}) != GGTK_OK ||
        ggtk_writer_add_tensor(w, "b", GGTK_TENSOR_BF16, 3, (uint64_t[]){3, 2, 2}) != GGTK_OK) {
        ggtk_writer_free(w);
        return NULL;
    }
    return w;
}

TEST(test_writer_output_is_byte_stable)
{
    const char *dir = support_make_dir("byte_stable");
    char paths[3][512];
    size_t pieces[3] = {1 << 20, 1, 97};
    for (int i = 0; i < 3; i++) {
        ggtk_writer *w = sample_writer();
        CHECK(w);
        snprintf(paths[i], sizeof paths[i], "%s/out%d.gguf", dir, i);
        ggtk_error err = {0};
        CHECK(ggtk_writer_begin(w, paths[i], &err) == GGTK_OK);
        CHECK(support_stream_tensors(w, 9, pieces[i], &err) == GGTK_OK);
        CHECK_MSG(ggtk_writer_finish(w, &err) == GGTK_OK, "%s", err.message);
        ggtk_writer_free(w);
    }
    CHECK(support_same_bytes(paths[0], paths[1]));
    CHECK(support_same_bytes(paths[0], paths[2]));
    /* Same writer, written twice. */
    ggtk_writer *w = sample_writer();
    char again[512];
    snprintf(again, sizeof again, "%s/again.gguf", dir);
    for (int round = 0; round < 2; round++) {
        ggtk_error err = {0};
        CHECK(ggtk_writer_begin(w, again, &err) == GGTK_OK);
        CHECK(support_stream_tensors(w, 9, 4096, &err) == GGTK_OK);
        CHECK(ggtk_writer_finish(w, &err) == GGTK_OK);
        CHECK(support_same_bytes(paths[0], again));
    }
    ggtk_writer_free(w);
}
