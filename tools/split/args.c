/* args.c - the command line of gguf-split: llama-gguf-split's options (in any order) and
 * IN OUT_PREFIX, or FIRST_PART OUT for a merge. One table lists every option; errors are one line
 * on stderr. */
#include "split_limits.h"
#include "split_tool.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char usage_text[] =
    "usage: gguf-split [options] IN OUT_PREFIX\n"
    "       gguf-split --merge [options] PART OUT\n"
    "\n"
    "Split the GGUF model IN into parts OUT_PREFIX-00001-of-0000N.gguf, ... or merge the parts of\n"
    "a split model (PART is any of them) into OUT, with the files, names and bytes of llama.cpp's\n"
    "llama-gguf-split. The first part carries the metadata; every part carries split.no,\n"
    "split.count and split.tensors.count. Files are written through temporary files that are\n"
    "renamed only once all were written; an input is never overwritten.\n"
    "\n"
    "options:\n"
    "  --split                   split IN (the default)\n"
    "  --merge                   merge the parts of a split model\n"
    "  --split-max-tensors N     at most N tensors per part (default: 128)\n"
    "  --split-max-size N(M|G)   at most N megabytes (M, 10^6 bytes) or gigabytes (G, 10^9) of\n"
    "                            tensor data per part\n"
    "  --no-tensor-first-split   the first part holds the metadata only\n"
    "  --strip-split-keys        merge: leave split.* out of OUT, which then equals the file\n"
    "                            that was split (llama-gguf-split keeps them, split.count 0)\n"
    "  --dry-run                 print the parts, write nothing\n"
    "  -h, --help                this help\n";

enum option_id {
    OPT_SPLIT, OPT_MERGE, OPT_MAX_TENSORS, OPT_MAX_SIZE, OPT_NO_TENSOR_FIRST, OPT_STRIP,
    OPT_DRY_RUN, OPT_HELP
};

static const struct {
    const char *name;
    const char *alias;
    enum option_id id;
    bool takes_value;
} option_table[] = {
    {"--split", NULL, OPT_SPLIT, false},
    {"--merge", NULL, OPT_MERGE, false},
    {"--split-max-tensors", NULL, OPT_MAX_TENSORS, true},
    {"--split-max-size", NULL, OPT_MAX_SIZE, true},
    {"--no-tensor-first-split", NULL, OPT_NO_TENSOR_FIRST, false},
    {"--strip-split-keys", NULL, OPT_STRIP, false},
    {"--dry-run", NULL, OPT_DRY_RUN, false},
    {"--help", "-h", OPT_HELP, false},
};

static int usage_error(const char *fmt, const char *detail)
{
    fprintf(stderr, "gguf-split: ");
    fprintf(stderr, fmt, detail);
    fprintf(stderr, " (see gguf-split --help)\n");
    return EXIT_USAGE;
}

static int parse_max_tensors(split_args *args, const char *text)
{
    if (!split_limit_parse_tensors(text, &args->max_tensors))
        return usage_error("--split-max-tensors wants a positive tensor count, not '%s'", text);
    return 0;
}

static int parse_max_size(split_args *args, const char *text)
{
    if (!split_limit_parse_size(text, &args->max_bytes))
        return usage_error("--split-max-size wants N followed by M or G (128M, 4G), not '%s'",
                           text);
    return 0;
}

static int apply_option(split_args *args, enum option_id id, const char *value, bool *exit_now,
                        bool *mode_set)
{
    switch (id) {
    case OPT_SPLIT: args->merge = false; return 0;
    case OPT_MERGE: args->merge = true; return 0;
    case OPT_NO_TENSOR_FIRST: args->no_tensor_first_split = true; return 0;
    case OPT_STRIP: args->strip_split_keys = true; return 0;
    case OPT_DRY_RUN: args->dry_run = true; return 0;
    case OPT_HELP:
        fputs(usage_text, stdout);
        *exit_now = true;
        return 0;
    case OPT_MAX_TENSORS:
    case OPT_MAX_SIZE:
        if (*mode_set)
            return usage_error("%s", "give either --split-max-tensors or --split-max-size, once");
        *mode_set = true;
        return id == OPT_MAX_TENSORS ? parse_max_tensors(args, value)
                                     : parse_max_size(args, value);
    }
    return EXIT_USAGE;
}

/* Handle argv[*i] when it is an option; returns -1 when it is not one. */
static int parse_option(split_args *args, int argc, char **argv, int *i, bool *exit_now,
                        bool *mode_set, int *operations)
{
    const char *arg = argv[*i];
    for (size_t k = 0; k < sizeof option_table / sizeof option_table[0]; k++) {
        if (strcmp(arg, option_table[k].name) != 0 &&
            !(option_table[k].alias && strcmp(arg, option_table[k].alias) == 0))
            continue;
        const char *value = NULL;
        if (option_table[k].takes_value) {
            if (*i + 1 >= argc)
                return usage_error("%s wants a value", arg);
            value = argv[++*i];
        }
        if (option_table[k].id == OPT_SPLIT || option_table[k].id == OPT_MERGE)
            *operations |= option_table[k].id == OPT_SPLIT ? 1 : 2;
        return apply_option(args, option_table[k].id, value, exit_now, mode_set);
    }
    if (arg[0] == '-' && arg[1] != '\0')
        return usage_error("unknown option '%s'", arg);
    return -1;
}

static int check_combination(const split_args *args, bool mode_set, int operations)
{
    if (operations == 3)
        return usage_error("%s", "give either --split or --merge, not both");
    if (args->merge && (mode_set || args->no_tensor_first_split))
        return usage_error("%s", "--merge takes no --split-max-* or --no-tensor-first-split");
    if (!args->merge && args->strip_split_keys)
        return usage_error("%s", "--strip-split-keys is for --merge");
    return 0;
}

int split_args_parse(split_args *args, int argc, char **argv, bool *exit_now)
{
    memset(args, 0, sizeof *args);
    args->max_tensors = SPLIT_DEFAULT_MAX_TENSORS;
    *exit_now = false;
    bool mode_set = false;
    int operations = 0;
    char *positional[2];
    int n_positional = 0;
    for (int i = 1; i < argc; i++) {
        int rc = parse_option(args, argc, argv, &i, exit_now, &mode_set, &operations);
        if (*exit_now)
            return 0;
        if (rc > 0)
            return rc;
        if (rc == 0)
            continue;
        if (n_positional == 2)
            return usage_error("unexpected argument '%s'", argv[i]);
        positional[n_positional++] = argv[i];
    }
    int rc = check_combination(args, mode_set, operations);
    if (rc != 0)
        return rc;
    if (n_positional != 2)
        return usage_error("%s", args->merge ? "expected PART OUT" : "expected IN OUT_PREFIX");
    args->input = positional[0];
    args->output = positional[1];
    return 0;
}
