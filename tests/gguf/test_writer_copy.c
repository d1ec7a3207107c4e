/* Copy-with-edits of the real model: the writer built from an opened file, edited, and written
 * with every tensor's bytes streamed from the source. */
#include "gguf.h"
#include "test.h"
#include "writer_test_support.h"

#include <stdlib.h>
#include <string.h>

static gguf_file *open_model(void)
{
    const char *model = test_model_path();
    if (!model)
        SKIP("the test model is missing (make models)");
    gguf_error err = {0};
    gguf_file *f = gguf_open(model, GGUF_OPEN_MMAP, &err);
    if (!f)
        test_fail(__FILE__, __LINE__, "%s", err.message);
    return f;
}

TEST(test_writer_copy_without_edits_reproduces_the_model_bytes)
{
    gguf_file *source = open_model();
    CHECK(source);
    gguf_writer *w = gguf_writer_from_file(source);
    CHECK(w && gguf_writer_file_size(w) == gguf_file_size(source));
    const char *path = test_tmpfile("copy.gguf");
    gguf_error err = {0};
    CHECK_MSG(gguf_writer_write_from(w, path, source, &err) == GGUF_OK, "%s", err.message);
    CHECK(support_same_bytes(path, test_model_path()));
    gguf_writer_free(w);
    gguf_close(source);
}

TEST(test_writer_copy_with_edits_changes_only_the_metadata)
{
    gguf_file *source = open_model();
    CHECK(source);
    gguf_writer *w = gguf_writer_from_file(source);
    CHECK(w);
    CHECK(gguf_writer_set_string(w, "general.name", "SmolLM2 edited by ggtk") == GGUF_OK);
    CHECK(gguf_writer_set_u32(w, "ggtk.test.added", 12345) == GGUF_OK);
    CHECK(gguf_writer_remove(w, "general.license") == GGUF_OK);
    CHECK(gguf_writer_set_u32(w, "general.alignment", 64) == GGUF_OK);
    const char *path = test_tmpfile("edited.gguf");
    gguf_error err = {0};
    CHECK_MSG(gguf_writer_write_from(w, path, source, &err) == GGUF_OK, "%s", err.message);
    gguf_file *copy = gguf_open(path, GGUF_OPEN_MMAP, &err);
    CHECK_MSG(copy, "%s", err.message);

    /* Every key but the removed one, in order, equal except the edited ones; new keys last. */
    CHECK(gguf_kv_count(copy) == gguf_kv_count(source) + 1);
    int64_t j = 0;
    for (int64_t i = 0; i < gguf_kv_count(source); i++) {
        const char *key = gguf_kv_key(source, i);
        if (strcmp(key, "general.license") == 0)
            continue;
        CHECK_MSG(strcmp(gguf_kv_key(copy, j), key) == 0, "key %lld", (long long)j);
        if (strcmp(key, "general.name") != 0)
            CHECK_MSG(support_values_equal(gguf_kv_value(copy, j), gguf_kv_value(source, i)),
                      "value of %s", key);
        j++;
    }
    const char *name = NULL;
    uint64_t added = 0;
    CHECK(gguf_get_string(copy, "general.name", &name) == GGUF_OK &&
          strcmp(name, "SmolLM2 edited by ggtk") == 0);
    CHECK(strcmp(gguf_kv_key(copy, j), "ggtk.test.added") == 0);
    CHECK(gguf_get_uint(copy, "ggtk.test.added", &added) == GGUF_OK && added == 12345);
    CHECK(strcmp(gguf_kv_key(copy, j + 1), "general.alignment") == 0);
    CHECK(gguf_alignment(copy) == 64 && gguf_get(copy, "general.license") == NULL);

    /* Same tensors, same bytes, now 64-byte aligned. */
    CHECK(gguf_tensor_count(copy) == gguf_tensor_count(source));
    for (int64_t i = 0; i < gguf_tensor_count(source); i++) {
        const gguf_tensor_info *a = gguf_tensor(source, i), *b = gguf_tensor(copy, i);
        CHECK(strcmp(a->name, b->name) == 0 && a->type == b->type && a->n_dims == b->n_dims);
        CHECK(memcmp(a->ne, b->ne, sizeof a->ne) == 0 && a->size == b->size);
        CHECK(b->offset % 64 == 0);
        CHECK_MSG(memcmp(a->data, b->data, (size_t)a->size) == 0, "data of %s", a->name);
    }
    gguf_close(copy);
    gguf_writer_free(w);
    gguf_close(source);
}

TEST(test_writer_copy_can_replace_its_own_source)
{
    gguf_file *model = open_model();
    CHECK(model);
    gguf_close(model);
    const char *path = test_tmpfile("in_place.gguf");
    CHECK(test_run(NULL, "cp '%s' '%s'", test_model_path(), path) == 0);
    gguf_error err = {0};
    gguf_file *source = gguf_open(path, GGUF_OPEN_MMAP, &err);
    CHECK_MSG(source, "%s", err.message);
    gguf_writer *w = gguf_writer_from_file(source);
    CHECK(w && gguf_writer_set_bool(w, "ggtk.edited", true) == GGUF_OK);
    CHECK_MSG(gguf_writer_write_from(w, path, source, &err) == GGUF_OK, "%s", err.message);
    gguf_close(source);
    gguf_file *edited = gguf_open(path, GGUF_OPEN_METADATA, &err);
    bool flag = false;
    CHECK_MSG(edited, "%s", err.message);
    CHECK(gguf_get_bool(edited, "ggtk.edited", &flag) == GGUF_OK && flag);
    gguf_close(edited);
    gguf_writer_free(w);
}

TEST(test_writer_copy_refuses_mismatched_sources_and_leaves_nothing)
{
    gguf_file *source = open_model();
    CHECK(source);
    const char *dir = support_make_dir("copy_refused");
    char path[512];
    snprintf(path, sizeof path, "%s/out.gguf", dir);
    gguf_error err = {0};

    gguf_writer *w = gguf_writer_from_file(source);
    CHECK(gguf_writer_add_tensor(w, "extra", GGUF_TENSOR_F32, 1, (uint64_t[]){4}) == GGUF_OK);
    CHECK(gguf_writer_write_from(w, path, source, &err) == GGUF_ERR_NOT_FOUND);
    CHECK_MSG(strstr(err.message, "'extra'"), "%s", err.message);
    gguf_writer_free(w);

    w = gguf_writer_from_file(source);
    const char *first = gguf_tensor(source, 0)->name;
    CHECK(gguf_writer_set_tensor_type(w, first, GGUF_TENSOR_F32) == GGUF_OK);
    CHECK(gguf_writer_write_from(w, path, source, &err) == GGUF_ERR_INVALID);
    gguf_writer_free(w);

    gguf_file *metadata_only = gguf_open(test_model_path(), GGUF_OPEN_METADATA, &err);
    CHECK(metadata_only);
    w = gguf_writer_from_file(metadata_only);
    CHECK(gguf_writer_write_from(w, path, metadata_only, &err) == GGUF_ERR_USAGE);
    gguf_writer_free(w);
    gguf_close(metadata_only);

    CHECK(support_dir_entries(dir) == 0);
    gguf_close(source);
}
