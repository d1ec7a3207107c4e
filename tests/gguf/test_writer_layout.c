/* Tests of the writer's header bytes and layout: field encoding, offsets, alignment padding,
 * refusal of bad tensors, values and alignments, and byte-stable output. */
#include "gguf.h"
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
    gguf_writer *w = gguf_writer_create();
    CHECK(gguf_writer_set_u32(w, "a", 7) == GGUF_OK);
    CHECK(gguf_writer_add_tensor(w, "t0", GGUF_TENSOR_F32, 1, (uint64_t[]){3}) == GGUF_OK);
    CHECK(gguf_writer_add_tensor(w, "t1", GGUF_TENSOR_Q8_0, 2, (uint64_t[]){32, 2}) == GGUF_OK);
    const char *path = test_tmpfile("layout.gguf");
    gguf_error err = {0};
    CHECK(gguf_writer_begin(w, path, &err) == GGUF_OK);
    unsigned char t0[12], t1[68];
    support_fill(t0, sizeof t0, 1);
    support_fill(t1, sizeof t1, 2);
    CHECK(gguf_writer_write_data(w, t0, sizeof t0, &err) == GGUF_OK);
    CHECK(gguf_writer_write_data(w, t1, sizeof t1, &err) == GGUF_OK);
    CHECK_MSG(gguf_writer_finish(w, &err) == GGUF_OK, "%s", err.message);

    expected e = {0};
    put(&e, 0x46554747, 4); /* "GGUF" */
    put(&e, 3, 4);          /* version */
    put(&e, 2, 8);          /* tensors */
    put(&e, 1, 8);          /* pairs */
    put_string(&e, "a");
    put(&e, GGUF_VALUE_UINT32, 4);
    put(&e, 7, 4);
    put_string(&e, "t0");
    put(&e, 1, 4);
    put(&e, 3, 8);
    put(&e, GGUF_TENSOR_F32, 4);
    put(&e, 0, 8);
    put_string(&e, "t1");
    put(&e, 2, 4);
    put(&e, 32, 8);
    put(&e, 2, 8);
    put(&e, GGUF_TENSOR_Q8_0, 4);
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
    CHECK(got && size == e.size && gguf_writer_file_size(w) == size);
    for (size_t i = 0; i < size; i++)
        CHECK_MSG(got[i] == e.bytes[i], "byte %zu is %u, expected %u", i, got[i], e.bytes[i]);
    free(got);
    gguf_writer_free(w);
}

TEST(test_writer_offsets_follow_alignment_changes)
{
    gguf_writer *w = gguf_writer_create();
    CHECK(gguf_writer_add_tensor(w, "a", GGUF_TENSOR_F16, 1, (uint64_t[]){5}) == GGUF_OK);
    CHECK(gguf_writer_add_tensor(w, "b", GGUF_TENSOR_Q4_K, 2, (uint64_t[]){256, 3}) == GGUF_OK);
    CHECK(gguf_writer_add_tensor(w, "c", GGUF_TENSOR_I8, 1, (uint64_t[]){1}) == GGUF_OK);
    CHECK(gguf_writer_tensor(w, 1)->offset == 32 && gguf_writer_tensor(w, 1)->size == 432);
    CHECK(gguf_writer_tensor(w, 2)->offset == 32 + 448);
    CHECK(gguf_writer_set_u32(w, "general.alignment", 256) == GGUF_OK);
    CHECK(gguf_writer_tensor(w, 1)->offset == 256 && gguf_writer_tensor(w, 2)->offset == 768);
    CHECK(gguf_writer_file_size(w) % 256 == 0);
    CHECK(gguf_writer_set_u32(w, "general.alignment", 1) == GGUF_OK);
    CHECK(gguf_writer_tensor(w, 1)->offset == 10 && gguf_writer_tensor(w, 2)->offset == 442);
    CHECK(gguf_writer_remove(w, "general.alignment") == GGUF_OK);
    CHECK(gguf_writer_tensor(w, 2)->offset == 32 + 448);
    /* Changing a type or removing a tensor moves the later ones. */
    CHECK(gguf_writer_set_tensor_type(w, "b", GGUF_TENSOR_F32) == GGUF_OK);
    CHECK(gguf_writer_tensor(w, 1)->size == 3072 && gguf_writer_tensor(w, 2)->offset == 3104);
    CHECK(gguf_writer_remove_tensor(w, "a") == GGUF_OK);
    CHECK(gguf_writer_tensor_count(w) == 2 && gguf_writer_tensor(w, 1)->offset == 3072);
    CHECK(strcmp(gguf_writer_tensor(w, 0)->name, "b") == 0 && !gguf_writer_tensor(w, 2));
    CHECK(gguf_writer_remove_tensor(w, "a") == GGUF_ERR_NOT_FOUND);
    gguf_writer_free(w);
}

TEST(test_writer_info_offsets_and_size_track_metadata)
{
    gguf_writer *w = gguf_writer_create();
    CHECK(gguf_writer_file_size(w) == 32); /* 24-byte header padded to 32 */
    CHECK(gguf_writer_add_tensor(w, "x", GGUF_TENSOR_F32, 2, (uint64_t[]){2, 2}) == GGUF_OK);
    CHECK(gguf_writer_tensor(w, 0)->info_offset == 24);
    CHECK(gguf_writer_tensor(w, 0)->ne[2] == 1 && gguf_writer_tensor(w, 0)->ne[3] == 1);
    CHECK(gguf_writer_set_string(w, "name", "abc") == GGUF_OK); /* 8+4 + 4 + 8+3 bytes */
    CHECK(gguf_writer_tensor(w, 0)->info_offset == 24 + 27);
    CHECK(gguf_writer_set_string(w, "name", "") == GGUF_OK);
    CHECK(gguf_writer_tensor(w, 0)->info_offset == 24 + 24);
    CHECK(gguf_writer_remove(w, "name") == GGUF_OK);
    CHECK(gguf_writer_remove(w, "name") == GGUF_ERR_NOT_FOUND);
    CHECK(gguf_writer_tensor(w, 0)->info_offset == 24);
    /* header 24 + info (8+1 + 4 + 16 + 4 + 8) = 65 -> 96, then 16 bytes padded to 32 */
    CHECK(gguf_writer_file_size(w) == 128);
    gguf_writer_free(w);
}

TEST(test_writer_refuses_bad_tensors_and_keeps_its_table)
{
    gguf_writer *w = gguf_writer_create();
    CHECK(gguf_writer_add_tensor(w, "t", GGUF_TENSOR_Q4_0, 1, (uint64_t[]){32}) == GGUF_OK);
    uint64_t size = gguf_writer_file_size(w);
    uint64_t ne[5] = {32, 1, 1, 1, 1};
    CHECK(gguf_writer_add_tensor(w, "t", GGUF_TENSOR_Q4_0, 1, ne) == GGUF_ERR_DUPLICATE);
    CHECK(gguf_writer_add_tensor(w, "u", GGUF_TENSOR_Q4_0, 0, ne) == GGUF_ERR_INVALID);
    CHECK(gguf_writer_add_tensor(w, "u", GGUF_TENSOR_Q4_0, 5, ne) == GGUF_ERR_INVALID);
    CHECK(gguf_writer_add_tensor(w, "u", GGUF_TENSOR_Q4_0, 1, (uint64_t[]){33}) ==
          GGUF_ERR_INVALID);
    CHECK(gguf_writer_add_tensor(w, "u", GGUF_TENSOR_F32, 2, (uint64_t[]){4, 0}) ==
          GGUF_ERR_INVALID);
    CHECK(gguf_writer_add_tensor(w, "u", GGUF_TENSOR_F32, 1, (uint64_t[]){1ull << 63}) ==
          GGUF_ERR_INVALID);
    CHECK(gguf_writer_add_tensor(w, "u", GGUF_TENSOR_F32, 2, (uint64_t[]){1ull << 40, 1ull << 40})
          == GGUF_ERR_OVERFLOW);
    CHECK(gguf_writer_add_tensor(w, "u", (gguf_tensor_type)4, 1, ne) == GGUF_ERR_INVALID);
    CHECK(gguf_writer_add_tensor(w, "u", (gguf_tensor_type)31, 1, ne) == GGUF_ERR_INVALID);
    CHECK(gguf_writer_add_tensor(w, "u", GGUF_TENSOR_TYPE_COUNT, 1, ne) == GGUF_ERR_INVALID);
    CHECK(gguf_writer_add_tensor(w, "", GGUF_TENSOR_F32, 1, ne) == GGUF_ERR_INVALID);
    char long_name[80];
    memset(long_name, 'n', 64);
    long_name[64] = '\0';
    CHECK(gguf_writer_add_tensor(w, long_name, GGUF_TENSOR_F32, 1, ne) == GGUF_ERR_INVALID);
    long_name[63] = '\0';
    CHECK(gguf_writer_add_tensor(w, long_name, GGUF_TENSOR_F32, 1, ne) == GGUF_OK);
    CHECK(gguf_writer_remove_tensor(w, long_name) == GGUF_OK);
    CHECK(gguf_writer_add_tensor(w, NULL, GGUF_TENSOR_F32, 1, ne) == GGUF_ERR_USAGE);
    CHECK(gguf_writer_add_tensor(w, "u", GGUF_TENSOR_F32, 1, NULL) == GGUF_ERR_USAGE);
    /* A type whose blocks do not divide the rows is refused, the old type kept. */
    CHECK(gguf_writer_set_tensor_type(w, "t", GGUF_TENSOR_Q4_K) == GGUF_ERR_INVALID);
    CHECK(gguf_writer_set_tensor_type(w, "t", (gguf_tensor_type)5) == GGUF_ERR_INVALID);
    CHECK(gguf_writer_set_tensor_type(w, "nope", GGUF_TENSOR_F32) == GGUF_ERR_NOT_FOUND);
    CHECK(gguf_writer_tensor_count(w) == 1 && gguf_writer_file_size(w) == size);
    CHECK(gguf_writer_tensor(w, 0)->type == GGUF_TENSOR_Q4_0);
    gguf_writer_free(w);
}

TEST(test_writer_refuses_bad_alignment_values)
{
    gguf_writer *w = gguf_writer_create();
    CHECK(gguf_writer_add_tensor(w, "a", GGUF_TENSOR_I8, 1, (uint64_t[]){1}) == GGUF_OK);
    CHECK(gguf_writer_add_tensor(w, "b", GGUF_TENSOR_I8, 1, (uint64_t[]){1}) == GGUF_OK);
    CHECK(gguf_writer_set_u32(w, "general.alignment", 0) == GGUF_ERR_INVALID);
    CHECK(gguf_writer_set_u32(w, "general.alignment", 48) == GGUF_ERR_INVALID);
    CHECK(gguf_writer_set_u32(w, "general.alignment", 3) == GGUF_ERR_INVALID);
    CHECK(gguf_writer_set_u64(w, "general.alignment", 64) == GGUF_ERR_INVALID);
    CHECK(gguf_writer_set_i32(w, "general.alignment", 64) == GGUF_ERR_INVALID);
    CHECK(gguf_writer_set_string(w, "general.alignment", "64") == GGUF_ERR_INVALID);
    CHECK(gguf_writer_tensor(w, 1)->offset == 32);
    CHECK(gguf_writer_remove(w, "general.alignment") == GGUF_ERR_NOT_FOUND);
    CHECK(gguf_writer_set_u32(w, "general.alignment", 1u << 31) == GGUF_OK);
    CHECK(gguf_writer_tensor(w, 1)->offset == 1u << 31);
    gguf_writer_free(w);
}

TEST(test_writer_refuses_malformed_values)
{
    gguf_writer *w = gguf_writer_create();
    gguf_value bad_type = {.type = (gguf_value_type)13};
    CHECK(gguf_writer_set(w, "k", &bad_type) == GGUF_ERR_INVALID);
    uint8_t flags[] = {1, 0, 2};
    CHECK(gguf_writer_set_array(w, "k", GGUF_VALUE_BOOL, 3, flags) == GGUF_ERR_INVALID);
    CHECK(gguf_writer_set_array(w, "k", GGUF_VALUE_BOOL, 2, flags) == GGUF_OK);
    CHECK(gguf_writer_set_array(w, "k", (gguf_value_type)99, 1, flags) == GGUF_ERR_INVALID);
    CHECK(gguf_writer_set_array(w, "k", GGUF_VALUE_STRING, 1, flags) == GGUF_ERR_USAGE);
    CHECK(gguf_writer_set_array(w, "k", GGUF_VALUE_UINT32, 2, NULL) == GGUF_ERR_USAGE);
    CHECK(gguf_writer_set_array(w, "k", GGUF_VALUE_UINT64, UINT64_MAX / 4, flags) ==
          GGUF_ERR_OVERFLOW);
    gguf_value not_arrays[2] = {{.type = GGUF_VALUE_ARRAY}, {.type = GGUF_VALUE_UINT8}};
    gguf_value nested = {.type = GGUF_VALUE_ARRAY, .v.arr = {GGUF_VALUE_ARRAY, 2, not_arrays}};
    CHECK(gguf_writer_set(w, "k", &nested) == GGUF_ERR_INVALID);
    gguf_value no_data = {.type = GGUF_VALUE_STRING, .v.str = {3, NULL}};
    CHECK(gguf_writer_set(w, "k", &no_data) == GGUF_ERR_USAGE);
    CHECK(gguf_writer_set(w, "", &no_data) == GGUF_ERR_USAGE);
    CHECK(gguf_writer_set(w, NULL, &no_data) == GGUF_ERR_USAGE);
    CHECK(gguf_writer_set(w, "k", NULL) == GGUF_ERR_USAGE);
    const char *strings[] = {"a", NULL};
    CHECK(gguf_writer_set_string_array(w, "s", strings, 2) == GGUF_ERR_USAGE);
    CHECK(gguf_writer_set_string(w, "s", NULL) == GGUF_ERR_USAGE);
    /* Only the one good array was stored: 24 + (8+1 + 4 + 4+8+2) = 51 -> 64 */
    CHECK(gguf_writer_file_size(w) == 64);
    gguf_writer_free(w);
}

/* A writer with a few keys and tensors of several types. */
static gguf_writer *sample_writer(void)
{
    gguf_writer *w = gguf_writer_create();
    const char *tokens[] = {"<s>", "", "hello"};
    float scores[] = {0.5f, -1.0f, 2.0f};
    if (gguf_writer_set_string(w, "general.architecture", "llama") != GGUF_OK ||
        gguf_writer_set_string_array(w, "tokenizer.ggml.tokens", tokens, 3) != GGUF_OK ||
        gguf_writer_set_array(w, "tokenizer.ggml.scores", GGUF_VALUE_FLOAT32, 3, scores) ||
        gguf_writer_set_f32(w, "eps", 1e-5f) != GGUF_OK ||
        gguf_writer_set_bool(w, "flag", true) != GGUF_OK ||
        gguf_writer_add_tensor(w, "q", GGUF_TENSOR_Q6_K, 2, (uint64_t[]){256, 3}) != GGUF_OK ||
        gguf_writer_add_tensor(w, "n", GGUF_TENSOR_F32, 1, (uint64_t[]){7}) != GGUF_OK ||
        gguf_writer_add_tensor(w, "b", GGUF_TENSOR_BF16, 3, (uint64_t[]){3, 2, 2}) != GGUF_OK) {
        gguf_writer_free(w);
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
        gguf_writer *w = sample_writer();
        CHECK(w);
        snprintf(paths[i], sizeof paths[i], "%s/out%d.gguf", dir, i);
        gguf_error err = {0};
        CHECK(gguf_writer_begin(w, paths[i], &err) == GGUF_OK);
        CHECK(support_stream_tensors(w, 9, pieces[i], &err) == GGUF_OK);
        CHECK_MSG(gguf_writer_finish(w, &err) == GGUF_OK, "%s", err.message);
        gguf_writer_free(w);
    }
    CHECK(support_same_bytes(paths[0], paths[1]));
    CHECK(support_same_bytes(paths[0], paths[2]));
    /* Same writer, written twice. */
    gguf_writer *w = sample_writer();
    char again[512];
    snprintf(again, sizeof again, "%s/again.gguf", dir);
    for (int round = 0; round < 2; round++) {
        gguf_error err = {0};
        CHECK(gguf_writer_begin(w, again, &err) == GGUF_OK);
        CHECK(support_stream_tensors(w, 9, 4096, &err) == GGUF_OK);
        CHECK(gguf_writer_finish(w, &err) == GGUF_OK);
        CHECK(support_same_bytes(paths[0], again));
    }
    gguf_writer_free(w);
}
