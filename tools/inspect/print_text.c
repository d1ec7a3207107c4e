/* print_text.c - the default report as aligned text: header, metadata, tensor table, a summary
 * per tensor type and the model summary. Keys, names and strings are printed escaped, so each
 * key and each tensor is exactly one line whatever bytes the file holds. */
#include "inspect.h"

#include <inttypes.h>
#include <string.h>

static double mebibytes(uint64_t bytes) { return (double)bytes / (1024.0 * 1024.0); }

static void print_header(const ggtk_file *file)
{
    printf("file            ");
    inspect_print_escaped(stdout, ggtk_path(file), 0);
    putchar('\n');
    printf("version         %" PRIu32 "\n", ggtk_version(file));
    printf("alignment       %" PRIu32 "\n", ggtk_alignment(file));
    printf("kv count        %" PRId64 "\n", ggtk_kv_count(file));
    printf("tensor count    %" PRId64 "\n", ggtk_tensor_count(file));
    printf("data offset     %" PRIu64 "\n", ggtk_data_offset(file));
    printf("file size       %" PRIu64 " (%.2f MiB)\n", ggtk_file_size(file),
           mebibytes(ggtk_file_size(file)));
}

static void print_metadata(const inspect_options *opt, const ggtk_file *file)
{
    int key_width = 0, type_width = 0;
    char type[64];
    for (int64_t i = 0; i < ggtk_kv_count(file); i++) {
        int k = inspect_escaped_width(ggtk_kv_key(file, i));
        int t = (int)strlen(inspect_value_type_label(ggtk_kv_value(file, i), type, sizeof type));
        key_width = k > key_width ? k : key_width;
        type_width = t > type_width ? t : type_width;
    }
    printf("\nmetadata: %" PRId64 " keys\n", ggtk_kv_count(file));
    for (int64_t i = 0; i < ggtk_kv_count(file); i++) {
        const ggtk_value *value = ggtk_kv_value(file, i);
        printf("  ");
        inspect_print_escaped(stdout, ggtk_kv_key(file, i), key_width);
        printf("  %-*s  ", type_width, inspect_value_type_label(value, type, sizeof type));
        inspect_print_value(stdout, value, opt->full);
        putchar('\n');
    }
}

static void print_tensors(const inspect_options *opt, const ggtk_file *file)
{
    int64_t n = ggtk_tensor_count(file), shown = 0;
    int name_width = 4, shape_width = 5;
    char shape[128];
    for (int64_t i = 0; i < n; i++) {
        const ggtk_tensor_info *t = ggtk_tensor(file, i);
        if (!inspect_tensor_selected(opt, t->name))
            continue;
        int w = inspect_escaped_width(t->name);
        int s = (int)strlen(inspect_shape_label(t, shape, sizeof shape));
        name_width = w > name_width ? w : name_width;
        shape_width = s > shape_width ? s : shape_width;
        shown++;
    }
    if (opt->tensor_glob) {
        printf("\ntensors: %" PRId64 " of %" PRId64 " match '", shown, n);
        inspect_print_escaped(stdout, opt->tensor_glob, 0);
        printf("'\n");
    } else
        printf("\ntensors: %" PRId64 " (offsets from the start of the data section)\n", n);
    printf("  %5s  %-*s  %-7s  %-*s  %12s  %12s\n", "index", name_width, "name", "type",
           shape_width, "shape", "offset", "bytes");
    for (int64_t i = 0; i < n; i++) {
        const ggtk_tensor_info *t = ggtk_tensor(file, i);
        if (!inspect_tensor_selected(opt, t->name))
            continue;
        printf("  %5" PRId64 "  ", i);
        inspect_print_escaped(stdout, t->name, name_width);
        printf("  %-7s  %-*s  %12" PRIu64 "  %12" PRIu64 "\n", ggtk_tensor_type_name(t->type),
               shape_width, inspect_shape_label(t, shape, sizeof shape), t->offset, t->size);
    }
}

static void print_types(const ggtk_summary *summary)
{
    printf("\ntensor types: %d\n", summary->n_types);
    printf("  %-7s  %7s  %14s  %12s  %9s\n", "type", "tensors", "elements", "bytes", "% of data");
    for (int i = 0; i < summary->n_types; i++) {
        const ggtk_type_usage *u = &summary->types[i];
        double share =
            summary->tensor_bytes ? 100.0 * (double)u->bytes / (double)summary->tensor_bytes : 0.0;
        printf("  %-7s  %7" PRId64 "  %14" PRIu64 "  %12" PRIu64 "  %8.2f%%\n",
               ggtk_tensor_type_name(u->type), u->tensors, u->elements, u->bytes, share);
    }
}

/* Parameter count scaled the way llama.cpp prints "model params": T, B, M or K. */
static void print_parameters(uint64_t parameters)
{
    static const struct {
        double scale;
        const char *unit;
    } units[] = {{1e12, "T"}, {1e9, "B"}, {1e6, "M"}, {1e3, "K"}};
    size_t u = 0;
    while (u + 1 < sizeof units / sizeof units[0] && (double)parameters < units[u].scale)
        u++;
    printf("  parameters       %" PRIu64 " (%.2f %s)\n", parameters,
           (double)parameters / units[u].scale, units[u].unit);
}

static void print_model(const ggtk_summary *summary)
{
    printf("\nmodel\n");
    printf("  architecture     ");
    inspect_print_escaped(stdout, summary->architecture ? summary->architecture : "(none)", 0);
    putchar('\n');
    print_parameters(summary->parameters);
    printf("  tensor data      %" PRIu64 " bytes (%.2f MiB)\n", summary->tensor_bytes,
           mebibytes(summary->tensor_bytes));
    printf("  bits per weight  %.2f\n", summary->bits_per_weight);
    const ggtk_file_type_info *ft = summary->file_type_info;
    printf("  file type        %" PRIu32 " %s (llama.cpp: %s)%s\n", summary->file_type,
           ft ? ft->name : "UNKNOWN", ft ? ft->label : "unknown, may not work",
           summary->file_type_guessed ? ", guessed: no valid general.file_type" : "");
}

int inspect_print_text(const inspect_options *opt, const ggtk_file *file,
                       const ggtk_summary *summary)
{
    print_header(file);
    print_metadata(opt, file);
    print_tensors(opt, file);
    print_types(summary);
    print_model(summary);
    return EXIT_OK;
}
