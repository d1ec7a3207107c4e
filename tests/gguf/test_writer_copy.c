/* Copy-with-edits of the real model: the writer built from an opened file, edited, and written
 * with every tensor's bytes streamed from the source. */
#include <ggtk/gguf.h>
#include "test.h"
#include "writer_test_support.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static ggtk_file *open_model(void)
{
    const char *model = test_model_path();
    if (!model)
        SKIP("the test model is missing (make models)");
    ggtk_error err = {0};
    ggtk_file *f = ggtk_open(model, GGTK_OPEN_MMAP, &err);
    if (!f)
        test_fail(__FILE__, __LINE__, "%s", err.message);
    return f;
}

TEST(test_writer_copy_without_edits_reproduces_the_model_bytes)
{
    ggtk_file *source = open_model();
    CHECK(source);
    ggtk_writer *w = ggtk_writer_new_from_file(source);
    CHECK(w && ggtk_writer_file_size(w) == ggtk_file_size(source));
    const char *path = test_tmpfile("copy.gguf");
    ggtk_error err = {0};
    CHECK_MSG(ggtk_writer_write_from(w, path, source, &err) == GGTK_OK, "%s", err.message);
    CHECK(support_same_bytes(path, test_model_path()));
    ggtk_writer_free(w);
    ggtk_close(source);
}

TEST(test_writer_copy_with_edits_changes_only_the_metadata)
{
    ggtk_file *source = open_model();
    CHECK(source);
    ggtk_writer *w = ggtk_writer_new_from_file(source);
    CHECK(w);
    CHECK(ggtk_writer_set_string(w, "general.name", "SmolLM2 edited by ggtk") == GGTK_OK);
    CHECK(ggtk_writer_set_u32(w, "ggtk.test.added", 12345) == GGTK_OK);
    CHECK(ggtk_writer_remove(w, "general.license") == GGTK_OK);
    CHECK(ggtk_writer_set_u32(w, "general.alignment", 64) == GGTK_OK);
    const char *path = test_tmpfile("edited.gguf");
    ggtk_error err = {0};
    CHECK_MSG(ggtk_writer_write_from(w, path, source, &err) == GGTK_OK, "%s", err.message);
    ggtk_file *copy = ggtk_open(path, GGTK_OPEN_MMAP, &err);
    CHECK_MSG(copy, "%s", err.message);

    /* Every key but the removed one, in order, equal except the edited ones; new keys last. */
    CHECK(ggtk_kv_count(copy) == ggtk_kv_count(source) + 1);
    int64_t j = 0;
    for (int64_t i = 0; i < ggtk_kv_count(source); i++) {
        const char *key = ggtk_kv_key(source, i);
        if (strcmp(key, "general.license") == 0)
            continue;
        CHECK_MSG(strcmp(ggtk_kv_key(copy, j), key) == 0, "key %lld", (long long)j);
        if (strcmp(key, "general.name") != 0)
            CHECK_MSG(support_values_equal(ggtk_kv_value(copy, j), ggtk_kv_value(source, i)),
                      "value of %s", key);
        j++;
    }
    const char *name = NULL;
    uint64_t added = 0;
    CHECK(ggtk_get_string(copy, "general.name", &name) == GGTK_OK &&
          strcmp(name, "SmolLM2 edited by ggtk") == 0);
    CHECK(strcmp(ggtk_kv_key(copy, j), "ggtk.test.added") == 0);
    CHECK(ggtk_get_uint(copy, "ggtk.test.added", &added) == GGTK_OK && added == 12345);
    CHECK(strcmp(ggtk_kv_key(copy, j + 1), "general.alignment") == 0);
    CHECK(ggtk_alignment(copy) == 64 && ggtk_get(copy, "general.license") == NULL);

    /* Same tensors, same bytes, now 64-byte aligned. */
    CHECK(ggtk_tensor_count(copy) == ggtk_tensor_count(source));
    for (int64_t i = 0; i < ggtk_tensor_count(source); i++) {
        const ggtk_tensor_info *a = ggtk_tensor(source, i), *b = ggtk_tensor(copy, i);
        CHECK(strcmp(a->name, b->name) == 0 && a->type == b->type && a->n_dims == b->n_dims);
        CHECK(memcmp(a->ne, b->ne, sizeof a->ne) == 0 && a->size == b->size);
        CHECK(b->offset % 64 == 0);
        CHECK_MSG(memcmp(a->data, b->data, (size_t)a->size) == 0, "data of %s", a->name);
    }
    ggtk_close(copy);
    ggtk_writer_free(w);
    ggtk_close(source);
}

TEST(test_writer_copy_can_replace_its_own_source)
{
    ggtk_file *model = open_model();
    CHECK(model);
    ggtk_close(model);
    const char *path = test_tmpfile("in_place.gguf");
    CHECK(test_run(NULL, "cp '%s' '%s'", test_model_path(), path) == 0);
    ggtk_error err = {0};
    ggtk_file *source = ggtk_open(path, GGTK_OPEN_MMAP, &err);
    CHECK_MSG(source, "%s", err.message);
    ggtk_writer *w = ggtk_writer_new_from_file(source);
    CHECK(w && ggtk_writer_set_bool(w, "ggtk.edited", true) == GGTK_OK);
    CHECK_MSG(ggtk_writer_write_from(w, path, source, &err) == GGTK_OK, "%s", err.message);
    ggtk_close(source);
    ggtk_file *edited = ggtk_open(path, GGTK_OPEN_METADATA, &err);
    bool flag = false;
    CHECK_MSG(edited, "%s", err.message);
    CHECK(ggtk_get_bool(edited, "ggtk.edited", &flag) == GGTK_OK && flag);
    ggtk_close(edited);
    ggtk_writer_free(w);
}

TEST(test_writer_copy_refuses_mismatched_sources_and_leaves_nothing)
{
    ggtk_file *source = open_model();
    CHECK(source);
    const char *dir = support_make_dir("copy_refused");
    char path[512];
    snprintf(path, sizeof path, "%s/out.gguf", dir);
    ggtk_error err = {0};

    ggtk_writer *w = ggtk_writer_new_from_file(source);
    CHECK(ggtk_writer_add_tensor(w, "extra", GGTK_TENSOR_F32, 1, (uint64_t[]){4}) == GGTK_OK);
    CHECK(ggtk_writer_write_from(w, path, source, &err) == GGTK_ERR_NOT_FOUND);
    CHECK_MSG(strstr(err.message, "'extra'"), "%s", err.message);
    ggtk_writer_free(w);

    w = ggtk_writer_new_from_file(source);
    const char *first = ggtk_tensor(source, 0)->name;
    CHECK(ggtk_writer_set_tensor_type(w, first, GGTK_TENSOR_F32) == GGTK_OK);
    CHECK(ggtk_writer_write_from(w, path, source, &err) == GGTK_ERR_INVALID);
    ggtk_writer_free(w);

    ggtk_file *metadata_only = ggtk_open(test_model_path(), GGTK_OPEN_METADATA, &err);
    CHECK(metadata_only);
    w = ggtk_writer_new_from_file(metadata_only);
    CHECK(ggtk_writer_write_from(w, path, metadata_only, &err) == GGTK_ERR_USAGE);
    ggtk_writer_free(w);
    ggtk_close(metadata_only);

    CHECK(support_dir_entries(dir) == 0);
    ggtk_close(source);
}

TEST(test_writer_write_data_from_streams_a_begun_write)
{
    ggtk_file *source = open_model();
    CHECK(source);
    ggtk_writer *w = ggtk_writer_new_from_file(source);
    CHECK(w);
    ggtk_error err = {0};
    /* Not begun: refused, nothing created. */
    CHECK(ggtk_writer_write_data_from(w, source, &err) == GGTK_ERR_USAGE);
    const char *path = test_tmpfile("begun.gguf");
    CHECK(ggtk_writer_begin(w, path, &err) == GGTK_OK);
    CHECK(ggtk_writer_temp_path(w) != NULL);
    CHECK_MSG(ggtk_writer_write_data_from(w, source, &err) == GGTK_OK, "%s", err.message);
    CHECK_MSG(ggtk_writer_finish(w, &err) == GGTK_OK, "%s", err.message);
    CHECK(support_same_bytes(path, test_model_path()));
    /* Data already written: refused, and the write is abandoned (its temporary file removed). */
    const char *again = test_tmpfile("begun-again.gguf");
    CHECK(ggtk_writer_begin(w, again, &err) == GGTK_OK);
    char *temp = strdup(ggtk_writer_temp_path(w));
    const ggtk_tensor_info *first = ggtk_tensor(source, 0);
    CHECK(temp && access(temp, F_OK) == 0);
    CHECK(ggtk_writer_write_data(w, first->data, 16, &err) == GGTK_OK);
    CHECK(ggtk_writer_write_data_from(w, source, &err) == GGTK_ERR_USAGE);
    CHECK(ggtk_writer_temp_path(w) == NULL && access(temp, F_OK) != 0 && access(again, F_OK) != 0);
    free(temp);
    ggtk_writer_free(w);
    ggtk_close(source);
}
