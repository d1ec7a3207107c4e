/* options.c - gguf-eval's command line: one table of options drives both parsing and --help. */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "cli_options.h"
#include "eval_tool.h"
#include "output_path.h"

typedef enum option_id {
    OPT_MODEL, OPT_TEXT, OPT_CTX, OPT_BATCH, OPT_THREADS, OPT_CHUNKS, OPT_NO_MMAP, OPT_MLOCK,
    OPT_JSON, OPT_KLD_BASE, OPT_KLD, OPT_KLD_FORMAT, OPT_KLD_EPSILON, OPT_KLD_MAX_ENTRIES,
    OPT_KLD_CONVERT, OPT_PLOT, OPT_KV_TYPE, OPT_IMATRIX_OUT, OPT_IMATRIX_FORMAT,
    OPT_OUT_FREQ, OPT_SAVE_FREQ, OPT_DEVICE, OPT_GPU_LAYERS, OPT_HELP,
} option_id;

/* A row of the table: the option (its value_name is the argument's name in --help and in the
 * error when it is missing) and its line of --help. */
typedef struct option_spec {
    cli_option option;
    const char *help;
} option_spec;

static const option_spec OPTIONS[] = {
    {{"--model", "-m", OPT_MODEL, "FILE"}, "the GGUF model to evaluate (required)"},
    {{"--file", "-f", OPT_TEXT, "FILE"}, "text to evaluate: plain, .gz or .zip (first file)"},
    {{"--ctx-size", "-c", OPT_CTX, "N"}, "tokens per chunk (default 512)"},
    {{"--batch-size", "-b", OPT_BATCH, "N"}, "most tokens per forward graph (default 512)"},
    {{"--threads", "-t", OPT_THREADS, "N"}, "CPU threads (default: one per core)"},
    {{"--chunks", NULL, OPT_CHUNKS, "N"}, "evaluate at most N chunks (default: all)"},
    {{"--no-mmap", NULL, OPT_NO_MMAP, NULL}, "read the weights into memory instead of mapping"},
    {{"--mlock", NULL, OPT_MLOCK, NULL}, "lock the weights in RAM"},
    {{"--json", NULL, OPT_JSON, NULL}, "print the results as one JSON object"},
    {{"--kl-divergence-base", NULL, OPT_KLD_BASE, "FILE"},
     "write the log-probabilities here (or, with --kl-divergence, read them)"},
    {{"--kl-divergence", NULL, OPT_KLD, NULL},
     "compare with the --kl-divergence-base file (its tokens replace -f)"},
    {{"--kl-divergence-base-format", NULL, OPT_KLD_FORMAT, "llama|compact"},
     "format of the base written (default llama, llama-perplexity's; read: told by the file)"},
    {{"--kl-divergence-epsilon", NULL, OPT_KLD_EPSILON, "E"},
     "compact: probability mass a position may leave to its rest bucket (default 1e-4)"},
    {{"--kl-divergence-max-entries", NULL, OPT_KLD_MAX_ENTRIES, "N"},
     "compact: at most N tokens stored per position (default 65536)"},
    {{"--kl-divergence-base-convert", NULL, OPT_KLD_CONVERT, "IN OUT"},
     "rewrite the llama-format base IN as a compact base OUT (no model needed)"},
    {{"--plot", NULL, OPT_PLOT, "FILE.svg"}, "draw per-chunk PPL (and KLD) as an SVG chart"},
    {{"--kv-type", NULL, OPT_KV_TYPE, "f16|f32"}, "KV cache type (default f16, as llama.cpp)"},
    {{"--device", "-dev", OPT_DEVICE, "cpu|cuda"},
     "compute on the CPU (also: none) or CUDA device 0 (also: CUDA0); default: CUDA when the "
     "build has it and finds a device"},
    {{"--n-gpu-layers", "-ngl", OPT_GPU_LAYERS, "N"},
     "on CUDA, the last N layers on the device; more than the model's: all of them and the "
     "output layer (default: all)"},
    {{"--gpu-layers", NULL, OPT_GPU_LAYERS, "N"}, "the same as -ngl"},
    {{"--imatrix-out", NULL, OPT_IMATRIX_OUT, "FILE"},
     "also collect an importance matrix, as llama-imatrix does, and write it here"},
    {{"--imatrix-format", NULL, OPT_IMATRIX_FORMAT, "gguf|dat"},
     "its file format (default gguf, llama-imatrix's; dat: the legacy one)"},
    {{"--output-frequency", NULL, OPT_OUT_FREQ, "N"},
     "rewrite the imatrix file every N chunks (default 10)"},
    {{"--save-frequency", NULL, OPT_SAVE_FREQ, "N"},
     "also keep a copy FILE.at_K every N chunks (default 0: none)"},
    {{"--help", "-h", OPT_HELP, NULL}, "show this help"},
};
#define N_OPTIONS (sizeof OPTIONS / sizeof OPTIONS[0])

/* gguf-eval takes no operands: every argument is an option or an option's value. */
static const cli_spec cli = {"gguf-eval: error: ", " (see --help)", EXIT_USAGE,
                             CLI_TABLE_OF(OPTIONS, option), 0};

static void print_help(void)
{
    printf("usage: gguf-eval -m MODEL -f TEXT [options]\n"
           "       gguf-eval -m MODEL --kl-divergence-base BASE --kl-divergence [options]\n"
           "       gguf-eval --kl-divergence-base-convert IN OUT [--kl-divergence-epsilon E ...]\n\n"
           "Perplexity of a GGUF model (llama, qwen2, qwen3, phi3, gemma2, gemma3) on a text, computed\n"
           "as llama.cpp's llama-perplexity does; KL-divergence against a base model's log-probabilities; importance matrices\n"
           "as llama-imatrix collects them.\n\noptions:\n");
    for (size_t i = 0; i < N_OPTIONS; i++) {
        const cli_option *o = &OPTIONS[i].option;
        char left[64];
        snprintf(left, sizeof left, "%s%s%s%s%s", o->alias ? o->alias : "", o->alias ? ", " : "",
                 o->name, o->value_name ? " " : "", o->value_name ? o->value_name : "");
        printf("  %-34s %s\n", left, OPTIONS[i].help);
    }
}

/* A whole decimal number in [min, max]. */
static bool parse_int(const char *name, const char *text, long min, long max, long *out)
{
    char *end;
    errno = 0;
    long v = strtol(text, &end, 10);
    if (errno || end == text || *end || v < min || v > max) {
        fprintf(stderr, "gguf-eval: error: %s needs a whole number in %ld..%ld, got '%s'\n", name,
                min, max, text);
        return false;
    }
    *out = v;
    return true;
}

/* Store one option's value. */
static bool apply_option(eval_options *o, const cli_option *spec, const char *value)
{
    long v = 0;
    switch (spec->id) {
    case OPT_MODEL: o->model = value; return true;
    case OPT_TEXT: o->text = value; return true;
    case OPT_CTX:
        o->n_ctx_given = true;
        return parse_int(spec->name, value, 4, INT32_MAX, &v) && (o->n_ctx = (int32_t)v, 1);
    case OPT_BATCH:
        return parse_int(spec->name, value, 1, INT32_MAX, &v) && (o->n_batch = (int32_t)v, 1);
    case OPT_THREADS:
        return parse_int(spec->name, value, 1, 4096, &v) && (o->n_threads = (int)v, 1);
    case OPT_CHUNKS:
        return parse_int(spec->name, value, 1, INT32_MAX, &v) && (o->n_chunks = (int32_t)v, 1);
    case OPT_NO_MMAP: o->use_mmap = false; return true;
    case OPT_MLOCK: o->use_mlock = true; return true;
    case OPT_JSON: o->json = true; return true;
    case OPT_KLD_BASE: o->kld_base = value; return true;
    case OPT_KLD: o->kld = true; return true;
    case OPT_KLD_FORMAT:
        if (strcmp(value, "llama") == 0 || strcmp(value, "compact") == 0) {
            o->kld_base_format = value[0] == 'c' ? INF_KLD_BASE_COMPACT : INF_KLD_BASE_LLAMA;
            return true;
        }
        fprintf(stderr, "gguf-eval: error: --kl-divergence-base-format must be llama or compact, "
                "got '%s'\n", value);
        return false;
    case OPT_KLD_EPSILON: {
        char *end;
        errno = 0;
        double e = strtod(value, &end);
        o->kld_compact_given = true;
        if (!errno && end != value && !*end && e >= 0 && e < 1) {
            o->kld_compact.epsilon = (float)e;
            return true;
        }
        fprintf(stderr, "gguf-eval: error: --kl-divergence-epsilon needs a number in [0, 1), got "
                "'%s'\n", value);
        return false;
    }
    case OPT_KLD_MAX_ENTRIES:
        o->kld_compact_given = true;
        return parse_int(spec->name, value, 1, INT32_MAX, &v) &&
               (o->kld_compact.max_entries = (int32_t)v, 1);
    case OPT_KLD_CONVERT: o->convert_in = value; return true;
    case OPT_PLOT: o->plot = value; return true;
    case OPT_KV_TYPE:
        if (strcmp(value, "f16") == 0 || strcmp(value, "f32") == 0) {
            o->kv_type = value[1] == '1' ? GGTK_TENSOR_F16 : GGTK_TENSOR_F32;
            return true;
        }
        fprintf(stderr, "gguf-eval: error: --kv-type must be f16 or f32, got '%s'\n", value);
        return false;
    case OPT_DEVICE:
        /* llama.cpp's names too: "none" (no device: the CPU), "CUDA0". */
        if (strcasecmp(value, "cpu") == 0 || strcasecmp(value, "none") == 0) {
            o->device = INF_DEVICE_CPU;
            return true;
        }
        if (strcasecmp(value, "cuda") == 0 || strcasecmp(value, "cuda0") == 0) {
            o->device = INF_DEVICE_CUDA;
            return true;
        }
        fprintf(stderr, "gguf-eval: error: --device must be cpu or cuda, got '%s'\n", value);
        return false;
    case OPT_GPU_LAYERS:
        return parse_int(spec->name, value, -1, INT32_MAX, &v) && (o->n_gpu_layers = (int32_t)v, 1);
    case OPT_IMATRIX_OUT: o->imatrix_out = value; return true;
    case OPT_IMATRIX_FORMAT:
        if (strcmp(value, "gguf") == 0 || strcmp(value, "dat") == 0) {
            o->imatrix_format = value[0] == 'd' ? INF_IMATRIX_LEGACY : INF_IMATRIX_GGUF;
            o->imatrix_format_given = true;
            return true;
        }
        fprintf(stderr, "gguf-eval: error: --imatrix-format must be gguf or dat, got '%s'\n",
                value);
        return false;
    case OPT_OUT_FREQ:
        return parse_int(spec->name, value, 1, INT32_MAX, &v) &&
               (o->imatrix_out_freq = (int32_t)v, 1);
    case OPT_SAVE_FREQ:
        return parse_int(spec->name, value, 0, INT32_MAX, &v) &&
               (o->imatrix_save_freq = (int32_t)v, 1);
    case OPT_HELP: return true;
    }
    return false;
}

/* Combinations that cannot work. */
static bool check_options(const eval_options *o)
{
    const char *problem = NULL;
    const bool compact_out = o->kld_base_format == INF_KLD_BASE_COMPACT;
    if (o->convert_in) {
        if (o->model || o->text || o->kld_base || o->kld || o->plot || o->imatrix_out)
            problem = "--kl-divergence-base-convert takes no model, text or other file";
        else if (compact_out)
            problem = "--kl-divergence-base-convert always writes the compact format";
    } else if (!o->model)
        problem = "-m MODEL is required";
    else if (o->kld && !o->kld_base)
        problem = "--kl-divergence needs --kl-divergence-base FILE (the base to compare with)";
    else if (!o->kld && !o->text)
        problem = "-f TEXT is required (or --kl-divergence with a base file)";
    else if (!o->imatrix_out && o->imatrix_format_given)
        problem = "--imatrix-format needs --imatrix-out FILE";
    else if (compact_out && (o->kld || !o->kld_base))
        problem = "--kl-divergence-base-format chooses the format of a base file written "
                  "(--kl-divergence-base without --kl-divergence); reading tells it by the file";
    else if (o->kld_compact_given && !compact_out)
        problem = "--kl-divergence-epsilon and --kl-divergence-max-entries need "
                  "--kl-divergence-base-format compact (or --kl-divergence-base-convert)";
    if (problem)
        cli_usage_error(&cli, "%s", problem);
    return problem == NULL;
}

int eval_options_parse(eval_options *o, int argc, char **argv, bool *exit_now)
{
    *o = (eval_options){.n_ctx = 512, .n_batch = 512, .use_mmap = true,
                        .kv_type = GGTK_TENSOR_F16, .imatrix_out_freq = 10,
                        .device = INF_DEVICE_AUTO, .n_gpu_layers = -1,
                        .kld_compact = inf_kld_compact_params_default()};
    *exit_now = true;
    /* Not cli_parse: an operand is an unknown option here, and a missing value is named. */
    for (int i = 1; i < argc; i++) {
        cli_arg arg = cli_next_arg(&cli.options, argc, argv, &i);
        if (arg.kind == CLI_ARG_OPERAND || arg.kind == CLI_ARG_UNKNOWN)
            return cli_usage_error(&cli, "unknown option '%s'", arg.text);
        if (arg.option->id == OPT_HELP) {
            print_help();
            return 0;
        }
        if (arg.kind == CLI_ARG_MISSING_VALUE) {
            fprintf(stderr, "gguf-eval: error: %s needs %s\n", arg.text, arg.option->value_name);
            return EXIT_USAGE;
        }
        if (arg.option->id == OPT_KLD_CONVERT) {
            if (i + 1 >= argc) {
                fprintf(stderr, "gguf-eval: error: %s needs %s\n", arg.text,
                        arg.option->value_name);
                return EXIT_USAGE;
            }
            o->convert_out = argv[++i];
        }
        if (!apply_option(o, arg.option, arg.value))
            return EXIT_USAGE;
    }
    if (!check_options(o))
        return EXIT_USAGE;
    *exit_now = false;
    return 0;
}

ggtk_status eval_options_check_paths(const eval_options *o, ggtk_error *err)
{
    if (o->convert_in) {
        tool_path in = {"--kl-divergence-base-convert IN", o->convert_in};
        tool_path out = {"--kl-divergence-base-convert OUT", o->convert_out};
        return output_paths_check(&in, 1, &out, 1, err);
    }
    /* --kl-divergence-base is read with --kl-divergence, written without it. */
    tool_path base = {"--kl-divergence-base", o->kld_base};
    tool_path inputs[2] = {{"-m", o->model}}, outputs[3];
    size_t n_inputs = 1, n_outputs = 0;
    if (o->kld)
        inputs[n_inputs++] = base;
    else
        inputs[n_inputs++] = (tool_path){"-f", o->text};
    if (!o->kld && o->kld_base)
        outputs[n_outputs++] = base;
    if (o->plot)
        outputs[n_outputs++] = (tool_path){"--plot", o->plot};
    if (o->imatrix_out)
        outputs[n_outputs++] = (tool_path){"--imatrix-out", o->imatrix_out};
    return output_paths_check(inputs, n_inputs, outputs, n_outputs, err);
}
