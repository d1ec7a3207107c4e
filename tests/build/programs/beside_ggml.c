/* beside_ggml.c - a program that links ggml's libggml-base and our libgguf together (as one
 * using llama.cpp and ggtk would) and reads the same file with both readers: built by
 * tests/build/test_beside_ggml.c in both link orders. Before the ggtk_ prefix and hidden
 * symbols, libgguf's own calls to gguf_find_key and friends bound to ggml's and crashed. */
#include <gguf.h>        /* ggml's reader */
#include <ggtk/gguf.h>   /* ours */

#include <stdio.h>
#include <string.h>

/* Compare the key and tensor tables of the two readers; prints the first difference. */
static int compare(const struct gguf_context *ggml, const ggtk_file *ours)
{
    if (gguf_get_n_kv(ggml) != ggtk_kv_count(ours) || gguf_get_n_tensors(ggml) != ggtk_tensor_count(ours)) {
        printf("counts differ: ggml %lld keys %lld tensors, ggtk %lld keys %lld tensors\n",
               (long long)gguf_get_n_kv(ggml), (long long)gguf_get_n_tensors(ggml),
               (long long)ggtk_kv_count(ours), (long long)ggtk_tensor_count(ours));
        return 1;
    }
    for (int64_t i = 0; i < gguf_get_n_kv(ggml); i++) {
        const char *key = gguf_get_key(ggml, i);
        if (strcmp(key, ggtk_kv_key(ours, i)) != 0 || gguf_find_key(ggml, key) != ggtk_find_key(ours, key)) {
            printf("key %lld differs: %s\n", (long long)i, key);
            return 1;
        }
    }
    for (int64_t i = 0; i < gguf_get_n_tensors(ggml); i++) {
        const char *name = gguf_get_tensor_name(ggml, i);
        const ggtk_tensor_info *info = ggtk_tensor(ours, i);
        if (strcmp(name, info->name) != 0 || gguf_find_tensor(ggml, name) != ggtk_find_tensor(ours, name) ||
            gguf_get_tensor_offset(ggml, i) != info->offset) {
            printf("tensor %lld differs: %s\n", (long long)i, name);
            return 1;
        }
    }
    const char *arch = NULL;
    ggtk_get_string(ours, "general.architecture", &arch);
    printf("both read %lld keys and %lld tensors, architecture %s and %s: agree\n",
           (long long)ggtk_kv_count(ours), (long long)ggtk_tensor_count(ours),
           gguf_get_val_str(ggml, gguf_find_key(ggml, "general.architecture")), arch);
    return 0;
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: beside_ggml MODEL\n");
        return 2;
    }
    struct gguf_init_params params = {.no_alloc = true, .ctx = NULL};
    struct gguf_context *ggml = gguf_init_from_file(argv[1], params);
    ggtk_error err;
    ggtk_file *ours = ggtk_open(argv[1], GGTK_OPEN_METADATA, &err);
    if (!ggml || !ours) {
        fprintf(stderr, "%s\n", ggml ? err.message : "ggml could not read the file");
        return 1;
    }
    int rc = compare(ggml, ours);
    gguf_free(ggml);
    ggtk_close(ours);
    return rc;
}
