/* split.c - gguf-inspect on a part of a split model: the report of the part (text or JSON) is
 * followed by the set's parts (which opens and checks the whole set), and --check validates every
 * part and the set as libgguf's ggtk_split_open() does. */
#include "inspect.h"

#include <inttypes.h>
#include <string.h>

bool inspect_is_split_part(const ggtk_file *file)
{
    uint64_t count = 0;
    return ggtk_get_uint(file, GGTK_SPLIT_KEY_COUNT, &count) == GGTK_OK && count > 1;
}

static ggtk_split *open_set(const char *path, ggtk_open_mode mode)
{
    ggtk_error err;
    ggtk_split *set = ggtk_split_open(path, mode, &err);
    if (!set)
        inspect_error("%s", err.message);
    return set;
}

int inspect_print_split(const char *path)
{
    ggtk_split *set = open_set(path, GGTK_OPEN_METADATA);
    if (!set)
        return EXIT_FAIL;
    int n_parts = ggtk_split_part_count(set);
    printf("\nsplit model: %d parts, %" PRId64 " tensors in all (metadata from part 1)\n",
           n_parts, ggtk_split_tensor_count(set));
    printf("  %5s  %7s  %12s  %s\n", "part", "tensors", "file size", "file");
    for (int p = 0; p < n_parts; p++) {
        const ggtk_file *part = ggtk_split_part(set, p);
        printf("  %5d  %7" PRId64 "  %12" PRIu64 "  ", p + 1, ggtk_tensor_count(part),
               ggtk_file_size(part));
        inspect_print_escaped(stdout, ggtk_path(part), 0);
        putchar('\n');
    }
    ggtk_split_close(set);
    return EXIT_OK;
}

json_t *inspect_split_json(const char *path, bool *failed)
{
    *failed = true;
    ggtk_split *set = open_set(path, GGTK_OPEN_METADATA);
    if (!set)
        return NULL;
    json_t *parts = json_array();
    for (int p = 0; p < ggtk_split_part_count(set); p++) {
        const ggtk_file *part = ggtk_split_part(set, p);
        inspect_json_append(&parts, json_pack("{s:o, s:I, s:I}", "file",
                                              inspect_json_string(ggtk_path(part),
                                                                  strlen(ggtk_path(part))),
                                              "tensor_count", (json_int_t)ggtk_tensor_count(part),
                                              "file_size", (json_int_t)ggtk_file_size(part)));
    }
    json_t *split = parts ? json_pack("{s:I, s:o}", "tensor_count",
                                      (json_int_t)ggtk_split_tensor_count(set), "parts", parts)
                          : NULL;
    ggtk_split_close(set);
    *failed = false;
    return split;
}

int inspect_check_split(const char *path)
{
    ggtk_split *set = open_set(path, GGTK_OPEN_MMAP);
    if (!set)
        return EXIT_FAIL;
    int status = EXIT_OK;
    for (int p = 0; p < ggtk_split_part_count(set) && status == EXIT_OK; p++) {
        ggtk_error err;
        const ggtk_file *part = ggtk_split_part(set, p);
        if (ggtk_check_contents(part, &err) != GGTK_OK) {
            inspect_error("%s", err.message);
            status = EXIT_FAIL;
        } else if (!inspect_check_blocks(ggtk_path(part), part)) {
            status = EXIT_FAIL;
        }
    }
    const ggtk_file *first = ggtk_split_part(set, 0);
    if (status == EXIT_OK)
        printf("%s: OK (split model of %d parts, version %u, %lld keys, %lld tensors)\n", path,
               ggtk_split_part_count(set), ggtk_version(first), (long long)ggtk_kv_count(first),
               (long long)ggtk_split_tensor_count(set));
    ggtk_split_close(set);
    return status;
}
