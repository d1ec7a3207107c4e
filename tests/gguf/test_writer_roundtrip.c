/* Round trips through the writer and the reader: every metadata value type (nested and empty
 * arrays, empty and binary strings) and every tensor type of the table come back unchanged. */
#include <ggtk/gguf.h>
#include "test.h"
#include "writer_test_support.h"

#include <stdlib.h>
#include <string.h>

#define N_VALUES 23

/* One value of every kind; the arrays point into static storage. */
static void sample_values(ggtk_value values[N_VALUES], const char *keys[N_VALUES])
{
    static const uint8_t u8s[] = {0, 255};
    static const int16_t i16s[] = {-32768, 32767};
    static const uint64_t u64s[] = {0, UINT64_MAX, 42};
    static const double f64s[] = {-0.0, 1e-300};
    static const uint8_t flags[] = {1, 0, 1};
    static const ggtk_string strings[] = {{3, "abc"}, {0, ""}, {3, "a\0b"}};
    static const int32_t ints[] = {1, -2, 3};
    static const ggtk_string words[] = {{1, "x"}};
    static ggtk_value inner[3];
    inner[0] = (ggtk_value){.type = GGTK_VALUE_ARRAY, .v.arr = {GGTK_VALUE_INT32, 3, ints}};
    inner[1] = (ggtk_value){.type = GGTK_VALUE_ARRAY, .v.arr = {GGTK_VALUE_STRING, 1, words}};
    inner[2] = (ggtk_value){.type = GGTK_VALUE_ARRAY, .v.arr = {GGTK_VALUE_FLOAT32, 0, NULL}};
    static ggtk_value outer[1];
    outer[0] = (ggtk_value){.type = GGTK_VALUE_ARRAY, .v.arr = {GGTK_VALUE_ARRAY, 3, inner}};
    const struct {
        const char *key;
        ggtk_value value;
    } table[N_VALUES] = {
        {"u8", {GGTK_VALUE_UINT8, .v.u8 = 200}},
        {"i8", {GGTK_VALUE_INT8, .v.i8 = -100}},
        {"u16", {GGTK_VALUE_UINT16, .v.u16 = 60000}},
        {"i16", {GGTK_VALUE_INT16, .v.i16 = -30000}},
        {"u32", {GGTK_VALUE_UINT32, .v.u32 = 4000000000u}},
        {"i32", {GGTK_VALUE_INT32, .v.i32 = -2000000000}},
        {"f32", {GGTK_VALUE_FLOAT32, .v.f32 = 1.5e-7f}},
        {"bool", {GGTK_VALUE_BOOL, .v.b = true}},
        {"string", {GGTK_VALUE_STRING, .v.str = {5, "hello"}}},
        {"string.empty", {GGTK_VALUE_STRING, .v.str = {0, ""}}},
        {"string.binary", {GGTK_VALUE_STRING, .v.str = {4, "\0\xff\0x"}}},
        {"u64", {GGTK_VALUE_UINT64, .v.u64 = UINT64_MAX - 1}},
        {"i64", {GGTK_VALUE_INT64, .v.i64 = INT64_MIN}},
        {"f64", {GGTK_VALUE_FLOAT64, .v.f64 = -3.141592653589793}},
        {"array.u8", {GGTK_VALUE_ARRAY, .v.arr = {GGTK_VALUE_UINT8, 2, u8s}}},
        {"array.i16", {GGTK_VALUE_ARRAY, .v.arr = {GGTK_VALUE_INT16, 2, i16s}}},
        {"array.u64", {GGTK_VALUE_ARRAY, .v.arr = {GGTK_VALUE_UINT64, 3, u64s}}},
        {"array.f64", {GGTK_VALUE_ARRAY, .v.arr = {GGTK_VALUE_FLOAT64, 2, f64s}}},
        {"array.bool", {GGTK_VALUE_ARRAY, .v.arr = {GGTK_VALUE_BOOL, 3, flags}}},
        {"array.string", {GGTK_VALUE_ARRAY, .v.arr = {GGTK_VALUE_STRING, 3, strings}}},
        {"array.nested", {GGTK_VALUE_ARRAY, .v.arr = {GGTK_VALUE_ARRAY, 1, outer}}},
        {"array.empty", {GGTK_VALUE_ARRAY, .v.arr = {GGTK_VALUE_UINT32, 0, NULL}}},
        {"array.empty_strings", {GGTK_VALUE_ARRAY, .v.arr = {GGTK_VALUE_STRING, 0, NULL}}},
    };
    for (int i = 0; i < N_VALUES; i++) {
        keys[i] = table[i].key;
        values[i] = table[i].value;
    }
}

TEST(test_writer_round_trips_every_value_type)
{
    ggtk_value values[N_VALUES];
    const char *keys[N_VALUES];
    sample_values(values, keys);
    ggtk_writer *w = ggtk_writer_new();
    for (int i = 0; i < N_VALUES; i++)
        CHECK_MSG(ggtk_writer_set(w, keys[i], &values[i]) == GGTK_OK, "setting %s", keys[i]);
    const char *path = test_tmpfile("values.gguf");
    ggtk_error err = {0};
    CHECK(ggtk_writer_begin(w, path, &err) == GGTK_OK);
    CHECK(ggtk_writer_finish(w, &err) == GGTK_OK);
    ggtk_file *f = ggtk_open(path, GGTK_OPEN_MMAP, &err);
    CHECK_MSG(f, "%s", err.message);
    CHECK(ggtk_version(f) == 3 && ggtk_kv_count(f) == N_VALUES && ggtk_tensor_count(f) == 0);
    CHECK(ggtk_file_size(f) == ggtk_writer_file_size(w));
    for (int i = 0; i < N_VALUES; i++) {
        CHECK(strcmp(ggtk_kv_key(f, i), keys[i]) == 0);
        CHECK_MSG(support_values_equal(ggtk_kv_value(f, i), &values[i]), "value of %s", keys[i]);
    }
    ggtk_close(f);
    ggtk_writer_free(w);
}

TEST(test_writer_set_replaces_in_place_and_copies_deeply)
{
    ggtk_writer *w = ggtk_writer_new();
    char text[] = "first";
    const char *list[] = {text, "second"};
    CHECK(ggtk_writer_set_string(w, "a", text) == GGTK_OK);
    CHECK(ggtk_writer_set_string_array(w, "b", list, 2) == GGTK_OK);
    CHECK(ggtk_writer_set_u32(w, "c", 3) == GGTK_OK);
    text[0] = 'X'; /* the writer kept its own copies */
    CHECK(ggtk_writer_set_f32(w, "b", 2.5f) == GGTK_OK); /* replaced, another type */
    CHECK(ggtk_writer_set_i32(w, "d", -4) == GGTK_OK);
    CHECK(ggtk_writer_remove(w, "c") == GGTK_OK);
    const char *path = test_tmpfile("replace.gguf");
    ggtk_error err = {0};
    CHECK(ggtk_writer_begin(w, path, &err) == GGTK_OK && ggtk_writer_finish(w, &err) == GGTK_OK);
    ggtk_file *f = ggtk_open(path, GGTK_OPEN_READ, &err);
    CHECK_MSG(f, "%s", err.message);
    CHECK(ggtk_kv_count(f) == 3);
    CHECK(strcmp(ggtk_kv_key(f, 0), "a") == 0 && strcmp(ggtk_kv_key(f, 1), "b") == 0 &&
          strcmp(ggtk_kv_key(f, 2), "d") == 0);
    const char *a = NULL;
    double b = 0;
    int64_t d = 0;
    CHECK(ggtk_get_string(f, "a", &a) == GGTK_OK && strcmp(a, "first") == 0);
    CHECK(ggtk_get(f, "b")->type == GGTK_VALUE_FLOAT32);
    CHECK(ggtk_get_float(f, "b", &b) == GGTK_OK && b == 2.5);
    CHECK(ggtk_get_int(f, "d", &d) == GGTK_OK && d == -4);
    ggtk_close(f);
    ggtk_writer_free(w);
}

TEST(test_writer_round_trips_every_tensor_type)
{
    ggtk_writer *w = ggtk_writer_new();
    CHECK(ggtk_writer_set_u32(w, "general.alignment", 64) == GGTK_OK);
    int n = 0;
    for (int t = 0; t < GGTK_TENSOR_TYPE_COUNT; t++) {
        const ggtk_tensor_type_info *info = ggtk_tensor_type_info_get((ggtk_tensor_type)t);
        if (!info)
            continue;
        uint64_t ne[3] = {2 * info->block_size, 3, 1 + (uint64_t)t % 2};
        CHECK(ggtk_writer_add_tensor(w, info->name, info->type, 2 + t % 2, ne) == GGTK_OK);
        n++;
    }
    const char *path = test_tmpfile("types.gguf");
    ggtk_error err = {0};
    CHECK(ggtk_writer_begin(w, path, &err) == GGTK_OK);
    CHECK(support_stream_tensors(w, 77, 100, &err) == GGTK_OK);
    CHECK_MSG(ggtk_writer_finish(w, &err) == GGTK_OK, "%s", err.message);
    ggtk_file *f = ggtk_open(path, GGTK_OPEN_MMAP, &err);
    CHECK_MSG(f, "%s", err.message);
    CHECK(ggtk_tensor_count(f) == n && ggtk_alignment(f) == 64);
    CHECK(ggtk_data_offset(f) % 64 == 0 && ggtk_file_size(f) == ggtk_writer_file_size(w));
    for (int64_t i = 0; i < n; i++) {
        const ggtk_tensor_info *want = ggtk_writer_tensor(w, i);
        const ggtk_tensor_info *got = ggtk_tensor(f, i);
        CHECK(strcmp(got->name, want->name) == 0 && got->type == want->type);
        CHECK(got->n_dims == want->n_dims && memcmp(got->ne, want->ne, sizeof got->ne) == 0);
        CHECK(got->offset == want->offset && got->offset % 64 == 0 && got->size == want->size);
        CHECK(got->info_offset == want->info_offset);
        unsigned char *expected = malloc((size_t)want->size);
        support_fill(expected, (size_t)want->size, 77 + (unsigned)i);
        CHECK_MSG(memcmp(got->data, expected, (size_t)want->size) == 0, "data of %s", got->name);
        free(expected);
    }
    ggtk_close(f);
    ggtk_writer_free(w);
}

/* Each typed setter stores the same pair as ggtk_writer_set() with the sample value of its type. */
TEST(test_writer_typed_setters_store_every_scalar_type)
{
    ggtk_value values[N_VALUES];
    const char *keys[N_VALUES];
    sample_values(values, keys);
    ggtk_writer *w = ggtk_writer_new();
    CHECK(ggtk_writer_set_u8(w, "u8", values[0].v.u8) == GGTK_OK);
    CHECK(ggtk_writer_set_i8(w, "i8", values[1].v.i8) == GGTK_OK);
    CHECK(ggtk_writer_set_u16(w, "u16", values[2].v.u16) == GGTK_OK);
    CHECK(ggtk_writer_set_i16(w, "i16", values[3].v.i16) == GGTK_OK);
    CHECK(ggtk_writer_set_u32(w, "u32", values[4].v.u32) == GGTK_OK);
    CHECK(ggtk_writer_set_i32(w, "i32", values[5].v.i32) == GGTK_OK);
    CHECK(ggtk_writer_set_f32(w, "f32", values[6].v.f32) == GGTK_OK);
    CHECK(ggtk_writer_set_bool(w, "bool", values[7].v.b) == GGTK_OK);
    CHECK(ggtk_writer_set_string(w, "string", values[8].v.str.data) == GGTK_OK);
    CHECK(ggtk_writer_set_u64(w, "u64", values[11].v.u64) == GGTK_OK);
    CHECK(ggtk_writer_set_i64(w, "i64", values[12].v.i64) == GGTK_OK);
    CHECK(ggtk_writer_set_f64(w, "f64", values[13].v.f64) == GGTK_OK);
    const char *path = test_tmpfile("setters.gguf");
    ggtk_error err = {0};
    CHECK(ggtk_writer_begin(w, path, &err) == GGTK_OK && ggtk_writer_finish(w, &err) == GGTK_OK);
    ggtk_file *f = ggtk_open(path, GGTK_OPEN_READ, &err);
    CHECK_MSG(f, "%s", err.message);
    CHECK(ggtk_kv_count(f) == 12);
    for (int i = 0; i < 14; i++) {
        if (i == 9 || i == 10) /* the other two strings */
            continue;
        const ggtk_value *got = ggtk_get(f, keys[i]);
        CHECK_MSG(got && support_values_equal(got, &values[i]), "value of %s", keys[i]);
    }
    ggtk_close(f);
    ggtk_writer_free(w);
}
