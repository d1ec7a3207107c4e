/* args.c - the command line of gguf-quantize: IN OUT TYPE plus options, which may come in any
 * order. One table lists every option; errors are one line on stderr. */
#include "cli_options.h"
#include "quantize_tool.h"
#include "split_limits.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char usage_text[] =
    "usage: gguf-quantize [options] IN OUT TYPE\n"
    "       gguf-quantize --dry-run [options] IN [OUT] TYPE\n"
    "\n"
    "Convert the GGUF model IN (a file, or any part of a split model) to the file type TYPE and\n"
    "write OUT (through a temporary file renamed at the end; with --split-max-*, the parts\n"
    "OUT-00001-of-0000N.gguf, ... renamed together once all were written). TYPE is\n"
    "llama-quantize's name, in any case, or its number: F32 F16 BF16 Q4_0 Q4_1 Q5_0 Q5_1 Q8_0\n"
    "Q2_K Q3_K_S Q3_K_M Q3_K_L Q4_K_S Q4_K_M Q5_K_S Q5_K_M Q6_K (Q3_K, Q4_K, Q5_K: the _M mixes).\n"
    "As llama-quantize does, 1-D tensors and norms keep their type, weight matrices get TYPE's\n"
    "tensor type and (unless --pure) the mix's per-tensor choices: output.weight Q6_K (Q8_0 when\n"
    "rows are not whole blocks), attn_v/ffn_down bumps by layer, ...\n"
    "Rows that do not split into a type's blocks fall back to a type that fits (see --dry-run).\n"
    "\n"
    "options:\n"
    "  --pure                    every weight matrix gets TYPE's tensor type\n"
    "  --output-type T           type of output.weight (alias --output-tensor-type)\n"
    "  --embd-type T             type of token_embd.weight (alias --token-embedding-type)\n"
    "  --tensor-type PATTERN=T   tensors whose name matches the regular expression PATTERN\n"
    "                            (POSIX extended, searched in the name, case ignored) get T;\n"
    "                            repeatable, the first match wins; quantized TYPEs only\n"
    "  --no-fallback             fail, naming the tensor, when its rows do not fit the type\n"
    "                            chosen for it, instead of falling back to another type\n"
    "  --allow-requantize        convert tensors that are already quantized (lower quality)\n"
    "  --imatrix FILE            importance matrix (llama-imatrix's GGUF or .dat, or gguf-eval\n"
    "                            --imatrix-out): converted tensors with an entry are quantized\n"
    "                            with its weights, as llama-quantize does\n"
    "  --include-weights NAME    use only the imatrix entries whose name contains NAME\n"
    "  --exclude-weights NAME    do not use the entries whose name contains NAME (repeatable;\n"
    "                            not together with --include-weights)\n"
    "  --split-max-tensors N     write a split model, at most N tensors per part\n"
    "  --split-max-size N(M|G)   write a split model, at most N megabytes (10^6 bytes) or\n"
    "                            gigabytes of tensor data per part (parts as gguf-split cuts)\n"
    "  --no-tensor-first-split   with --split-max-*: the first part holds the metadata only\n"
    "  --dry-run                 print the plan (types, fallbacks, bits per weight), write nothing\n"
    "  -t, --threads N           threads (default: all cores)\n"
    "  -q, --quiet               no progress bar and no table, only warnings and errors\n"
    "  -h, --help                this help\n";

enum option_id {
    OPT_PURE, OPT_OUTPUT_TYPE, OPT_EMBD_TYPE, OPT_TENSOR_TYPE, OPT_NO_FALLBACK,
    OPT_ALLOW_REQUANTIZE, OPT_DRY_RUN, OPT_THREADS, OPT_QUIET, OPT_HELP, OPT_SPLIT_MAX_TENSORS,
    OPT_SPLIT_MAX_SIZE, OPT_NO_TENSOR_FIRST_SPLIT, OPT_IMATRIX, OPT_INCLUDE_WEIGHTS,
    OPT_EXCLUDE_WEIGHTS
};

static const cli_option option_table[] = {
    {"--pure", NULL, OPT_PURE, NULL},
    {"--output-type", "--output-tensor-type", OPT_OUTPUT_TYPE, "T"},
    {"--embd-type", "--token-embedding-type", OPT_EMBD_TYPE, "T"},
    {"--tensor-type", NULL, OPT_TENSOR_TYPE, "PATTERN=T"},
    {"--no-fallback", NULL, OPT_NO_FALLBACK, NULL},
    {"--allow-requantize", NULL, OPT_ALLOW_REQUANTIZE, NULL},
    {"--dry-run", NULL, OPT_DRY_RUN, NULL},
    {"--threads", "-t", OPT_THREADS, "N"},
    {"--quiet", "-q", OPT_QUIET, NULL},
    {"--help", "-h", OPT_HELP, NULL},
    {"--split-max-tensors", NULL, OPT_SPLIT_MAX_TENSORS, "N"},
    {"--split-max-size", NULL, OPT_SPLIT_MAX_SIZE, "N(M|G)"},
    {"--no-tensor-first-split", NULL, OPT_NO_TENSOR_FIRST_SPLIT, NULL},
    {"--imatrix", NULL, OPT_IMATRIX, "FILE"},
    {"--include-weights", NULL, OPT_INCLUDE_WEIGHTS, "NAME"},
    {"--exclude-weights", NULL, OPT_EXCLUDE_WEIGHTS, "NAME"},
};

/* IN OUT TYPE: three operands. */
static const cli_spec cli = {"gguf-quantize: ", " (see gguf-quantize --help)", EXIT_USAGE,
                             CLI_TABLE(option_table), 3};

static bool type_allowed(int type)
{
    return type >= 0 && inf_quantize_tensor_type_supported((ggtk_tensor_type)type);
}

/* A tensor type by name (any case) for --output-type, --embd-type and --tensor-type; -1 after
 * printing an error that lists the allowed names. */
static int parse_type(const char *name)
{
    int type = ggtk_tensor_type_from_name(name);
    if (type_allowed(type))
        return type;
    fprintf(stderr, "gguf-quantize: unknown or unsupported tensor type '%s' (supported:", name);
    for (int t = 0; t < GGTK_TENSOR_TYPE_COUNT; t++)
        if (type_allowed(t))
            fprintf(stderr, " %s", ggtk_tensor_type_info_get((ggtk_tensor_type)t)->name);
    fprintf(stderr, ")\n");
    return -1;
}

/* TYPE: a file type by llama-quantize's name or number that our rules cover; -1 after printing an
 * error that lists them. */
static int parse_file_type(const char *name)
{
    int file_type = inf_quantize_file_type_from_name(name);
    if (file_type >= 0 && inf_quantize_file_type_supported((uint32_t)file_type))
        return file_type;
    fprintf(stderr, "gguf-quantize: %s file type '%s' (supported:",
            file_type >= 0 ? "unsupported" : "unknown", name);
    for (uint32_t code = 0; code < GGTK_FILE_TYPE_COUNT; code++)
        if (inf_quantize_file_type_supported(code))
            fprintf(stderr, " %s", inf_quantize_file_type_name(code));
    fprintf(stderr, ")\n");
    return -1;
}

static int parse_threads(const char *text, int *threads)
{
    char *end = NULL;
    errno = 0;
    long n = strtol(text, &end, 10);
    if (errno || end == text || *end || n < 1 || n > 4096)
        return cli_usage_error(&cli, "-t wants a thread count from 1 to 4096, not '%s'", text);
    *threads = (int)n;
    return 0;
}

/* One limit of a split output; a second limit is a usage error (as for llama-gguf-split). */
static int parse_split_limit(tool_args *args, enum option_id id, const char *value)
{
    ggtk_split_options *split = &args->options.split;
    if (split->max_tensors > 0 || split->max_bytes > 0)
        return cli_usage_error(&cli, "give either --split-max-tensors or --split-max-size, once");
    if (id == OPT_SPLIT_MAX_TENSORS && !split_limit_parse_tensors(value, &split->max_tensors))
        return cli_usage_error(&cli, "--split-max-tensors wants a positive tensor count, not '%s'",
                               value);
    if (id == OPT_SPLIT_MAX_SIZE && !split_limit_parse_size(value, &split->max_bytes))
        return cli_usage_error(&cli,
                               "--split-max-size wants N followed by M or G (128M, 4G), not '%s'",
                               value);
    return 0;
}

/* PATTERN=TYPE, split at the last '=' so that the pattern may itself contain '='. */
static int parse_tensor_rule(tool_args *args, const char *text)
{
    const char *eq = strrchr(text, '=');
    if (!eq || eq == text || !eq[1])
        return cli_usage_error(&cli, "--tensor-type wants PATTERN=TYPE, not '%s'", text);
    int type = parse_type(eq + 1);
    if (type < 0)
        return EXIT_USAGE;
    size_t n = args->options.n_tensor_rules;
    inf_quantize_tensor_rule *rules = realloc(args->rules, (n + 1) * sizeof *rules);
    if (rules)
        args->rules = rules;
    char **patterns = rules ? realloc(args->rule_patterns, (n + 1) * sizeof *patterns) : NULL;
    if (patterns)
        args->rule_patterns = patterns;
    char *pattern = patterns ? strndup(text, (size_t)(eq - text)) : NULL;
    if (!pattern) {
        fprintf(stderr, "gguf-quantize: out of memory\n");
        return EXIT_FAILED;
    }
    args->rule_patterns[n] = pattern;
    args->rules[n] = (inf_quantize_tensor_rule){pattern, (ggtk_tensor_type)type};
    args->options.n_tensor_rules = n + 1;
    args->options.tensor_rules = args->rules;
    return 0;
}

/* --include-weights / --exclude-weights NAME; llama-quantize takes one kind only. */
static int add_weights_name(tool_args *args, bool include, const char *name)
{
    if (include ? args->n_exclude_weights : args->n_include_weights)
        return cli_usage_error(&cli, "--include-weights and --exclude-weights cannot be used "
                                     "together");
    const char ***list = include ? &args->include_weights : &args->exclude_weights;
    size_t *n = include ? &args->n_include_weights : &args->n_exclude_weights;
    const char **grown = realloc(*list, (*n + 1) * sizeof *grown);
    if (!grown) {
        fprintf(stderr, "gguf-quantize: out of memory\n");
        return EXIT_FAILED;
    }
    grown[(*n)++] = name;
    *list = grown;
    return 0;
}

/* cli_parse's handler of one option. */
static int apply_option(void *context, const cli_arg *arg)
{
    tool_args *args = context;
    enum option_id id = (enum option_id)arg->option->id;
    const char *value = arg->value;
    switch (id) {
    case OPT_PURE: args->options.pure = true; return 0;
    case OPT_NO_FALLBACK: args->options.no_fallback = true; return 0;
    case OPT_ALLOW_REQUANTIZE: args->options.allow_requantize = true; return 0;
    case OPT_DRY_RUN: args->dry_run = true; return 0;
    case OPT_QUIET: args->quiet = true; return 0;
    case OPT_HELP: fputs(usage_text, stdout); return CLI_STOP;
    case OPT_THREADS: return parse_threads(value, &args->options.n_threads);
    case OPT_SPLIT_MAX_TENSORS:
    case OPT_SPLIT_MAX_SIZE: return parse_split_limit(args, id, value);
    case OPT_NO_TENSOR_FIRST_SPLIT: args->options.split.no_tensor_first_part = true; return 0;
    case OPT_TENSOR_TYPE: return parse_tensor_rule(args, value);
    case OPT_OUTPUT_TYPE:
        return (args->options.output_type = parse_type(value)) < 0 ? EXIT_USAGE : 0;
    case OPT_EMBD_TYPE:
        return (args->options.embd_type = parse_type(value)) < 0 ? EXIT_USAGE : 0;
    case OPT_IMATRIX: args->imatrix_path = value; return 0;
    case OPT_INCLUDE_WEIGHTS:
    case OPT_EXCLUDE_WEIGHTS: return add_weights_name(args, id == OPT_INCLUDE_WEIGHTS, value);
    }
    return EXIT_USAGE;
}

/* IN OUT TYPE, or IN [OUT] TYPE in a dry run. */
static int assign_positionals(tool_args *args, const char **positional, int n)
{
    if (n == 2 && args->dry_run) {
        args->input = positional[0];
    } else if (n == 3) {
        args->input = positional[0];
        args->output = positional[1];
    } else {
        return cli_usage_error(&cli, "%s",
                               args->dry_run ? "expected IN [OUT] TYPE" : "expected IN OUT TYPE");
    }
    int file_type = parse_file_type(positional[n - 1]);
    if (file_type < 0)
        return EXIT_USAGE;
    args->options.file_type = (ggtk_file_type)file_type;
    return 0;
}

int tool_args_parse(tool_args *args, int argc, char **argv, bool *exit_now)
{
    memset(args, 0, sizeof *args);
    args->options = inf_quantize_options_default(GGTK_FILE_TYPE_F32);
    const char *positional[3];
    int n_positional;
    int rc = cli_parse(&cli, argc, argv, apply_option, args, positional, &n_positional, exit_now);
    if (rc != 0 || *exit_now)
        return rc;
    const ggtk_split_options *split = &args->options.split;
    if (split->no_tensor_first_part && split->max_tensors == 0 && split->max_bytes == 0)
        return cli_usage_error(&cli, "--no-tensor-first-split needs --split-max-tensors or "
                                     "--split-max-size");
    return assign_positionals(args, positional, n_positional);
}

void tool_args_free(tool_args *args)
{
    for (size_t i = 0; i < args->options.n_tensor_rules; i++)
        free(args->rule_patterns[i]);
    free(args->rule_patterns);
    free(args->rules);
    free(args->include_weights);
    free(args->exclude_weights);
}
