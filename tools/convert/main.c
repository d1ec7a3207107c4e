/* main.c - gguf-convert: a Hugging Face model folder to GGUF, or (--to-hf) a GGUF model back to a
 * Hugging Face folder, through libinfer's converters (inf_convert.h; docs/convert.md). */
#include "cli_options.h"
#include "openmp_waits.h"
#include "signals.h"
#include "tool_stdout.h"

#include <ggtk/gguf_util.h>
#include <ggtk/inf_convert.h>
#include <ggtk/inf_quantize_file.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

enum { EXIT_FAILED = 1, EXIT_USAGE = 2 };

static const char usage[] =
    "usage: gguf-convert [options] HF_DIR OUT.gguf\n"
    "       gguf-convert --to-hf [options] MODEL.gguf OUT_DIR\n"
    "\n"
    "HF_DIR -> GGUF (LlamaForCausalLM, MistralForCausalLM, Qwen2ForCausalLM, Qwen3ForCausalLM,\n"
    "Gemma2ForCausalLM, Gemma3ForCausalLM, Phi3ForCausalLM):\n"
    "  --outtype TYPE     f32, f16 (default), bf16, q8_0 as convert_hf_to_gguf.py writes them, or\n"
    "                     any file type gguf-quantize writes (q4_k_m, q6_k, ...), in one pass\n"
    "  --metadata FILE    JSON of general.* keys (as --to-hf writes to gguf_metadata.json)\n"
    "  --threads N        threads for quantizing (default: all)\n"
    "GGUF -> HF folder (--to-hf):\n"
    "  --outtype TYPE     f32 (default), f16 or bf16 safetensors\n"
    "  --shard-size N     shard above N bytes (suffix K, M, G: powers of 1000)\n"
    "  -h, --help         this text\n";

typedef struct convert_args {
    bool to_hf;
    const char *input;
    const char *output;
    const char *outtype;
    const char *metadata;
    uint64_t shard_bytes;
    int threads;
} convert_args;

enum option_id { OPT_TO_HF, OPT_OUTTYPE, OPT_METADATA, OPT_SHARD_SIZE, OPT_THREADS, OPT_HELP };

static const cli_option option_table[] = {
    {"--to-hf", NULL, OPT_TO_HF, NULL},
    {"--outtype", NULL, OPT_OUTTYPE, "TYPE"},
    {"--metadata", NULL, OPT_METADATA, "FILE"},
    {"--shard-size", NULL, OPT_SHARD_SIZE, "N"},
    {"--threads", NULL, OPT_THREADS, "N"},
    {"--help", "-h", OPT_HELP, NULL},
};

/* IN OUT: two operands. */
static const cli_spec cli = {"gguf-convert: error: ", " (see gguf-convert --help)", EXIT_USAGE,
                             CLI_TABLE(option_table), 2};

/* A size with an optional K/M/G suffix (llama.cpp's split_str_to_n_bytes). */
static bool parse_size(const char *text, uint64_t *out)
{
    char *end = NULL;
    errno = 0;
    unsigned long long n = strtoull(text, &end, 10);
    uint64_t scale = 1;
    if (end && *end && !end[1])
        scale = *end == 'K' ? 1000 : *end == 'M' ? 1000000 : *end == 'G' ? 1000000000 : 0;
    else if (end && *end)
        scale = 0;
    if (errno || end == text || text[0] == '-' || scale == 0 ||
        __builtin_mul_overflow((uint64_t)n, scale, out))
        return false;
    return true;
}

static int parse_threads(const char *text, int *threads)
{
    char *end = NULL;
    errno = 0;
    long n = strtol(text, &end, 10);
    if (errno || !*text || *end || n < 1 || n > 1024)
        return cli_usage_error(&cli, "--threads '%s': not 1 to 1024", text);
    *threads = (int)n;
    return 0;
}

static int apply_option(void *context, const cli_arg *arg)
{
    convert_args *a = context;
    switch ((enum option_id)arg->option->id) {
    case OPT_TO_HF:
        a->to_hf = true;
        return 0;
    case OPT_OUTTYPE:
        a->outtype = arg->value;
        return 0;
    case OPT_METADATA:
        a->metadata = arg->value;
        return 0;
    case OPT_SHARD_SIZE:
        if (!parse_size(arg->value, &a->shard_bytes) || a->shard_bytes == 0)
            return cli_usage_error(&cli, "--shard-size '%s': not a positive size", arg->value);
        return 0;
    case OPT_THREADS:
        return parse_threads(arg->value, &a->threads);
    case OPT_HELP:
        fputs(usage, stdout);
        return CLI_STOP;
    }
    return EXIT_USAGE;
}

/* 0 to convert; CLI_STOP after --help; else the exit status after printing one line. */
static int parse_args(convert_args *a, int argc, char **argv)
{
    memset(a, 0, sizeof *a);
    const char *operands[2];
    int n_operands = 0;
    bool stopped = false;
    int rc = cli_parse(&cli, argc, argv, apply_option, a, operands, &n_operands, &stopped);
    if (rc != 0 || stopped)
        return stopped ? CLI_STOP : rc;
    if (n_operands != 2)
        return cli_usage_error(&cli, "expected an input and an output");
    a->input = operands[0];
    a->output = operands[1];
    if (a->to_hf && a->metadata)
        return cli_usage_error(&cli, "--metadata applies to HF -> GGUF only");
    if (!a->to_hf && a->shard_bytes)
        return cli_usage_error(&cli, "--shard-size applies to --to-hf only");
    return 0;
}

static void hold_signals(void *user)
{
    (void)user;
    tool_signals_hold();
}

/* Every temporary file is tracked for the signal handler (until the process ends: a file renamed
 * into place is no longer at its temporary path, so unlinking that path is harmless). */
static void track_temp(const char *path, void *user)
{
    (void)user;
    if (path)
        tool_signals_track(path);
    tool_signals_release();
}

static int fail(const ggtk_error *err)
{
    fprintf(stderr, "gguf-convert: error: %s\n", err->message);
    return err->status == GGTK_ERR_USAGE ? EXIT_USAGE : EXIT_FAILED;
}

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

static int to_gguf(const convert_args *a)
{
    inf_convert_options o = inf_convert_options_default();
    if (a->outtype) {
        int ft = inf_quantize_file_type_from_name(a->outtype);
        if (ft < 0) {
            fprintf(stderr, "gguf-convert: error: --outtype '%s': not a file type (f32, f16, "
                            "bf16, q8_0, q4_k_m, ...)\n", a->outtype);
            return EXIT_USAGE;
        }
        o.file_type = (uint32_t)ft;
    }
    o.metadata_path = a->metadata;
    o.n_threads = a->threads;
    o.before_temp_file = hold_signals;
    o.on_temp_file = track_temp;
    ggtk_error err;
    double start = now();
    if (inf_convert_hf_to_gguf(a->input, a->output, &o, &err) != GGTK_OK)
        return fail(&err);
    printf("wrote %s (%s) in %.2f s\n", a->output, inf_quantize_file_type_name(o.file_type),
           now() - start);
    return 0;
}

static int to_hf(const convert_args *a)
{
    inf_convert_hf_options o = inf_convert_hf_options_default();
    if (a->outtype) {
        int type = ggtk_tensor_type_from_name(a->outtype);
        if (type != GGTK_TENSOR_F32 && type != GGTK_TENSOR_F16 && type != GGTK_TENSOR_BF16) {
            fprintf(stderr, "gguf-convert: error: --outtype '%s': --to-hf writes f32, f16 or bf16\n",
                    a->outtype);
            return EXIT_USAGE;
        }
        o.dtype = (ggtk_tensor_type)type;
    }
    o.shard_bytes = a->shard_bytes;
    o.n_threads = a->threads;
    o.before_temp_file = hold_signals;
    o.on_temp_file = track_temp;
    ggtk_error err;
    double start = now();
    if (inf_convert_gguf_to_hf(a->input, a->output, &o, &err) != GGTK_OK)
        return fail(&err);
    printf("wrote %s/ (%s safetensors) in %.2f s\n", a->output, ggtk_tensor_type_name(o.dtype),
           now() - start);
    return 0;
}

int main(int argc, char **argv)
{
    openmp_waits_make_passive(argv);
    tool_signals_install();
    convert_args args;
    int rc = parse_args(&args, argc, argv);
    if (rc == 0)
        rc = args.to_hf ? to_hf(&args) : to_gguf(&args);
    else if (rc == CLI_STOP)
        rc = 0;
    return tool_stdout_close("gguf-convert: error: ") ? rc : EXIT_FAILED;
}
