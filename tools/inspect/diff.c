/* diff.c - gguf-inspect A B: print what differs (metadata keys, tensors, data hashes) as text
 * lines or as a JSON document; exit 0 when identical, 1 when anything differs. */
#include "inspect.h"

#include <inttypes.h>
#include <jansson.h>

/* Word printed for each kind of difference, indexed by gguf_diff_kind. */
static const char *const kind_names[] = {
    [GGUF_DIFF_VERSION] = "version",
    [GGUF_DIFF_KEY_REMOVED] = "key_removed",
    [GGUF_DIFF_KEY_ADDED] = "key_added",
    [GGUF_DIFF_KEY_CHANGED] = "key_changed",
    [GGUF_DIFF_TENSOR_REMOVED] = "tensor_removed",
    [GGUF_DIFF_TENSOR_ADDED] = "tensor_added",
    [GGUF_DIFF_TENSOR_TYPE] = "tensor_type",
    [GGUF_DIFF_TENSOR_SHAPE] = "tensor_shape",
    [GGUF_DIFF_TENSOR_DATA] = "tensor_data",
};

static bool is_tensor_kind(gguf_diff_kind kind) { return kind >= GGUF_DIFF_TENSOR_REMOVED; }

static bool entry_selected(const inspect_options *opt, const gguf_diff_entry *e)
{
    return !is_tensor_kind(e->kind) || inspect_tensor_selected(opt, e->name);
}

static void print_key(const gguf_file *file, int64_t index, bool full)
{
    char type[64];
    const gguf_value *value = gguf_kv_value(file, index);
    printf("%s ", inspect_value_type_label(value, type, sizeof type));
    inspect_print_value(stdout, value, full);
}

static const char *type_name(const gguf_tensor_info *t)
{
    return gguf_tensor_type_info_get(t->type)->name;
}

static void print_tensor(const gguf_file *file, int64_t index)
{
    char shape[128];
    const gguf_tensor_info *t = gguf_tensor(file, index);
    printf("%s %s", type_name(t),
           inspect_shape_label(t, shape, sizeof shape));
}

static void print_entry_text(const inspect_options *opt, const gguf_file *a, const gguf_file *b,
                             const gguf_diff_entry *e)
{
    char shape_a[128], shape_b[128];
    printf("%-15s", kind_names[e->kind]);
    switch (e->kind) {
    case GGUF_DIFF_VERSION: printf("%u -> %u", gguf_version(a), gguf_version(b)); break;
    case GGUF_DIFF_KEY_REMOVED: printf("%s  ", e->name), print_key(a, e->index_a, opt->full); break;
    case GGUF_DIFF_KEY_ADDED: printf("%s  ", e->name), print_key(b, e->index_b, opt->full); break;
    case GGUF_DIFF_KEY_CHANGED:
        printf("%s  ", e->name);
        print_key(a, e->index_a, opt->full);
        printf("  ->  ");
        print_key(b, e->index_b, opt->full);
        break;
    case GGUF_DIFF_TENSOR_REMOVED: printf("%s  ", e->name), print_tensor(a, e->index_a); break;
    case GGUF_DIFF_TENSOR_ADDED: printf("%s  ", e->name), print_tensor(b, e->index_b); break;
    case GGUF_DIFF_TENSOR_TYPE:
        printf("%s  %s -> %s", e->name, type_name(gguf_tensor(a, e->index_a)),
               type_name(gguf_tensor(b, e->index_b)));
        break;
    case GGUF_DIFF_TENSOR_SHAPE:
        printf("%s  %s -> %s", e->name,
               inspect_shape_label(gguf_tensor(a, e->index_a), shape_a, sizeof shape_a),
               inspect_shape_label(gguf_tensor(b, e->index_b), shape_b, sizeof shape_b));
        break;
    case GGUF_DIFF_TENSOR_DATA:
        printf("%s  xxh64 %016" PRIx64 " -> %016" PRIx64, e->name, e->hash_a, e->hash_b);
        break;
    }
    putchar('\n');
}

static int64_t print_text(const inspect_options *opt, const gguf_file *a, const gguf_file *b,
                          const gguf_diff *diff)
{
    int64_t shown = 0;
    printf("--- %s\n+++ %s\n", opt->files[0], opt->files[1]);
    for (int64_t k = 0; k < diff->count; k++) {
        if (!entry_selected(opt, &diff->entries[k]))
            continue;
        print_entry_text(opt, a, b, &diff->entries[k]);
        shown++;
    }
    printf("%s: %lld differences; %lld tensors in both with the same type and shape, compared "
           "by xxh64\n",
           shown ? "different" : "identical", (long long)shown, (long long)diff->tensors_compared);
    return shown;
}

static json_t *entry_json(const gguf_file *a, const gguf_file *b, const gguf_diff_entry *e)
{
    json_t *entry = json_pack("{s:s, s:s?}", "kind", kind_names[e->kind], "name", e->name);
    if (entry && e->kind == GGUF_DIFF_VERSION) {
        json_object_set_new(entry, "a", json_integer(gguf_version(a)));
        json_object_set_new(entry, "b", json_integer(gguf_version(b)));
    }
    if (entry && e->kind == GGUF_DIFF_TENSOR_DATA) {
        char hex[17];
        snprintf(hex, sizeof hex, "%016" PRIx64, e->hash_a);
        json_object_set_new(entry, "xxh64_a", json_string(hex));
        snprintf(hex, sizeof hex, "%016" PRIx64, e->hash_b);
        json_object_set_new(entry, "xxh64_b", json_string(hex));
    }
    return entry;
}

static int64_t print_json(const inspect_options *opt, const gguf_file *a, const gguf_file *b,
                          const gguf_diff *diff, bool *ok)
{
    int64_t shown = 0;
    json_t *list = json_array();
    for (int64_t k = 0; list && k < diff->count; k++) {
        if (!entry_selected(opt, &diff->entries[k]))
            continue;
        json_array_append_new(list, entry_json(a, b, &diff->entries[k]));
        shown++;
    }
    json_t *root = json_pack("{s:s, s:s, s:b, s:I, s:o}", "a", opt->files[0], "b", opt->files[1],
                             "identical", shown == 0, "tensors_compared",
                             (json_int_t)diff->tensors_compared, "differences", list);
    *ok = root && json_dumpf(root, stdout, JSON_INDENT(2)) == 0;
    if (*ok)
        putchar('\n');
    json_decref(root);
    return shown;
}

int inspect_diff(const inspect_options *opt)
{
    gguf_file *a = inspect_open(opt->files[0], GGUF_OPEN_MMAP);
    gguf_file *b = a ? inspect_open(opt->files[1], GGUF_OPEN_MMAP) : NULL;
    gguf_diff diff = {0};
    gguf_error err;
    int status = EXIT_FAIL;
    if (!b)
        goto done;
    if (gguf_diff_files(a, b, true, &diff, &err) != GGUF_OK) {
        inspect_error("%s", err.message);
        goto done;
    }
    bool ok = true;
    int64_t shown = opt->json ? print_json(opt, a, b, &diff, &ok) : print_text(opt, a, b, &diff);
    if (!ok)
        inspect_error("%s: building the JSON document failed (out of memory?)", opt->files[0]);
    else
        status = shown ? EXIT_FAIL : EXIT_OK;
done:
    gguf_diff_free(&diff);
    gguf_close(b);
    gguf_close(a);
    return status;
}
