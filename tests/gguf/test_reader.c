/* Tests of the GGUF reader on crafted files: every metadata value type and every tensor type
 * round-trips, the typed getters convert only exactly, and every way of opening agrees. */
#include <ggtk/gguf.h>
#include "gguf_bytes.h"
#include "test.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static const uint8_t u8s[3] = {0, 7, 255};
static const int8_t i8s[3] = {-128, 0, 127};
static const uint16_t u16s[3] = {1, 2, 65535};
static const int16_t i16s[3] = {-32768, 5, 32767};
static const uint32_t u32s[3] = {0, 123456, 4294967295u};
static const int32_t i32s[3] = {INT32_MIN, -1, INT32_MAX};
static const float f32s[3] = {-1.5f, 0.0f, 3.25e10f};
static const uint8_t bools[3] = {1, 0, 1};
static const uint64_t u64s[3] = {0, 1ull << 40, UINT64_MAX};
static const int64_t i64s[3] = {INT64_MIN, -2, INT64_MAX};
static const double f64s[3] = {-0.125, 1e300, 2.5};

static void put_array(ggtk_bytes *b, const char *key, ggtk_value_type type, const void *data)
{
    gb_key(b, key, GGTK_VALUE_ARRAY);
    gb_u32(b, type);
    gb_u64(b, 3);
    gb_raw(b, data, 3 * ggtk_value_type_size(type));
}

/* One kv of every scalar type, an array of every fixed-size type, a string array, a nested
 * array (array of arrays of u32 and of strings) and an empty array. */
enum { VALUE_FILE_KVS = 12 + 11 + 3 };
static void build_value_file(ggtk_bytes *b)
{
    gb_header(b, 3, 0, VALUE_FILE_KVS);
    gb_key(b, "u8", GGTK_VALUE_UINT8), gb_u8(b, 200);
    gb_key(b, "i8", GGTK_VALUE_INT8), gb_u8(b, (uint8_t)-100);
    gb_key(b, "u16", GGTK_VALUE_UINT16), gb_raw(b, &u16s[2], 2);
    gb_key(b, "i16", GGTK_VALUE_INT16), gb_raw(b, &i16s[0], 2);
    gb_key(b, "u32", GGTK_VALUE_UINT32), gb_u32(b, 4000000000u);
    gb_key(b, "i32", GGTK_VALUE_INT32), gb_raw(b, &i32s[0], 4);
    float f = 1.5f;
    gb_key(b, "f32", GGTK_VALUE_FLOAT32), gb_raw(b, &f, 4);
    gb_key(b, "bool", GGTK_VALUE_BOOL), gb_u8(b, 1);
    gb_kv_str(b, "str", "hello");
    gb_key(b, "u64", GGTK_VALUE_UINT64), gb_u64(b, (1ull << 63) + 5);
    gb_key(b, "i64", GGTK_VALUE_INT64), gb_raw(b, &i64s[0], 8);
    double d = 3.25;
    gb_key(b, "f64", GGTK_VALUE_FLOAT64), gb_raw(b, &d, 8);
    put_array(b, "a.u8", GGTK_VALUE_UINT8, u8s);
    put_array(b, "a.i8", GGTK_VALUE_INT8, i8s);
    put_array(b, "a.u16", GGTK_VALUE_UINT16, u16s);
    put_array(b, "a.i16", GGTK_VALUE_INT16, i16s);
    put_array(b, "a.u32", GGTK_VALUE_UINT32, u32s);
    put_array(b, "a.i32", GGTK_VALUE_INT32, i32s);
    put_array(b, "a.f32", GGTK_VALUE_FLOAT32, f32s);
    put_array(b, "a.bool", GGTK_VALUE_BOOL, bools);
    put_array(b, "a.u64", GGTK_VALUE_UINT64, u64s);
    put_array(b, "a.i64", GGTK_VALUE_INT64, i64s);
    put_array(b, "a.f64", GGTK_VALUE_FLOAT64, f64s);
    gb_key(b, "a.str", GGTK_VALUE_ARRAY), gb_u32(b, GGTK_VALUE_STRING), gb_u64(b, 3);
    gb_str(b, "a"), gb_str(b, ""), gb_str(b, "\xc3\xa9t\xc3\xa9");
    gb_key(b, "a.nested", GGTK_VALUE_ARRAY), gb_u32(b, GGTK_VALUE_ARRAY), gb_u64(b, 2);
    gb_u32(b, GGTK_VALUE_UINT32), gb_u64(b, 2), gb_u32(b, 10), gb_u32(b, 20);
    gb_u32(b, GGTK_VALUE_STRING), gb_u64(b, 1), gb_str(b, "x");
    gb_key(b, "a.empty", GGTK_VALUE_ARRAY), gb_u32(b, GGTK_VALUE_FLOAT32), gb_u64(b, 0);
}

static ggtk_file *open_bytes(const ggtk_bytes *b, ggtk_error *err)
{
    return ggtk_open_memory(b->data, b->len, "crafted.gguf", err);
}

static bool array_is(const ggtk_file *f, const char *key, ggtk_value_type type, const void *data)
{
    const ggtk_array *arr;
    return ggtk_get_array(f, key, &arr) == GGTK_OK && arr->elem_type == type && arr->count == 3 &&
           memcmp(arr->data, data, 3 * ggtk_value_type_size(type)) == 0;
}

TEST(test_reader_round_trips_every_scalar_value_type)
{
    ggtk_bytes b;
    gb_init(&b);
    build_value_file(&b);
    ggtk_error err;
    ggtk_file *f = open_bytes(&b, &err);
    CHECK_MSG(f, "%s", err.message);
    CHECK(ggtk_kv_count(f) == VALUE_FILE_KVS && ggtk_tensor_count(f) == 0);
    CHECK(ggtk_get(f, "u8")->type == GGTK_VALUE_UINT8 && ggtk_get(f, "u8")->v.u8 == 200);
    CHECK(ggtk_get(f, "i8")->type == GGTK_VALUE_INT8 && ggtk_get(f, "i8")->v.i8 == -100);
    CHECK(ggtk_get(f, "u16")->v.u16 == 65535 && ggtk_get(f, "i16")->v.i16 == -32768);
    CHECK(ggtk_get(f, "u32")->v.u32 == 4000000000u && ggtk_get(f, "i32")->v.i32 == INT32_MIN);
    CHECK(ggtk_get(f, "f32")->type == GGTK_VALUE_FLOAT32 && ggtk_get(f, "f32")->v.f32 == 1.5f);
    CHECK(ggtk_get(f, "bool")->type == GGTK_VALUE_BOOL && ggtk_get(f, "bool")->v.b);
    const ggtk_value *str = ggtk_get(f, "str");
    CHECK(str->type == GGTK_VALUE_STRING && str->v.str.len == 5);
    CHECK(strcmp(str->v.str.data, "hello") == 0 && str->v.str.data[5] == '\0');
    CHECK(ggtk_get(f, "u64")->v.u64 == (1ull << 63) + 5 && ggtk_get(f, "i64")->v.i64 == INT64_MIN);
    CHECK(ggtk_get(f, "f64")->type == GGTK_VALUE_FLOAT64 && ggtk_get(f, "f64")->v.f64 == 3.25);
    CHECK(strcmp(ggtk_kv_key(f, 0), "u8") == 0 && ggtk_kv_offset(f, 0) == 24);
    CHECK(ggtk_find_key(f, "a.empty") == VALUE_FILE_KVS - 1 && ggtk_find_key(f, "zz") == -1);
    ggtk_close(f);
    gb_free(&b);
}

TEST(test_reader_round_trips_arrays_of_every_type)
{
    ggtk_bytes b;
    gb_init(&b);
    build_value_file(&b);
    ggtk_error err;
    ggtk_file *f = open_bytes(&b, &err);
    CHECK_MSG(f, "%s", err.message);
    CHECK(array_is(f, "a.u8", GGTK_VALUE_UINT8, u8s) && array_is(f, "a.i8", GGTK_VALUE_INT8, i8s));
    CHECK(array_is(f, "a.u16", GGTK_VALUE_UINT16, u16s));
    CHECK(array_is(f, "a.i16", GGTK_VALUE_INT16, i16s));
    CHECK(array_is(f, "a.u32", GGTK_VALUE_UINT32, u32s));
    CHECK(array_is(f, "a.i32", GGTK_VALUE_INT32, i32s));
    CHECK(array_is(f, "a.f32", GGTK_VALUE_FLOAT32, f32s));
    CHECK(array_is(f, "a.bool", GGTK_VALUE_BOOL, bools));
    CHECK(array_is(f, "a.u64", GGTK_VALUE_UINT64, u64s));
    CHECK(array_is(f, "a.i64", GGTK_VALUE_INT64, i64s));
    CHECK(array_is(f, "a.f64", GGTK_VALUE_FLOAT64, f64s));
    const ggtk_array *strs;
    CHECK(ggtk_get_array(f, "a.str", &strs) == GGTK_OK && strs->elem_type == GGTK_VALUE_STRING);
    const ggtk_string *s = strs->data;
    CHECK(strs->count == 3 && s[0].len == 1 && strcmp(s[0].data, "a") == 0);
    CHECK(s[1].len == 0 && s[1].data[0] == '\0' && strcmp(s[2].data, "\xc3\xa9t\xc3\xa9") == 0);
    const ggtk_array *nested;
    CHECK(ggtk_get_array(f, "a.nested", &nested) == GGTK_OK && nested->count == 2);
    const ggtk_value *inner = nested->data;
    CHECK(nested->elem_type == GGTK_VALUE_ARRAY && inner[0].type == GGTK_VALUE_ARRAY);
    const uint32_t *nums = inner[0].v.arr.data;
    CHECK(inner[0].v.arr.elem_type == GGTK_VALUE_UINT32 && inner[0].v.arr.count == 2);
    CHECK(nums[0] == 10 && nums[1] == 20);
    const ggtk_string *xs = inner[1].v.arr.data;
    CHECK(inner[1].v.arr.elem_type == GGTK_VALUE_STRING && strcmp(xs[0].data, "x") == 0);
    const ggtk_array *empty;
    CHECK(ggtk_get_array(f, "a.empty", &empty) == GGTK_OK && empty->count == 0);
    ggtk_close(f);
    gb_free(&b);
}

TEST(test_reader_getters_convert_only_exact_values)
{
    ggtk_bytes b;
    gb_init(&b);
    build_value_file(&b);
    ggtk_file *f = open_bytes(&b, NULL);
    CHECK(f);
    uint64_t u;
    int64_t i;
    double d;
    bool flag;
    const char *s;
    const ggtk_array *arr;
    CHECK(ggtk_get_uint(f, "u8", &u) == GGTK_OK && u == 200);
    CHECK(ggtk_get_uint(f, "u64", &u) == GGTK_OK && u == (1ull << 63) + 5);
    /* A failed get leaves the output alone (a default set beforehand survives). */
    CHECK(ggtk_get_uint(f, "i8", &u) == GGTK_ERR_TYPE && u == (1ull << 63) + 5);
    CHECK(ggtk_get_uint(f, "f32", &u) == GGTK_ERR_TYPE);
    CHECK(ggtk_get_uint(f, "bool", &u) == GGTK_ERR_TYPE);
    CHECK(ggtk_get_int(f, "i8", &i) == GGTK_OK && i == -100);
    CHECK(ggtk_get_int(f, "i64", &i) == GGTK_OK && i == INT64_MIN);
    CHECK(ggtk_get_int(f, "u32", &i) == GGTK_OK && i == 4000000000LL);
    CHECK(ggtk_get_int(f, "u64", &i) == GGTK_ERR_TYPE && i == 4000000000LL);
    CHECK(ggtk_get_float(f, "f32", &d) == GGTK_OK && d == 1.5);
    CHECK(ggtk_get_float(f, "f64", &d) == GGTK_OK && d == 3.25);
    CHECK(ggtk_get_float(f, "i16", &d) == GGTK_OK && d == -32768.0);
    CHECK(ggtk_get_float(f, "str", &d) == GGTK_ERR_TYPE && d == -32768.0);
    CHECK(ggtk_get_bool(f, "bool", &flag) == GGTK_OK && flag);
    CHECK(ggtk_get_bool(f, "u8", &flag) == GGTK_ERR_TYPE && flag);
    CHECK(ggtk_get_string(f, "str", &s) == GGTK_OK && strcmp(s, "hello") == 0);
    CHECK(ggtk_get_string(f, "u8", &s) == GGTK_ERR_TYPE && strcmp(s, "hello") == 0);
    CHECK(ggtk_get_array(f, "str", &arr) == GGTK_ERR_TYPE);
    CHECK(ggtk_get_uint(f, "missing", &u) == GGTK_ERR_NOT_FOUND && u == (1ull << 63) + 5);
    CHECK(ggtk_get_string(f, "missing", &s) == GGTK_ERR_NOT_FOUND && strcmp(s, "hello") == 0);
    CHECK(ggtk_get(f, "missing") == NULL && ggtk_kv_value(f, VALUE_FILE_KVS) == NULL);
    ggtk_close(f);
    gb_free(&b);
}

/* One 2-D tensor of every type in the table, each two blocks wide and three rows tall, with data
 * bytes that differ per tensor. */
static int build_tensor_file(ggtk_bytes *b, uint32_t alignment)
{
    int n = 0;
    uint64_t sizes[GGTK_TENSOR_TYPE_COUNT], offset = 0;
    for (int t = 0; t < GGTK_TENSOR_TYPE_COUNT; t++)
        n += ggtk_tensor_type_info_get((ggtk_tensor_type)t) != NULL;
    gb_header(b, 3, (uint64_t)n, 1);
    gb_kv_u32(b, "general.alignment", alignment);
    for (int t = 0; t < GGTK_TENSOR_TYPE_COUNT; t++) {
        const ggtk_tensor_type_info *info = ggtk_tensor_type_info_get((ggtk_tensor_type)t);
        if (!info)
            continue;
        char name[32];
        snprintf(name, sizeof name, "tensor.%s", info->name);
        uint64_t ne[2] = {2 * info->block_size, 3};
        sizes[t] = 6 * (uint64_t)info->block_bytes;
        gb_tensor(b, name, 2, ne, (uint32_t)t, offset);
        offset += (sizes[t] + alignment - 1) / alignment * alignment;
    }
    for (int t = 0; t < GGTK_TENSOR_TYPE_COUNT; t++) {
        if (!ggtk_tensor_type_info_get((ggtk_tensor_type)t))
            continue;
        gb_align(b, alignment); /* the last tensor ends the file, unpadded */
        for (uint64_t i = 0; i < sizes[t]; i++)
            gb_u8(b, (uint8_t)(i * 7 + (uint64_t)t));
    }
    return n;
}

static bool tensors_match_table(const ggtk_file *f, int n, bool with_data)
{
    if (ggtk_tensor_count(f) != n)
        return false;
    for (int64_t i = 0; i < n; i++) {
        const ggtk_tensor_info *t = ggtk_tensor(f, i);
        const ggtk_tensor_type_info *info = ggtk_tensor_type_info_get(t->type);
        char name[32];
        snprintf(name, sizeof name, "tensor.%s", info ? info->name : "?");
        if (!info || strcmp(t->name, name) != 0 || ggtk_find_tensor(f, name) != i)
            return false;
        if (t->n_dims != 2 || t->ne[0] != 2 * info->block_size || t->ne[1] != 3 || t->ne[2] != 1)
            return false;
        if (t->size != 6 * (uint64_t)info->block_bytes || t->offset % ggtk_alignment(f) != 0)
            return false;
        if (ggtk_tensor_elements(t) != 6 * (uint64_t)info->block_size)
            return false;
        if (!with_data) {
            if (t->data)
                return false;
            continue;
        }
        const unsigned char *bytes = t->data;
        if (bytes != (const unsigned char *)ggtk_data(f) + t->offset)
            return false;
        for (uint64_t k = 0; k < t->size; k++)
            if (bytes[k] != (uint8_t)(k * 7 + (uint64_t)t->type))
                return false;
    }
    return true;
}

TEST(test_reader_reads_every_tensor_type_in_the_table)
{
    ggtk_bytes b;
    gb_init(&b);
    int n = build_tensor_file(&b, 64);
    const char *path = test_tmpfile("types.gguf");
    CHECK(gb_write(&b, path));
    ggtk_error err;
    for (int mode = GGTK_OPEN_MMAP; mode <= GGTK_OPEN_METADATA; mode++) {
        ggtk_file *f = ggtk_open(path, (ggtk_open_mode)mode, &err);
        CHECK_MSG(f, "mode %d: %s", mode, err.message);
        CHECK(ggtk_alignment(f) == 64 && ggtk_data_offset(f) % 64 == 0);
        CHECK(ggtk_file_size(f) == b.len && ggtk_data_size(f) == b.len - ggtk_data_offset(f));
        CHECK_MSG(tensors_match_table(f, n, mode != GGTK_OPEN_METADATA), "mode %d", mode);
        CHECK(mode == GGTK_OPEN_METADATA ? ggtk_data(f) == NULL : ggtk_data(f) != NULL);
        if (mode == GGTK_OPEN_READ)
            CHECK(((uintptr_t)ggtk_data(f) & 63) == 0);
        ggtk_close(f);
    }
    gb_free(&b);
}

TEST(test_reader_stream_from_pipe_matches_memory_open)
{
    ggtk_bytes b;
    gb_init(&b);
    int n = build_tensor_file(&b, 32);
    const char *path = test_tmpfile("pipe.gguf");
    CHECK(gb_write(&b, path));
    char command[600];
    snprintf(command, sizeof command, "cat '%s'", path);
    ggtk_error err;
    for (int mode = GGTK_OPEN_READ; mode <= GGTK_OPEN_METADATA; mode++) {
        FILE *pipe = popen(command, "r");
        CHECK(pipe);
        ggtk_file *f = ggtk_open_stream(pipe, "pipe", (ggtk_open_mode)mode, &err);
        CHECK_MSG(f, "%s", err.message);
        CHECK(tensors_match_table(f, n, mode == GGTK_OPEN_READ));
        if (mode == GGTK_OPEN_READ) {
            CHECK(ggtk_file_size(f) == b.len && ggtk_data_size(f) == b.len - ggtk_data_offset(f));
        } else {
            /* The stream is left at the first byte of the data section. */
            CHECK(ggtk_file_size(f) == 0);
            CHECK(fgetc(pipe) == (uint8_t)(0 * 7 + ggtk_tensor(f, 0)->type));
        }
        ggtk_close(f);
        pclose(pipe);
    }
    gb_free(&b);
}

TEST(test_reader_stream_of_seekable_file_checks_size)
{
    ggtk_bytes b;
    gb_init(&b);
    gb_minimal(&b);
    const char *path = test_tmpfile("seekable.gguf");
    CHECK(gb_write(&b, path));
    FILE *stream = fopen(path, "rb");
    CHECK(stream);
    ggtk_file *f = ggtk_open_stream(stream, "seekable", GGTK_OPEN_METADATA, NULL);
    CHECK(f && ggtk_file_size(f) == b.len && ftell(stream) == (long)ggtk_data_offset(f));
    ggtk_close(f);
    fclose(stream);
    /* Cut the data: the metadata-only stream open still sees the size and rejects it. */
    CHECK(truncate(path, (off_t)b.len - 1) == 0);
    stream = fopen(path, "rb");
    ggtk_error err;
    CHECK(ggtk_open_stream(stream, "seekable", GGTK_OPEN_METADATA, &err) == NULL);
    CHECK(err.status == GGTK_ERR_TRUNCATED);
    fclose(stream);
    gb_free(&b);
}

TEST(test_reader_accepts_version_2_and_tensorless_file_without_padding)
{
    ggtk_bytes b;
    gb_init(&b);
    gb_header(&b, 2, 0, 1);
    gb_kv_str(&b, "general.name", "v2");
    ggtk_error err;
    ggtk_file *f = open_bytes(&b, &err);
    CHECK_MSG(f, "%s", err.message);
    CHECK(ggtk_version(f) == 2 && ggtk_data_size(f) == 0 && ggtk_file_size(f) == b.len);
    ggtk_close(f);
    const char *path = test_tmpfile("v2.gguf");
    CHECK(gb_write(&b, path));
    for (int mode = GGTK_OPEN_MMAP; mode <= GGTK_OPEN_METADATA; mode++) {
        f = ggtk_open(path, (ggtk_open_mode)mode, &err);
        CHECK_MSG(f, "mode %d: %s", mode, err.message);
        ggtk_close(f);
    }
    gb_free(&b);
}

TEST(test_reader_open_reports_missing_file)
{
    ggtk_error err;
    CHECK(ggtk_open("/nonexistent/model.gguf", GGTK_OPEN_MMAP, &err) == NULL);
    CHECK(err.status == GGTK_ERR_IO && strstr(err.message, "/nonexistent/model.gguf"));
    CHECK(ggtk_open(NULL, GGTK_OPEN_MMAP, &err) == NULL && err.status == GGTK_ERR_USAGE);
    CHECK(ggtk_open_stream(stdin, "x", GGTK_OPEN_MMAP, &err) == NULL);
    CHECK(err.status == GGTK_ERR_USAGE);
    ggtk_close(NULL);
}

TEST(test_reader_open_of_a_directory_says_it_is_one)
{
    const char *dir = test_tmpdir();
    ggtk_error err;
    for (int mode = GGTK_OPEN_MMAP; mode <= GGTK_OPEN_METADATA; mode++) {
        CHECK(ggtk_open(dir, (ggtk_open_mode)mode, &err) == NULL);
        CHECK_MSG(err.status == GGTK_ERR_IO && strncmp(err.message, dir, strlen(dir)) == 0 &&
                      strstr(err.message, ": is a directory, expected a GGUF file"),
                  "mode %d: %s", mode, err.message);
    }
    FILE *stream = fopen(dir, "rb");
    CHECK(stream);
    CHECK(ggtk_open_stream(stream, "dir", GGTK_OPEN_READ, &err) == NULL);
    fclose(stream);
    CHECK_MSG(strcmp(err.message, "dir: is a directory, expected a GGUF file") == 0, "%s",
              err.message);
}

TEST(test_reader_every_truncation_of_crafted_files_fails_cleanly)
{
    ggtk_bytes values, tensors;
    gb_init(&values);
    gb_init(&tensors);
    build_value_file(&values);
    build_tensor_file(&tensors, 32);
    const ggtk_bytes *files[2] = {&values, &tensors};
    for (int k = 0; k < 2; k++) {
        for (size_t len = 0; len < files[k]->len; len++) {
            ggtk_error err;
            ggtk_file *f = ggtk_open_memory(files[k]->data, len, "cut", &err);
            if (k == 0 && f) {
                /* The value file has no tensors: it is complete as soon as its last kv is. */
                CHECK_MSG(len == files[k]->len, "file %d cut at %zu opened", k, len);
            }
            CHECK_MSG(k == 0 || !f, "file %d cut at %zu opened", k, len);
            if (!f)
                CHECK_MSG(err.status == GGTK_ERR_TRUNCATED, "file %d cut at %zu: %s", k, len,
                          err.message);
            ggtk_close(f);
        }
    }
    gb_free(&values);
    gb_free(&tensors);
}

TEST(test_reader_mmap_open_of_a_fifo_reads_it_instead)
{
    ggtk_bytes b;
    gb_init(&b);
    gb_minimal(&b);
    char file[512];
    snprintf(file, sizeof file, "%s", test_tmpfile("fifo-source.gguf"));
    CHECK(gb_write(&b, file));
    char fifo[512];
    snprintf(fifo, sizeof fifo, "%s", test_tmpfile("model.fifo"));
    CHECK(mkfifo(fifo, 0600) == 0);
    char command[1200];
    snprintf(command, sizeof command, "cat '%s' > '%s' &", file, fifo);
    CHECK(system(command) == 0);
    ggtk_error err;
    ggtk_file *f = ggtk_open(fifo, GGTK_OPEN_MMAP, &err);
    CHECK_MSG(f, "%s", err.message);
    CHECK(ggtk_tensor_count(f) == 1 && ggtk_data(f) && ggtk_file_size(f) == b.len);
    ggtk_close(f);
    gb_free(&b);
}
