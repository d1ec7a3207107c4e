/* Round trips through the writer and the reader: every metadata value type (nested and empty
 * arrays, empty and binary strings) and every tensor type of the table come back unchanged. */
#include "gguf.h"
#include "test.h"
#include "writer_test_support.h"

#include <stdlib.h>
#include <string.h>

#define N_VALUES 23

/* One value of every kind; the arrays point into static storage. */
static void sample_values(gguf_value values[N_VALUES], const char *keys[N_VALUES])
{
    static const uint8_t u8s[] = {0, 255};
    static const int16_t i16s[] = {-32768, 32767};
    static const uint64_t u64s[] = {0, UINT64_MAX, 42};
    static const double f64s[] = {-0.0, 1e-300};
    static const uint8_t flags[] = {1, 0, 1};
    static const gguf_string strings[] = {{3, "abc"}, {0, ""}, {3, "a\0b"}};
    static const int32_t ints[] = {1, -2, 3};
    static const gguf_string words[] = {{1, "x"}};
    static gguf_value inner[3];
    inner[0] = (gguf_value){.type = GGUF_VALUE_ARRAY, .v.arr = {GGUF_VALUE_INT32, 3, ints}};
    inner[1] = (gguf_value){.type = GGUF_VALUE_ARRAY, .v.arr = {GGUF_VALUE_STRING, 1, words}};
    inner[2] = (gguf_value){.type = GGUF_VALUE_ARRAY, .v.arr = {GGUF_VALUE_FLOAT32, 0, NULL}};
    static gguf_value outer[1];
    outer[0] = (gguf_value){.type = GGUF_VALUE_ARRAY, .v.arr = {GGUF_VALUE_ARRAY, 3, inner}};
    const struct {
        const char *key;
        gguf_value value;
    } table[N_VALUES] = {
        {"u8", {GGUF_VALUE_UINT8, .v.u8 = 200}},
        {"i8", {GGUF_VALUE_INT8, .v.i8 = -100}},
        {"u16", {GGUF_VALUE_UINT16, .v.u16 = 60000}},
        {"i16", {GGUF_VALUE_INT16, .v.i16 = -30000}},
        {"u32", {GGUF_VALUE_UINT32, .v.u32 = 4000000000u}},
        {"i32", {GGUF_VALUE_INT32, .v.i32 = -2000000000}},
        {"f32", {GGUF_VALUE_FLOAT32, .v.f32 = 1.5e-7f}},
        {"bool", {GGUF_VALUE_BOOL, .v.b = true}},
        {"string", {GGUF_VALUE_STRING, .v.str = {5, "hello"}}},
        {"string.empty", {GGUF_VALUE_STRING, .v.str = {0, ""}}},
        {"string.binary", {GGUF_VALUE_STRING, .v.str = {4, "\0\xff\0x"}}},
        {"u64", {GGUF_VALUE_UINT64, .v.u64 = UINT64_MAX - 1}},
        {"i64", {GGUF_VALUE_INT64, .v.i64 = INT64_MIN}},
        {"f64", {GGUF_VALUE_FLOAT64, .v.f64 = -3.141592653589793}},
        {"array.u8", {GGUF_VALUE_ARRAY, .v.arr = {GGUF_VALUE_UINT8, 2, u8s}}},
        {"array.i16", {GGUF_VALUE_ARRAY, .v.arr = {GGUF_VALUE_INT16, 2, i16s}}},
        {"array.u64", {GGUF_VALUE_ARRAY, .v.arr = {GGUF_VALUE_UINT64, 3, u64s}}},
        {"array.f64", {GGUF_VALUE_ARRAY, .v.arr = {GGUF_VALUE_FLOAT64, 2, f64s}}},
        {"array.bool", {GGUF_VALUE_ARRAY, .v.arr = {GGUF_VALUE_BOOL, 3, flags}}},
        {"array.string", {GGUF_VALUE_ARRAY, .v.arr = {GGUF_VALUE_STRING, 3, strings}}},
        {"array.nested", {GGUF_VALUE_ARRAY, .v.arr = {GGUF_VALUE_ARRAY, 1, outer}}},
        {"array.empty", {GGUF_VALUE_ARRAY, .v.arr = {GGUF_VALUE_UINT32, 0, NULL}}},
        {"array.empty_strings", {GGUF_VALUE_ARRAY, .v.arr = {GGUF_VALUE_STRING, 0, NULL}}},
    };
    for (int i = 0; i < N_VALUES; i++) {
        keys[i] = table[i].key;
        values[i] = table[i].value;
    }
}

TEST(test_writer_round_trips_every_value_type)
{
    gguf_value values[N_VALUES];
    const char *keys[N_VALUES];
    sample_values(values, keys);
    gguf_writer *w = gguf_writer_create();
    for (int i = 0; i < N_VALUES; i++)
        CHECK_MSG(gguf_writer_set(w, keys[i], &values[i]) == GGUF_OK, "setting %s", keys[i]);
    const char *path = test_tmpfile("values.gguf");
    gguf_error err = {0};
    CHECK(gguf_writer_begin(w, path, &err) == GGUF_OK);
    CHECK(gguf_writer_finish(w, &err) == GGUF_OK);
    gguf_file *f = gguf_open(path, GGUF_OPEN_MMAP, &err);
    CHECK_MSG(f, "%s", err.message);
    CHECK(gguf_version(f) == 3 && gguf_kv_count(f) == N_VALUES && gguf_tensor_count(f) == 0);
    CHECK(gguf_file_size(f) == gguf_writer_file_size(w));
    for (int i = 0; i < N_VALUES; i++) {
        CHECK(strcmp(gguf_kv_key(f, i), keys[i]) == 0);
        CHECK_MSG(support_values_equal(gguf_kv_value(f, i), &values[i]), "value of %s", keys[i]);
    }
    gguf_close(f);
    gguf_writer_free(w);
}

TEST(test_writer_set_replaces_in_place_and_copies_deeply)
{
    gguf_writer *w = gguf_writer_create();
    char text[] = "first";
    const char *list[] = {text, "second"};
    CHECK(gguf_writer_set_string(w, "a", text) == GGUF_OK);
    CHECK(gguf_writer_set_string_array(w, "b", list, 2) == GGUF_OK);
    CHECK(gguf_writer_set_u32(w, "c", 3) == GGUF_OK);
    text[0] = 'X'; /* the writer kept its own copies */
    CHECK(gguf_writer_set_f32(w, "b", 2.5f) == GGUF_OK); /* replaced, another type */
    CHECK(gguf_writer_set_i32(w, "d", -4) == GGUF_OK);
    CHECK(gguf_writer_remove(w, "c") == GGUF_OK);
    const char *path = test_tmpfile("replace.gguf");
    gguf_error err = {0};
    CHECK(gguf_writer_begin(w, path, &err) == GGUF_OK && gguf_writer_finish(w, &err) == GGUF_OK);
    gguf_file *f = gguf_open(path, GGUF_OPEN_READ, &err);
    CHECK_MSG(f, "%s", err.message);
    CHECK(gguf_kv_count(f) == 3);
    CHECK(strcmp(gguf_kv_key(f, 0), "a") == 0 && strcmp(gguf_kv_key(f, 1), "b") == 0 &&
          strcmp(gguf_kv_key(f, 2), "d") == 0);
    const char *a = NULL;
    double b = 0;
    int64_t d = 0;
    CHECK(gguf_get_string(f, "a", &a) == GGUF_OK && strcmp(a, "first") == 0);
    CHECK(gguf_get(f, "b")->type == GGUF_VALUE_FLOAT32);
    CHECK(gguf_get_float(f, "b", &b) == GGUF_OK && b == 2.5);
    CHECK(gguf_get_int(f, "d", &d) == GGUF_OK && d == -4);
    gguf_close(f);
    gguf_writer_free(w);
}

TEST(test_writer_round_trips_every_tensor_type)
{
    gguf_writer *w = gguf_writer_create();
    CHECK(gguf_writer_set_u32(w, "general.alignment", 64) == GGUF_OK);
    int n = 0;
    for (int t = 0; t < GGUF_TENSOR_TYPE_COUNT; t++) {
        const gguf_tensor_type_info *info = gguf_tensor_type_info_get((gguf_tensor_type)t);
        if (!info)
            continue;
        uint64_t ne[3] = {2 * info->block_size, 3, 1 + (uint64_t)t % 2};
        CHECK(gguf_writer_add_tensor(w, info->name, info->type, 2 + t % 2, ne) == GGUF_OK);
        n++;
    }
    const char *path = test_tmpfile("types.gguf");
    gguf_error err = {0};
    CHECK(gguf_writer_begin(w, path, &err) == GGUF_OK);
    CHECK(support_stream_tensors(w, 77, 100, &err) == GGUF_OK);
    CHECK_MSG(gguf_writer_finish(w, &err) == GGUF_OK, "%s", err.message);
    gguf_file *f = gguf_open(path, GGUF_OPEN_MMAP, &err);
    CHECK_MSG(f, "%s", err.message);
    CHECK(gguf_tensor_count(f) == n && gguf_alignment(f) == 64);
    CHECK(gguf_data_offset(f) % 64 == 0 && gguf_file_size(f) == gguf_writer_file_size(w));
    for (int64_t i = 0; i < n; i++) {
        const gguf_tensor_info *want = gguf_writer_tensor(w, i);
        const gguf_tensor_info *got = gguf_tensor(f, i);
        CHECK(strcmp(got->name, want->name) == 0 && got->type == want->type);
        CHECK(got->n_dims == want->n_dims && memcmp(got->ne, want->ne, sizeof got->ne) == 0);
        CHECK(got->offset == want->offset && got->offset % 64 == 0 && got->size == want->size);
        CHECK(got->info_offset == want->info_offset);
        unsigned char *expected = malloc((size_t)want->size);
        support_fill(expected, (size_t)want->size, 77 + (unsigned)i);
        CHECK_MSG(memcmp(got->data, expected, (size_t)want->size) == 0, "data of %s", got->name);
        free(expected);
    }
    gguf_close(f);
    gguf_writer_free(w);
}
