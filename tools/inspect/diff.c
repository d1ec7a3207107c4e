/* diff.c - gguf-inspect A B: print what differs (metadata keys, tensors, data hashes) as text
 * lines (names escaped, one line per difference) or as a JSON document; exit 0 when identical,
 * 1 when anything differs. */
#include "inspect.h"

#include <inttypes.h>
#include <string.h>

/* Word printed for each kind of difference, indexed by ggtk_diff_kind. */
static const char *const kind_names[] = {
    [GGTK_DIFF_VERSION] = "version",
    [GGTK_DIFF_KEY_REMOVED] = "key_removed",
    [GGTK_DIFF_KEY_ADDED] = "key_added",
    [GGTK_DIFF_KEY_CHANGED] = "key_changed",
    [GGTK_DIFF_TENSOR_REMOVED] = "tensor_removed",
    [GGTK_DIFF_TENSOR_ADDED] = "tensor_added",
    [GGTK_DIFF_TENSOR_TYPE] = "tensor_type",
    [GGTK_DIFF_TENSOR_SHAPE] = "tensor_shape",
    [GGTK_DIFF_TENSOR_DATA] = "tensor_data",
};

static bool is_tensor_kind(ggtk_diff_kind kind) { return kind >= GGTK_DIFF_TENSOR_REMOVED; }

static bool entry_selected(const inspect_options *opt, const ggtk_diff_entry *e)
{
    return !is_tensor_kind(e->kind) || inspect_tensor_selected(opt, e->name);
}

static void print_key(const ggtk_file *file, int64_t index, bool full)
{
    char type[64];
    const ggtk_value *value = ggtk_kv_value(file, index);
    printf("%s ", inspect_value_type_label(value, type, sizeof type));
    inspect_print_value(stdout, value, full);
}

static void print_tensor(const ggtk_file *file, int64_t index)
{
    char shape[128];
    const ggtk_tensor_info *t = ggtk_tensor(file, index);
    printf("%s %s", ggtk_tensor_type_name(t->type),
           inspect_shape_label(t, shape, sizeof shape));
}

static void print_entry_text(const inspect_options *opt, const ggtk_file *a, const ggtk_file *b,
                             const ggtk_diff_entry *e)
{
    char shape_a[128], shape_b[128];
    printf("%-15s", kind_names[e->kind]);
    if (e->name) {
        inspect_print_escaped(stdout, e->name, 0);
        printf("  ");
    }
    switch (e->kind) {
    case GGTK_DIFF_VERSION: printf("%u -> %u", ggtk_version(a), ggtk_version(b)); break;
    case GGTK_DIFF_KEY_REMOVED: print_key(a, e->index_a, opt->full); break;
    case GGTK_DIFF_KEY_ADDED: print_key(b, e->index_b, opt->full); break;
    case GGTK_DIFF_KEY_CHANGED:
        print_key(a, e->index_a, opt->full);
        printf("  ->  ");
        print_key(b, e->index_b, opt->full);
        break;
    case GGTK_DIFF_TENSOR_REMOVED: print_tensor(a, e->index_a); break;
    case GGTK_DIFF_TENSOR_ADDED: print_tensor(b, e->index_b); break;
    case GGTK_DIFF_TENSOR_TYPE:
        printf("%s -> %s", ggtk_tensor_type_name(ggtk_tensor(a, e->index_a)->type),
               ggtk_tensor_type_name(ggtk_tensor(b, e->index_b)->type));
        break;
    case GGTK_DIFF_TENSOR_SHAPE:
        printf("%s -> %s", inspect_shape_label(ggtk_tensor(a, e->index_a), shape_a, sizeof shape_a),
               inspect_shape_label(ggtk_tensor(b, e->index_b), shape_b, sizeof shape_b));
        break;
    case GGTK_DIFF_TENSOR_DATA:
        printf("xxh64 %016" PRIx64 " -> %016" PRIx64, e->hash_a, e->hash_b);
        break;
    }
    putchar('\n');
}

static int64_t print_text(const inspect_options *opt, const ggtk_file *a, const ggtk_file *b,
                          const ggtk_diff *diff)
{
    int64_t shown = 0;
    printf("--- ");
    inspect_print_escaped(stdout, opt->files[0], 0);
    printf("\n+++ ");
    inspect_print_escaped(stdout, opt->files[1], 0);
    putchar('\n');
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

static json_t *hash_json(uint64_t hash)
{
    char hex[17];
    snprintf(hex, sizeof hex, "%016" PRIx64, hash);
    return json_string(hex);
}

/* What one side holds for this kind of difference, or NULL when the side lacks the item. */
static json_t *side_json(const inspect_options *opt, const ggtk_file *file, int64_t index,
                         const ggtk_diff_entry *e, uint64_t hash)
{
    if (e->kind == GGTK_DIFF_VERSION)
        return json_integer(ggtk_version(file));
    if (index < 0)
        return NULL;
    if (!is_tensor_kind(e->kind))
        return inspect_json_value(ggtk_kv_value(file, index), opt->full);
    const ggtk_tensor_info *t = ggtk_tensor(file, index);
    if (e->kind == GGTK_DIFF_TENSOR_DATA)
        return hash_json(hash);
    if (e->kind == GGTK_DIFF_TENSOR_SHAPE)
        return inspect_json_shape(t);
    return json_string(ggtk_tensor_type_name(t->type));
}

/* {"kind", "name", "a", "b"}: "a"/"b" hold the values of a key, the types or shapes of a
 * tensor, the xxh64 of its data, or the versions; absent on the side that lacks the item. */
static json_t *entry_json(const inspect_options *opt, const ggtk_file *a, const ggtk_file *b,
                          const ggtk_diff_entry *e)
{
    /* json_object_set_new() releases the value when the object is NULL, so no checks here. */
    json_t *entry = json_pack("{s:s}", "kind", kind_names[e->kind]);
    if (e->name)
        json_object_set_new(entry, "name", inspect_json_string(e->name, strlen(e->name)));
    json_t *side_a = side_json(opt, a, e->index_a, e, e->hash_a);
    json_t *side_b = side_json(opt, b, e->index_b, e, e->hash_b);
    if (side_a)
        json_object_set_new(entry, "a", side_a);
    if (side_b)
        json_object_set_new(entry, "b", side_b);
    return entry;
}

static int64_t print_json(const inspect_options *opt, const ggtk_file *a, const ggtk_file *b,
                          const ggtk_diff *diff, bool *ok)
{
    int64_t shown = 0;
    json_t *list = json_array();
    for (int64_t k = 0; list && k < diff->count; k++) {
        if (!entry_selected(opt, &diff->entries[k]))
            continue;
        inspect_json_append(&list, entry_json(opt, a, b, &diff->entries[k]));
        shown++;
    }
    json_t *root = json_pack("{s:o, s:o, s:b, s:I, s:o}", "a",
                             inspect_json_string(opt->files[0], strlen(opt->files[0])), "b",
                             inspect_json_string(opt->files[1], strlen(opt->files[1])),
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
    ggtk_file *a = inspect_open(opt->files[0], GGTK_OPEN_MMAP);
    ggtk_file *b = a ? inspect_open(opt->files[1], GGTK_OPEN_MMAP) : NULL;
    ggtk_diff diff = {0};
    ggtk_error err;
    int status = EXIT_FAIL;
    if (!b)
        goto done;
    if (ggtk_diff_files(a, b, true, &diff, &err) != GGTK_OK) {
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
    ggtk_diff_free(&diff);
    ggtk_close(b);
    ggtk_close(a);
    return status;
}
