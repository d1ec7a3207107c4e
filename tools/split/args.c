/* args.c - the command line of gguf-split: llama-gguf-split's options (in any order) and
 * IN OUT_PREFIX, or FIRST_PART OUT for a merge. One table lists every option; errors are one line
 * on stderr. */
#include "cli_options.h"
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

static const cli_option option_table[] = {
    {"--split", NULL, OPT_SPLIT, NULL},
    {"--merge", NULL, OPT_MERGE, NULL},
    {"--split-max-tensors", NULL, OPT_MAX_TENSORS, "N"},
    {"--split-max-size", NULL, OPT_MAX_SIZE, "N(M|G)"},
    {"--no-tensor-first-split", NULL, OPT_NO_TENSOR_FIRST, NULL},
    {"--strip-split-keys", NULL, OPT_STRIP, NULL},
    {"--dry-run", NULL, OPT_DRY_RUN, NULL},
    {"--help", "-h", OPT_HELP, NULL},
};

/* IN OUT_PREFIX, or PART OUT: two operands. */
static const cli_spec cli = {"gguf-split: ", " (see gguf-split --help)", EXIT_USAGE,
                             CLI_TABLE(option_table), 2};

/* What the options said beyond split_args, checked once all were read. */
typedef struct split_parse {
    split_args *args;
    bool limit_set;  /* --split-max-tensors or --split-max-size given */
    bool split_given;
    bool merge_given;
} split_parse;

static int parse_max_tensors(split_args *args, const char *text)
{
    if (!split_limit_parse_tensors(text, &args->max_tensors))
        return cli_usage_error(&cli, "--split-max-tensors wants a positive tensor count, not '%s'",
                               text);
    return 0;
}

static int parse_max_size(split_args *args, const char *text)
{
    if (!split_limit_parse_size(text, &args->max_bytes))
        return cli_usage_error(&cli,
                               "--split-max-size wants N followed by M or G (128M, 4G), not '%s'",
                               text);
    return 0;
}

/* cli_parse's handler of one option. */
static int apply_option(void *context, const cli_arg *arg)
{
    split_parse *parse = context;
    split_args *args = parse->args;
    switch ((enum option_id)arg->option->id) {
    case OPT_SPLIT:
        args->merge = false;
        parse->split_given = true;
        return 0;
    case OPT_MERGE:
        args->merge = true;
        parse->merge_given = true;
        return 0;
    case OPT_NO_TENSOR_FIRST: args->no_tensor_first_split = true; return 0;
    case OPT_STRIP: args->strip_split_keys = true; return 0;
    case OPT_DRY_RUN: args->dry_run = true; return 0;
    case OPT_HELP: fputs(usage_text, stdout); return CLI_STOP;
    case OPT_MAX_TENSORS:
    case OPT_MAX_SIZE:
        if (parse->limit_set)
            return cli_usage_error(&cli,
                                   "give either --split-max-tensors or --split-max-size, once");
        parse->limit_set = true;
        return arg->option->id == OPT_MAX_TENSORS ? parse_max_tensors(args, arg->value)
                                                  : parse_max_size(args, arg->value);
    }
    return EXIT_USAGE;
}

static int check_combination(const split_parse *parse)
{
    const split_args *args = parse->args;
    if (parse->split_given && parse->merge_given)
        return cli_usage_error(&cli, "give either --split or --merge, not both");
    if (args->merge && (parse->limit_set || args->no_tensor_first_split))
        return cli_usage_error(&cli, "--merge takes no --split-max-* or --no-tensor-first-split");
    if (!args->merge && args->strip_split_keys)
        return cli_usage_error(&cli, "--strip-split-keys is for --merge");
    return 0;
}

int split_args_parse(split_args *args, int argc, char **argv, bool *exit_now)
{
    memset(args, 0, sizeof *args);
    args->max_tensors = SPLIT_DEFAULT_MAX_TENSORS;
    split_parse parse = {.args = args};
    const char *positional[2];
    int n_positional;
    int rc = cli_parse(&cli, argc, argv, apply_option, &parse, positional, &n_positional, exit_now);
    if (rc != 0 || *exit_now)
        return rc;
    rc = check_combination(&parse);
    if (rc != 0)
        return rc;
    if (n_positional != 2)
        return cli_usage_error(&cli, "%s",
                               args->merge ? "expected PART OUT" : "expected IN OUT_PREFIX");
    args->input = positional[0];
    args->output = positional[1];
    return 0;
}
