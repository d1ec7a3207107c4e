/* The safetensors writer: a sharded model reads back through the reader with the same names,
 * shapes and bytes; an abandoned write leaves nothing. */
#include "safetensors_fixture.h"
#include "test.h"

#include <ggtk/inf_convert.h>

#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

TEST(test_safetensors_writer_shards_and_reads_back)
{
    char dir[512];
    snprintf(dir, sizeof dir, "%s", test_tmpfile("written"));
    mkdir(dir, 0777);
    inf_safetensors_writer *w = inf_safetensors_writer_new(20); /* 16 | 8 + 8 bytes: 2 shards */
    ggtk_error err;
    uint64_t s1[2] = {2, 2}, s2[1] = {4}, s3[1] = {2};
    CHECK(inf_safetensors_writer_add(w, "w.one", GGTK_TENSOR_F32, 2, s1, &err) == GGTK_OK);
    CHECK(inf_safetensors_writer_add(w, "w.two", GGTK_TENSOR_BF16, 1, s2, &err) == GGTK_OK);
    CHECK(inf_safetensors_writer_add(w, "w.three", GGTK_TENSOR_F32, 1, s3, &err) == GGTK_OK);
    CHECK(inf_safetensors_writer_add(w, "w.one", GGTK_TENSOR_F32, 1, s3, &err) == GGTK_ERR_DUPLICATE);
    CHECK(inf_safetensors_writer_begin(w, dir, NULL, NULL, &err) == GGTK_OK);
    float one[4] = {1, 2, 3, 4}, three[2] = {5, 6};
    uint16_t two[4] = {0x3f80, 0x4000, 0x4040, 0x4080};
    CHECK(inf_safetensors_writer_write(w, one, sizeof one, &err) == GGTK_OK);
    CHECK(inf_safetensors_writer_write(w, two, 4, &err) == GGTK_OK); /* in two pieces */
    CHECK(inf_safetensors_writer_write(w, (char *)two + 4, 4, &err) == GGTK_OK);
    CHECK(st_fixture_count_entries(dir) == 3); /* only temporary files so far */
    CHECK(inf_safetensors_writer_write(w, three, sizeof three, &err) == GGTK_OK);
    CHECK(inf_safetensors_writer_write(w, three, 1, &err) == GGTK_ERR_USAGE);
    CHECK_MSG(inf_safetensors_writer_finish(w, &err) == GGTK_OK, "%s", err.message);
    inf_safetensors_writer_free(w);
    inf_safetensors *st = inf_safetensors_open(dir, &err);
    CHECK_MSG(st, "%s", err.message);
    CHECK(inf_safetensors_count(st) == 3);
    const inf_safetensors_tensor *t = inf_safetensors_tensor_at(st, inf_safetensors_find(st, "w.two"));
    CHECK(t->type == GGTK_TENSOR_BF16 && t->shard == 1 && memcmp(t->data, two, 8) == 0);
    t = inf_safetensors_tensor_at(st, inf_safetensors_find(st, "w.three"));
    CHECK(t->shard == 1 && memcmp(t->data, three, 8) == 0);
    inf_safetensors_close(st);
    char path[600];
    snprintf(path, sizeof path, "%s/model-00002-of-00002.safetensors", dir);
    struct stat sb;
    CHECK(stat(path, &sb) == 0);
}

TEST(test_safetensors_writer_abandoned_leaves_nothing)
{
    char dir[512];
    snprintf(dir, sizeof dir, "%s", test_tmpfile("abandoned"));
    mkdir(dir, 0777);
    inf_safetensors_writer *w = inf_safetensors_writer_new(0);
    ggtk_error err;
    uint64_t shape[1] = {4};
    CHECK(inf_safetensors_writer_add(w, "t", GGTK_TENSOR_F32, 1, shape, &err) == GGTK_OK);
    CHECK(inf_safetensors_writer_begin(w, dir, NULL, NULL, &err) == GGTK_OK);
    float v[2] = {0};
    CHECK(inf_safetensors_writer_write(w, v, sizeof v, &err) == GGTK_OK);
    CHECK(inf_safetensors_writer_finish(w, &err) == GGTK_ERR_USAGE); /* half the data */
    CHECK(strstr(err.message, "tensor 't' is missing data"));
    inf_safetensors_writer_free(w);
    CHECK(st_fixture_count_entries(dir) == 0);
}
