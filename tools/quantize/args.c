/* args.c - the command line of gguf-quantize: IN OUT TYPE plus options, which may come in any
 * order. One table lists every option; errors are one line on stderr. */
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

static const struct {
    const char *name;
    const char *alias;
    enum option_id id;
    bool takes_value;
} option_table[] = {
    {"--pure", NULL, OPT_PURE, false},
    {"--output-type", "--output-tensor-type", OPT_OUTPUT_TYPE, true},
    {"--embd-type", "--token-embedding-type", OPT_EMBD_TYPE, true},
    {"--tensor-type", NULL, OPT_TENSOR_TYPE, true},
    {"--no-fallback", NULL, OPT_NO_FALLBACK, false},
    {"--allow-requantize", NULL, OPT_ALLOW_REQUANTIZE, false},
    {"--dry-run", NULL, OPT_DRY_RUN, false},
    {"--threads", "-t", OPT_THREADS, true},
    {"--quiet", "-q", OPT_QUIET, false},
    {"--help", "-h", OPT_HELP, false},
    {"--split-max-tensors", NULL, OPT_SPLIT_MAX_TENSORS, true},
    {"--split-max-size", NULL, OPT_SPLIT_MAX_SIZE, true},
    {"--no-tensor-first-split", NULL, OPT_NO_TENSOR_FIRST_SPLIT, false},
    {"--imatrix", NULL, OPT_IMATRIX, true},
    {"--include-weights", NULL, OPT_INCLUDE_WEIGHTS, true},
    {"--exclude-weights", NULL, OPT_EXCLUDE_WEIGHTS, true},
};

static int usage_error(const char *fmt, const char *detail)
{
    fprintf(stderr, "gguf-quantize: ");
    fprintf(stderr, fmt, detail);
    fprintf(stderr, " (see gguf-quantize --help)\n");
    return EXIT_USAGE;
}

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
        return usage_error("-t wants a thread count from 1 to 4096, not '%s'", text);
    *threads = (int)n;
    return 0;
}

/* One limit of a split output; a second limit is a usage error (as for llama-gguf-split). */
static int parse_split_limit(tool_args *args, enum option_id id, const char *value)
{
    ggtk_split_options *split = &args->options.split;
    if (split->max_tensors > 0 || split->max_bytes > 0)
        return usage_error("%s", "give either --split-max-tensors or --split-max-size, once");
    if (id == OPT_SPLIT_MAX_TENSORS && !split_limit_parse_tensors(value, &split->max_tensors))
        return usage_error("--split-max-tensors wants a positive tensor count, not '%s'", value);
    if (id == OPT_SPLIT_MAX_SIZE && !split_limit_parse_size(value, &split->max_bytes))
        return usage_error("--split-max-size wants N followed by M or G (128M, 4G), not '%s'",
                           value);
    return 0;
}

/* PATTERN=TYPE, split at the last '=' so that the pattern may itself contain '='. */
static int parse_tensor_rule(tool_args *args, const char *text)
{
    const char *eq = strrchr(text, '=');
    if (!eq || eq == text || !eq[1])
        return usage_error("--tensor-type wants PATTERN=TYPE, not '%s'", text);
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
        return usage_error("%s", "--include-weights and --exclude-weights cannot be used together");
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

static int apply_option(tool_args *args, enum option_id id, const char *value, bool *exit_now)
{
    switch (id) {
    case OPT_PURE: args->options.pure = true; return 0;
    case OPT_NO_FALLBACK: args->options.no_fallback = true; return 0;
    case OPT_ALLOW_REQUANTIZE: args->options.allow_requantize = true; return 0;
    case OPT_DRY_RUN: args->dry_run = true; return 0;
    case OPT_QUIET: args->quiet = true; return 0;
    case OPT_HELP:
        fputs(usage_text, stdout);
        *exit_now = true;
        return 0;
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

/* Handle argv[*i] when it is an option; returns -1 when it is not one. */
static int parse_option(tool_args *args, int argc, char **argv, int *i, bool *exit_now)
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
        return apply_option(args, option_table[k].id, value, exit_now);
    }
    if (arg[0] == '-' && arg[1] != '\0')
        return usage_error("unknown option '%s'", arg);
    return -1;
}

/* IN OUT TYPE, or IN [OUT] TYPE in a dry run. */
static int assign_positionals(tool_args *args, char **positional, int n)
{
    if (n == 2 && args->dry_run) {
        args->input = positional[0];
    } else if (n == 3) {
        args->input = positional[0];
        args->output = positional[1];
    } else {
        return usage_error("%s", args->dry_run ? "expected IN [OUT] TYPE" : "expected IN OUT TYPE");
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
    *exit_now = false;
    char *positional[3];
    int n_positional = 0;
    for (int i = 1; i < argc; i++) {
        int rc = parse_option(args, argc, argv, &i, exit_now);
        if (*exit_now)
            return 0;
        if (rc > 0)
            return rc;
        if (rc == 0)
            continue;
        if (n_positional == 3)
            return usage_error("unexpected argument '%s'", argv[i]);
        positional[n_positional++] = argv[i];
    }
    const ggtk_split_options *split = &args->options.split;
    if (split->no_tensor_first_part && split->max_tensors == 0 && split->max_bytes == 0)
        return usage_error("%s", "--no-tensor-first-split needs --split-max-tensors or "
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
