/* Cross-checks of the writer against gguf-py (tests/gguf/py/gguf_py_oracle.py): gguf-py reads
 * what libgguf writes, and both write the same bytes for the same content. */
#include <ggtk/gguf.h>
#include "test.h"
#include "writer_test_support.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The files of one comparison, in its own scratch directory: gguf-py's file, its JSON
 * description, and the file libgguf writes from that description. */
typedef struct oracle_files {
    char ggtk_py[512], json[512], libgguf[512];
} oracle_files;

/* Let gguf-py write its file in a new scratch directory `dir_name` and describe it; NULL (the
 * test failed) when it cannot. */
static json_t *oracle_content(const char *dir_name, oracle_files *files)
{
    const char *dir = support_make_dir(dir_name);
    snprintf(files->ggtk_py, sizeof files->ggtk_py, "%s/gguf_py.gguf", dir);
    snprintf(files->json, sizeof files->json, "%s/content.json", dir);
    snprintf(files->libgguf, sizeof files->libgguf, "%s/libgguf.gguf", dir);
    char *output = NULL;
    int status = oracle_write(files->ggtk_py, files->json, &output);
    if (status != 0) {
        test_fail(__FILE__, __LINE__, "gguf-py oracle failed (%d): %s", status, output);
        free(output);
        return NULL;
    }
    free(output);
    return oracle_load(files->json);
}

TEST(test_gguf_py_reads_what_the_writer_writes)
{
    oracle_files files;
    json_t *doc = oracle_content("gguf_py_reads_writer", &files);
    CHECK(doc);
    ggtk_error err = {0};
    /* Every entry, also the empty arrays gguf-py cannot write; data in 13-byte pieces. */
    CHECK_MSG(oracle_write_with_libgguf(doc, true, files.libgguf, 13, &err) == GGTK_OK, "%s",
              err.message);
    char *output = NULL;
    int status = test_run(&output, "python3 %s check '%s' --all", ORACLE_SCRIPT, files.libgguf);
    CHECK_MSG(status == 0, "gguf-py check failed (%d):\n%s", status, output);
    free(output);
    json_decref(doc);
}

/* The Q8_1 and Q2_0 tensor types are absent from this check: gguf-py disagrees with ggml on the
 * size of a Q8_1 block and does not know Q2_0 (see the oracle script). */
TEST(test_writer_bytes_equal_gguf_py_bytes)
{
    oracle_files files;
    json_t *doc = oracle_content("gguf_py_same_bytes", &files);
    CHECK(doc);
    ggtk_error err = {0};
    CHECK_MSG(oracle_write_with_libgguf(doc, false, files.libgguf, 4096, &err) == GGTK_OK, "%s",
              err.message);
    char *output = NULL;
    int status = test_run(&output, "cmp '%s' '%s'", files.ggtk_py, files.libgguf);
    CHECK_MSG(status == 0, "libgguf and gguf-py files differ: %s", output);
    free(output);
    json_decref(doc);
}

TEST(test_reader_reads_what_gguf_py_writes)
{
    oracle_files files;
    json_t *doc = oracle_content("reader_reads_gguf_py", &files);
    CHECK(doc);
    ggtk_error err = {0};
    ggtk_file *f = ggtk_open(files.ggtk_py, GGTK_OPEN_MMAP, &err);
    CHECK_MSG(f, "%s", err.message);
    json_t *metadata = json_object_get(doc, "metadata");
    int64_t index = 0;
    for (size_t i = 0; i < json_array_size(metadata); i++) {
        json_t *entry = json_array_get(metadata, i);
        if (!json_is_true(json_object_get(entry, "gguf_py_writes")))
            continue;
        const char *key = json_string_value(json_object_get(entry, "key"));
        CHECK_MSG(index < ggtk_kv_count(f) && strcmp(ggtk_kv_key(f, index), key) == 0,
                  "key %lld is not %s", (long long)index, key);
        char why[256] = "";
        CHECK_MSG(oracle_value_matches(ggtk_kv_value(f, index),
                                       json_string_value(json_object_get(entry, "type")),
                                       json_object_get(entry, "value"), why, sizeof why),
                  "%s: %s", key, why);
        index++;
    }
    CHECK(ggtk_kv_count(f) == index && ggtk_alignment(f) == 64);
    json_t *tensors = json_object_get(doc, "tensors");
    CHECK(ggtk_tensor_count(f) == (int64_t)json_array_size(tensors));
    for (size_t i = 0; i < json_array_size(tensors); i++) {
        json_t *described = json_array_get(tensors, i);
        const ggtk_tensor_info *t = ggtk_tensor(f, (int64_t)i);
        const char *type = json_string_value(json_object_get(described, "type"));
        json_t *ne = json_object_get(described, "ne");
        CHECK(strcmp(t->name, json_string_value(json_object_get(described, "name"))) == 0);
        CHECK_MSG((int)t->type == ggtk_tensor_type_from_name(type), "type of %s", t->name);
        CHECK(t->n_dims == json_array_size(ne));
        for (uint32_t d = 0; d < t->n_dims; d++)
            CHECK(t->ne[d] == (uint64_t)json_integer_value(json_array_get(ne, d)));
        size_t size = 0;
        unsigned char *data = oracle_tensor_data(described, &size);
        CHECK(t->size == size && memcmp(t->data, data, size) == 0);
        free(data);
    }
    ggtk_close(f);
    json_decref(doc);
}
