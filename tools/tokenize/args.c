/* args.c - gguf-tokenize's command line, llama-tokenize's options by the same names. */
#include "tokenize_tool.h"

#include <stdio.h>
#include <string.h>

static const char usage[] =
    "usage: gguf-tokenize -m MODEL (-p TEXT | -f FILE | --stdin) [options]\n"
    "\n"
    "Tokenize text with the vocabulary of a GGUF model (only the tokenizer metadata is read, so a\n"
    "vocabulary-only file works) and print one line per token, \"    id -> 'piece'\", as\n"
    "llama-tokenize does.\n"
    "\n"
    "  -m, --model MODEL    the GGUF file\n"
    "  -p, --prompt TEXT    the text\n"
    "  -f, --file FILE      read the text from FILE (byte for byte)\n"
    "  --stdin              read the text from standard input (wins over -p and -f)\n"
    "  --ids                print only the ids, as one list: [1, 2, 3]\n"
    "  --no-bos             add no BOS/EOS even where the vocabulary asks for them\n"
    "  --parse-special      text of control tokens (<|im_start|>, <start_of_turn>) becomes those\n"
    "                       tokens (the default, as in llama-tokenize)\n"
    "  --no-parse-special   tokenize such text as ordinary characters\n"
    "  --no-escape          take \\n, \\t, \\xHH... literally (by default they are processed)\n"
    "  --show-count         end with \"Total number of tokens: N\"\n"
    "  -h, --help           this help\n";

static int usage_error(const char *what, const char *arg)
{
    fprintf(stderr, "gguf-tokenize: error: %s%s%s (see --help)\n", what, arg ? " " : "", arg ? arg : "");
    return EXIT_USAGE;
}

/* The value of option argv[*i], advancing *i; NULL when it is missing. */
static const char *option_value(int argc, char **argv, int *i)
{
    return *i + 1 < argc ? argv[++*i] : NULL;
}

int tokenize_args_parse(tokenize_args *args, int argc, char **argv, bool *exit_now)
{
    *args = (tokenize_args){.escape = true, .parse_special = true};
    *exit_now = false;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        const char **value = NULL;
        if (!strcmp(a, "-m") || !strcmp(a, "--model")) {
            value = &args->model;
        } else if (!strcmp(a, "-p") || !strcmp(a, "--prompt")) {
            value = &args->prompt;
        } else if (!strcmp(a, "-f") || !strcmp(a, "--file")) {
            value = &args->file;
        } else if (!strcmp(a, "--stdin")) {
            args->from_stdin = true;
        } else if (!strcmp(a, "--ids")) {
            args->ids_only = true;
        } else if (!strcmp(a, "--no-bos")) {
            args->no_bos = true;
        } else if (!strcmp(a, "--parse-special")) {
            args->parse_special = true;
        } else if (!strcmp(a, "--no-parse-special")) {
            args->parse_special = false;
        } else if (!strcmp(a, "--no-escape")) {
            args->escape = false;
        } else if (!strcmp(a, "--escape")) {
            args->escape = true;
        } else if (!strcmp(a, "--show-count")) {
            args->show_count = true;
        } else if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
            fputs(usage, stdout);
            *exit_now = true;
            return 0;
        } else {
            return usage_error("unknown option", a);
        }
        if (value && !(*value = option_value(argc, argv, &i))) {
            return usage_error("missing value after", a);
        }
    }
    if (!args->model) {
        return usage_error("no model given (-m MODEL)", NULL);
    }
    if (!args->from_stdin && !args->file && !args->prompt) {
        return usage_error("no text given: one of -p TEXT, -f FILE or --stdin", NULL);
    }
    return 0;
}
