/* main.c - gguf-convert: a Hugging Face model folder to GGUF, or (--to-hf) a GGUF model back to a
 * Hugging Face folder, through libinfer's converters (inf_convert.h; docs/convert.md). */
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
#include <unistd.h>

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

static int parse_args(convert_args *a, int argc, char **argv, bool *exit_now)
{
    memset(a, 0, sizeof *a);
    int positional = 0;
    for (int i = 1; i < argc; i++) {
        const char *arg = argv[i];
        bool has_value = i + 1 < argc;
        if (strcmp(arg, "-h") == 0 || strcmp(arg, "--help") == 0) {
            fputs(usage, stdout);
            *exit_now = true;
            return 0;
        } else if (strcmp(arg, "--to-hf") == 0) {
            a->to_hf = true;
        } else if (strcmp(arg, "--outtype") == 0 && has_value) {
            a->outtype = argv[++i];
        } else if (strcmp(arg, "--metadata") == 0 && has_value) {
            a->metadata = argv[++i];
        } else if (strcmp(arg, "--shard-size") == 0 && has_value) {
            if (!parse_size(argv[++i], &a->shard_bytes) || a->shard_bytes == 0) {
                fprintf(stderr, "gguf-convert: error: --shard-size '%s': not a positive size\n", argv[i]);
                return EXIT_USAGE;
            }
        } else if (strcmp(arg, "--threads") == 0 && has_value) {
            char *end = NULL;
            long n = strtol(argv[++i], &end, 10);
            if (!*argv[i] || *end || n < 1 || n > 1024) {
                fprintf(stderr, "gguf-convert: error: --threads '%s': not 1 to 1024\n", argv[i]);
                return EXIT_USAGE;
            }
            a->threads = (int)n;
        } else if (arg[0] == '-' && arg[1]) {
            fprintf(stderr, "gguf-convert: error: unknown option or missing value: %s\n%s", arg, usage);
            return EXIT_USAGE;
        } else if (positional < 2) {
            *(positional++ == 0 ? &a->input : &a->output) = arg;
        } else {
            fprintf(stderr, "gguf-convert: error: unexpected argument '%s'\n", arg);
            return EXIT_USAGE;
        }
    }
    if (positional != 2) {
        fprintf(stderr, "gguf-convert: error: expected an input and an output\n%s", usage);
        return EXIT_USAGE;
    }
    if (a->to_hf && a->metadata) {
        fprintf(stderr, "gguf-convert: error: --metadata applies to HF -> GGUF only\n");
        return EXIT_USAGE;
    }
    if (!a->to_hf && a->shard_bytes) {
        fprintf(stderr, "gguf-convert: error: --shard-size applies to --to-hf only\n");
        return EXIT_USAGE;
    }
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

/* As gguf-quantize does (tools/quantize/main.c): libgomp reads OMP_WAIT_POLICY when it loads,
 * and its default spinning between our parallel regions (one per tensor) takes the CPU from the
 * thread writing the output on a busy machine; passive waits cost microseconds. Run again with
 * it set unless the user chose a policy. */
static void use_passive_openmp_waits(char **argv)
{
    if (getenv("OMP_WAIT_POLICY"))
        return;
    if (setenv("OMP_WAIT_POLICY", "passive", 1) == 0)
        execv("/proc/self/exe", argv);
}

int main(int argc, char **argv)
{
    use_passive_openmp_waits(argv);
    tool_signals_install();
    convert_args args;
    bool exit_now = false;
    int rc = parse_args(&args, argc, argv, &exit_now);
    if (rc == 0 && !exit_now)
        rc = args.to_hf ? to_hf(&args) : to_gguf(&args);
    return tool_stdout_close("gguf-convert: error: ") ? rc : EXIT_FAILED;
}
