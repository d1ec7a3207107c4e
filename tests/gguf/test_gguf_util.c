/* Tests of the file-type table, the hash combination and value equality (gguf_util.h); the
 * functions that need a file are exercised through gguf-inspect in tests/tools. */
#include <ggtk/gguf_util.h>
#include "test.h"

#include <string.h>
#include <xxhash.h>

TEST(test_file_type_table_follows_llama_cpp_numbering)
{
    const ggtk_file_type_info *q4_1 = ggtk_file_type_info_get(3);
    CHECK(q4_1 && strcmp(q4_1->name, "MOSTLY_Q4_1") == 0 && strcmp(q4_1->label, "Q4_1") == 0);
    const ggtk_file_type_info *q4_k_m = ggtk_file_type_info_get(15);
    CHECK(q4_k_m && strcmp(q4_k_m->name, "MOSTLY_Q4_K_M") == 0);
    CHECK(strcmp(q4_k_m->label, "Q4_K - Medium") == 0);
    CHECK(strcmp(ggtk_file_type_info_get(32)->name, "MOSTLY_BF16") == 0);
    CHECK(strcmp(ggtk_file_type_info_get(41)->name, "MOSTLY_Q2_0") == 0);
}

TEST(test_file_type_table_names_llama_quantize_main_tensor_type)
{
    CHECK(ggtk_file_type_info_get(GGTK_FILE_TYPE_Q4_K_S)->tensor_type == GGTK_TENSOR_Q4_K);
    CHECK(ggtk_file_type_info_get(GGTK_FILE_TYPE_Q3_K_L)->tensor_type == GGTK_TENSOR_Q3_K);
    CHECK(ggtk_file_type_info_get(GGTK_FILE_TYPE_Q2_K_S)->tensor_type == GGTK_TENSOR_Q2_K);
    CHECK(ggtk_file_type_info_get(GGTK_FILE_TYPE_IQ2_S)->tensor_type == GGTK_TENSOR_IQ2_XS);
    CHECK(ggtk_file_type_info_get(GGTK_FILE_TYPE_F32)->tensor_type == GGTK_TENSOR_F32);
    CHECK(ggtk_file_type_info_get(GGTK_FILE_TYPE_NVFP4)->tensor_type == -1);
    for (uint32_t code = 0; code < GGTK_FILE_TYPE_COUNT + 8; code++) {
        const ggtk_file_type_info *info = ggtk_file_type_info_get(code);
        CHECK_MSG(!info || (info->code == code && code < GGTK_FILE_TYPE_COUNT), "code %u", code);
    }
}

TEST(test_file_type_table_has_no_retired_codes)
{
    static const uint32_t retired[] = {4, 5, 6, 33, 34, 35, 42, 1024, UINT32_MAX};
    for (size_t i = 0; i < sizeof retired / sizeof retired[0]; i++)
        CHECK_MSG(ggtk_file_type_info_get(retired[i]) == NULL, "code %u", retired[i]);
}

TEST(test_file_type_guess_matches_llama_cpp)
{
    CHECK(ggtk_file_type_guess(GGTK_TENSOR_Q4_K) == 15); /* Q4_K_M */
    CHECK(ggtk_file_type_guess(GGTK_TENSOR_Q3_K) == 12); /* Q3_K_M */
    CHECK(ggtk_file_type_guess(GGTK_TENSOR_Q8_0) == 7);
    CHECK(ggtk_file_type_guess(GGTK_TENSOR_F16) == 1);
    CHECK(ggtk_file_type_guess(GGTK_TENSOR_I32) == 0); /* unknown: all F32 */
}

TEST(test_hash_combine_hashes_the_big_endian_digests)
{
    const uint64_t hashes[2] = {0x0123456789abcdefu, 0xfedcba9876543210u};
    const unsigned char bytes[16] = {0x01, 0x23, 0x45, 0x67, 0x89, 0xab, 0xcd, 0xef,
                                     0xfe, 0xdc, 0xba, 0x98, 0x76, 0x54, 0x32, 0x10};
    CHECK(ggtk_hash_combine(hashes, 2) == XXH64(bytes, sizeof bytes, 0));
    CHECK(ggtk_hash_combine(hashes, 0) == XXH64("", 0, 0));
}

TEST(test_value_equal_compares_types_and_float_bits)
{
    ggtk_value a = {.type = GGTK_VALUE_FLOAT32, .v.f32 = 0.0f};
    ggtk_value b = {.type = GGTK_VALUE_FLOAT32, .v.f32 = -0.0f};
    CHECK(!ggtk_value_equal(&a, &b));
    b.v.f32 = 0.0f;
    CHECK(ggtk_value_equal(&a, &b));
    ggtk_value c = {.type = GGTK_VALUE_UINT32, .v.u32 = 0};
    CHECK(!ggtk_value_equal(&a, &c));
    const char *words_a[] = {"x", "y"};
    ggtk_string strings_a[2] = {{1, words_a[0]}, {1, words_a[1]}};
    ggtk_string strings_b[2] = {{1, "x"}, {1, "z"}};
    ggtk_value arr_a = {.type = GGTK_VALUE_ARRAY, .v.arr = {GGTK_VALUE_STRING, 2, strings_a}};
    ggtk_value arr_b = {.type = GGTK_VALUE_ARRAY, .v.arr = {GGTK_VALUE_STRING, 2, strings_b}};
    CHECK(!ggtk_value_equal(&arr_a, &arr_b));
    arr_b.v.arr.count = 1;
    arr_a.v.arr.count = 1;
    CHECK(ggtk_value_equal(&arr_a, &arr_b));
}

TEST(test_value_equal_recurses_into_nested_arrays_and_takes_empty_ones)
{
    uint32_t ints_a[3] = {1, 2, 3}, ints_b[3] = {1, 2, 4};
    ggtk_value inner_a[2] = {{.type = GGTK_VALUE_ARRAY, .v.arr = {GGTK_VALUE_UINT32, 3, ints_a}},
                             {.type = GGTK_VALUE_ARRAY, .v.arr = {GGTK_VALUE_UINT8, 0, NULL}}};
    ggtk_value inner_b[2] = {{.type = GGTK_VALUE_ARRAY, .v.arr = {GGTK_VALUE_UINT32, 3, ints_b}},
                             {.type = GGTK_VALUE_ARRAY, .v.arr = {GGTK_VALUE_UINT8, 0, NULL}}};
    ggtk_value a = {.type = GGTK_VALUE_ARRAY, .v.arr = {GGTK_VALUE_ARRAY, 2, inner_a}};
    ggtk_value b = {.type = GGTK_VALUE_ARRAY, .v.arr = {GGTK_VALUE_ARRAY, 2, inner_b}};
    CHECK(!ggtk_value_equal(&a, &b));
    ints_b[2] = 3;
    CHECK(ggtk_value_equal(&a, &b));
    inner_b[1].v.arr.elem_type = GGTK_VALUE_INT8; /* empty, but of another element type */
    CHECK(!ggtk_value_equal(&a, &b));
}

/* ggtk_check_contents() quotes keys from the file escaped: an OSC sequence in a key name does not
 * reach the terminal that prints the message. */
TEST(test_check_contents_escapes_the_key_it_names)
{
    ggtk_writer *w = ggtk_writer_new();
    CHECK(w && ggtk_writer_set_string(w, "tokenizer.ggml.\x1b]0;pwned\x07_token_id", "x") == GGTK_OK);
    const char *path = test_tmpfile("escaped-key.gguf");
    ggtk_error err = {0};
    CHECK(ggtk_writer_begin(w, path, &err) == GGTK_OK && ggtk_writer_finish(w, &err) == GGTK_OK);
    ggtk_writer_free(w);
    ggtk_file *f = ggtk_open(path, GGTK_OPEN_MMAP, &err);
    CHECK_MSG(f, "%s", err.message);
    CHECK(ggtk_check_contents(f, &err) == GGTK_ERR_INVALID);
    ggtk_close(f);
    CHECK_MSG(strstr(err.message, "tokenizer.ggml.\\x1b]0;pwned\\x07_token_id: expected a non-negative"),
              "%s", err.message);
    CHECK(!strchr(err.message, '\x1b') && !strchr(err.message, '\x07'));
}
