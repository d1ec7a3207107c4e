/* The safetensors reader: a valid file and shards read back; every hostile header (truncated,
 * oversized, overlapping, gaps, bounds, dtype/shape mismatch, missing shard, bad weight map) is
 * refused with one line naming the file and the field. */
#include "safetensors_fixture.h"
#include "test.h"

#include <ggtk/inf_convert.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define TWO_TENSORS                                                                               \
    "{\"__metadata__\":{\"format\":\"pt\"},"                                                        \
    "\"b\":{\"dtype\":\"F32\",\"shape\":[2,3],\"data_offsets\":[0,24]},"                          \
    "\"a\":{\"dtype\":\"BF16\",\"shape\":[4],\"data_offsets\":[24,32]}}"

TEST(test_safetensors_reads_a_valid_file_sorted_by_name)
{
    const char *path = test_tmpfile("valid.safetensors");
    CHECK(st_fixture_write(path, TWO_TENSORS, UINT64_MAX, 32));
    ggtk_error err;
    inf_safetensors *st = inf_safetensors_open(path, &err);
    CHECK_MSG(st, "%s", err.message);
    CHECK(inf_safetensors_count(st) == 2);
    const inf_safetensors_tensor *a = inf_safetensors_tensor_at(st, 0);
    const inf_safetensors_tensor *b = inf_safetensors_tensor_at(st, 1);
    CHECK(strcmp(a->name, "a") == 0 && strcmp(b->name, "b") == 0);
    CHECK(a->type == GGTK_TENSOR_BF16 && a->n_dims == 1 && a->shape[0] == 4 && a->size == 8);
    CHECK(b->type == GGTK_TENSOR_F32 && b->n_dims == 2 && b->shape[0] == 2 && b->shape[1] == 3);
    CHECK(((const unsigned char *)a->data)[0] == 24 && ((const unsigned char *)b->data)[5] == 5);
    CHECK(inf_safetensors_find(st, "b") == 1 && inf_safetensors_find(st, "c") == -1);
    inf_safetensors_close(st);
}

/* Open `header` (+ data_size bytes) and expect a failure whose message holds `needle`. */
static bool refused(const char *header, uint64_t declared, size_t data_size, ggtk_status status,
                    const char *needle)
{
    const char *path = test_tmpfile("hostile.safetensors");
    if (!st_fixture_write(path, header, declared, data_size))
        return false;
    ggtk_error err = {0};
    inf_safetensors *st = inf_safetensors_open(path, &err);
    bool ok = !st && err.status == status && strstr(err.message, needle) &&
              !strchr(err.message, '\n');
    if (!ok)
        fprintf(stderr, "    got status %d: %s\n", err.status, err.message);
    inf_safetensors_close(st);
    return ok;
}

TEST(test_safetensors_rejects_truncated_and_oversized_headers)
{
    const char *path = test_tmpfile("short.safetensors");
    CHECK(st_fixture_text(path, "abc"));
    ggtk_error err;
    CHECK(!inf_safetensors_open(path, &err) && err.status == GGTK_ERR_TRUNCATED);
    CHECK(refused("{}", 1000, 0, GGTK_ERR_TRUNCATED, "runs past the end"));
    CHECK(refused("{}", 200000000, 0, GGTK_ERR_OVERFLOW, "exceeds the limit"));
    CHECK(refused("{\"a\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0,4]}", UINT64_MAX, 4,
                  GGTK_ERR_INVALID, "header JSON"));
    CHECK(refused("[1,2]   ", UINT64_MAX, 0, GGTK_ERR_INVALID, "not a JSON object"));
}

TEST(test_safetensors_rejects_overlaps_gaps_and_out_of_bounds_offsets)
{
    CHECK(refused("{\"a\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,8]},"
                  "\"b\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[4,12]}}",
                  UINT64_MAX, 12, GGTK_ERR_LAYOUT, "overlap"));
    CHECK(refused("{\"a\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0,4]},"
                  "\"b\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[8,12]}}",
                  UINT64_MAX, 12, GGTK_ERR_LAYOUT, "leave a gap"));
    CHECK(refused("{\"a\":{\"dtype\":\"F32\",\"shape\":[4],\"data_offsets\":[0,16]}}", UINT64_MAX,
                  8, GGTK_ERR_LAYOUT, "run past the 8-byte data section"));
    CHECK(refused("{\"a\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0,4]}}", UINT64_MAX,
                  10, GGTK_ERR_LAYOUT, "6 bytes after the last tensor"));
    CHECK(refused("{\"a\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[4,0]}}", UINT64_MAX,
                  4, GGTK_ERR_INVALID, "data_offsets"));
}

TEST(test_safetensors_rejects_dtype_and_shape_mismatches)
{
    CHECK(refused("{\"a\":{\"dtype\":\"F32\",\"shape\":[3],\"data_offsets\":[0,8]}}", UINT64_MAX,
                  8, GGTK_ERR_INVALID, "hold 8 bytes, but 3 elements of F32 need 12"));
    CHECK(refused("{\"a\":{\"dtype\":\"F17\",\"shape\":[1],\"data_offsets\":[0,4]}}", UINT64_MAX,
                  4, GGTK_ERR_INVALID, "unknown dtype 'F17'"));
    CHECK(refused("{\"a\":{\"dtype\":\"F32\",\"shape\":[-1],\"data_offsets\":[0,4]}}", UINT64_MAX,
                  4, GGTK_ERR_INVALID, "shape[0]"));
    CHECK(refused("{\"a\":{\"dtype\":\"F32\",\"shape\":[4294967296,4294967296,4294967296],"
                  "\"data_offsets\":[0,4]}}", UINT64_MAX, 4, GGTK_ERR_OVERFLOW, "overflows"));
    CHECK(refused("{\"a\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0,4]},"
                  "\"a\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[4,8]}}",
                  UINT64_MAX, 8, GGTK_ERR_INVALID, "duplicate"));
}

/* A two-shard model in folder `dir` with index `index_json`. */
static void write_shards(const char *dir, const char *index_json)
{
    mkdir(dir, 0777);
    char path[512];
    snprintf(path, sizeof path, "%s/model-00001-of-00002.safetensors", dir);
    st_fixture_write(path, "{\"x\":{\"dtype\":\"F16\",\"shape\":[2],\"data_offsets\":[0,4]}}",
                     UINT64_MAX, 4);
    snprintf(path, sizeof path, "%s/model-00002-of-00002.safetensors", dir);
    st_fixture_write(path, "{\"y\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0,4]}}",
                     UINT64_MAX, 4);
    snprintf(path, sizeof path, "%s/model.safetensors.index.json", dir);
    st_fixture_text(path, index_json);
}

#define GOOD_INDEX                                                                                \
    "{\"metadata\":{\"total_size\":8},\"weight_map\":{\"x\":\"model-00001-of-00002.safetensors\"," \
    "\"y\":\"model-00002-of-00002.safetensors\"}}"

TEST(test_safetensors_reads_shards_through_the_index)
{
    char dir[512];
    snprintf(dir, sizeof dir, "%s", test_tmpfile("shards"));
    write_shards(dir, GOOD_INDEX);
    ggtk_error err;
    inf_safetensors *st = inf_safetensors_open(dir, &err);
    CHECK_MSG(st, "%s", err.message);
    CHECK(inf_safetensors_count(st) == 2);
    CHECK(inf_safetensors_tensor_at(st, 0)->shard == 0 && inf_safetensors_tensor_at(st, 1)->shard == 1);
    CHECK(strcmp(inf_safetensors_tensor_at(st, 1)->name, "y") == 0);
    inf_safetensors_close(st);
}

static bool shards_refused(const char *name, const char *index_json, const char *needle)
{
    char dir[512];
    snprintf(dir, sizeof dir, "%s", test_tmpfile(name));
    write_shards(dir, index_json);
    ggtk_error err = {0};
    inf_safetensors *st = inf_safetensors_open(dir, &err);
    bool ok = !st && strstr(err.message, needle);
    if (!ok)
        fprintf(stderr, "    got: %s\n", err.message);
    inf_safetensors_close(st);
    return ok;
}

TEST(test_safetensors_rejects_missing_shards_and_bad_weight_maps)
{
    CHECK(shards_refused("missing", "{\"weight_map\":{\"x\":\"model-00001-of-00002.safetensors\","
                                    "\"y\":\"model-00009-of-00009.safetensors\"}}",
                         "model-00009-of-00009.safetensors: cannot open"));
    CHECK(shards_refused("unlisted", "{\"weight_map\":{\"x\":\"model-00001-of-00002.safetensors\","
                                     "\"z\":\"model-00002-of-00002.safetensors\"}}",
                         "tensor 'y' of shard model-00002-of-00002.safetensors is not in the weight map"));
    CHECK(shards_refused("escape", "{\"weight_map\":{\"x\":\"../x.safetensors\"}}",
                         "is not a file name in the model's folder"));
    CHECK(shards_refused("nomap", "{\"metadata\":{}}", "no \"weight_map\""));
}
