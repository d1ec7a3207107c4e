/* main.c - gguf-inspect's command line: parse the options, pick the mode, run its command. */
#include "inspect.h"
#include "tool_stdout.h"

#include <fnmatch.h>
#include <getopt.h>
#include <stdarg.h>
#include <string.h>

static const char usage_text[] =
    "usage: gguf-inspect [options] FILE\n"
    "       gguf-inspect [options] FILE_A FILE_B      (same as --diff)\n"
    "\n"
    "Without options, prints the header, every metadata key with its type and value, the tensor\n"
    "table, a summary per tensor type and a model summary (parameters, bits per weight, file\n"
    "type as llama.cpp names it).\n"
    "\n"
    "  --json            print the same as one JSON document (with --hash: plus data hashes);\n"
    "                    a NaN or infinite float value is the string \"nan\", \"inf\" or \"-inf\"\n"
    "  --full            print long arrays and strings in full\n"
    "  --tensors GLOB    only tensors whose name matches the shell pattern GLOB\n"
    "  --hash            print a manifest for --verify: 'key XXH64  KEY' for every metadata pair,\n"
    "                    'XXH64  NAME' for every tensor's data (seed 0) and an 'all' line, the\n"
    "                    XXH64 of the tensor hashes in order (names escaped; with --tensors only\n"
    "                    the matching tensors' lines)\n"
    "  --verify MANIFEST check FILE's metadata and tensor data against a manifest from --hash\n"
    "  --diff            show what differs between FILE_A and FILE_B (keys, tensors, data)\n"
    "  --check           validate FILE (well-known keys, and every tensor value finite, quantized\n"
    "                    tensors dequantized); the first problem goes to stderr\n"
    "  -h, --help        print this help\n"
    "\n"
    "Exit status: 0 success (identical, valid, matching), 1 a difference, mismatch or bad file,\n"
    "2 a bad command line.\n";

void inspect_error(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fputs("gguf-inspect: ", stderr);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
}

ggtk_file *inspect_open(const char *path, ggtk_open_mode mode)
{
    ggtk_error err;
    ggtk_file *file = ggtk_open(path, mode, &err);
    if (!file)
        inspect_error("%s", err.message);
    return file;
}

bool inspect_tensor_selected(const inspect_options *opt, const char *name)
{
    return !opt->tensor_glob || fnmatch(opt->tensor_glob, name, 0) == 0;
}

static int usage_error(const char *fmt, const char *arg)
{
    fputs("gguf-inspect: ", stderr);
    fprintf(stderr, fmt, arg);
    fputs("\n", stderr);
    fputs(usage_text, stderr);
    return EXIT_USAGE;
}

/* Record one mode option; a second, different one is a usage error. */
static bool set_mode(inspect_options *opt, inspect_mode mode, int *modes_given)
{
    if (*modes_given && opt->mode != mode)
        return false;
    opt->mode = mode;
    (*modes_given)++;
    return true;
}

enum { OPT_JSON = 256, OPT_FULL, OPT_TENSORS, OPT_HASH, OPT_VERIFY, OPT_DIFF, OPT_CHECK };

static const struct option long_options[] = {
    {"json", no_argument, NULL, OPT_JSON},          {"full", no_argument, NULL, OPT_FULL},
    {"tensors", required_argument, NULL, OPT_TENSORS}, {"hash", no_argument, NULL, OPT_HASH},
    {"verify", required_argument, NULL, OPT_VERIFY}, {"diff", no_argument, NULL, OPT_DIFF},
    {"check", no_argument, NULL, OPT_CHECK},        {"help", no_argument, NULL, 'h'},
    {NULL, 0, NULL, 0},
};

/* Returns -1 when the options are fine, else the exit status to leave with. */
static int parse_options(int argc, char **argv, inspect_options *opt)
{
    int modes_given = 0, c;
    bool ok = true;
    opterr = 0;
    while ((c = getopt_long(argc, argv, "h", long_options, NULL)) != -1) {
        switch (c) {
        case OPT_JSON: opt->json = true; break;
        case OPT_FULL: opt->full = true; break;
        case OPT_TENSORS: opt->tensor_glob = optarg; break;
        case OPT_HASH: opt->hash = true; ok = set_mode(opt, MODE_HASH, &modes_given); break;
        case OPT_VERIFY:
            opt->manifest = optarg;
            ok = set_mode(opt, MODE_VERIFY, &modes_given);
            break;
        case OPT_DIFF: ok = set_mode(opt, MODE_DIFF, &modes_given); break;
        case OPT_CHECK: ok = set_mode(opt, MODE_CHECK, &modes_given); break;
        case 'h': fputs(usage_text, stdout); return EXIT_OK;
        default: return usage_error("unknown or incomplete option '%s'", argv[optind - 1]);
        }
        if (!ok)
            return usage_error("%s cannot be combined with another mode", argv[optind - 1]);
    }
    opt->n_files = argc - optind;
    if (opt->n_files == 2 && modes_given == 0)
        opt->mode = MODE_DIFF;
    if (opt->mode == MODE_HASH && opt->json)
        opt->mode = MODE_REPORT; /* the JSON report carries the hashes */
    int wanted = opt->mode == MODE_DIFF ? 2 : 1;
    if (opt->n_files != wanted)
        return usage_error("%s", wanted == 2 ? "--diff needs two files" : "expected one file");
    if (opt->json && (opt->mode == MODE_VERIFY || opt->mode == MODE_CHECK))
        return usage_error("%s", "--json applies to the report, --hash and --diff only");
    opt->files[0] = argv[optind];
    opt->files[1] = wanted == 2 ? argv[optind + 1] : NULL;
    return -1;
}

int main(int argc, char **argv)
{
    inspect_options opt = {0};
    int status = parse_options(argc, argv, &opt);
    if (status >= 0)
        return tool_stdout_close("gguf-inspect: ") ? status : EXIT_FAIL;
    switch (opt.mode) {
    case MODE_REPORT: status = inspect_report(&opt); break;
    case MODE_HASH: status = inspect_hash(&opt); break;
    case MODE_VERIFY: status = inspect_verify(&opt); break;
    case MODE_DIFF: status = inspect_diff(&opt); break;
    case MODE_CHECK: status = inspect_check(&opt); break;
    }
    return tool_stdout_close("gguf-inspect: ") ? status : EXIT_FAIL;
}
