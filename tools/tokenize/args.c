/* args.c - gguf-tokenize's command line, llama-tokenize's options by the same names. */
#include "tokenize_tool.h"

#include <stdio.h>

#include "cli_options.h"

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

enum option_id {
    OPT_MODEL, OPT_PROMPT, OPT_FILE, OPT_STDIN, OPT_IDS, OPT_NO_BOS, OPT_PARSE_SPECIAL,
    OPT_NO_PARSE_SPECIAL, OPT_NO_ESCAPE, OPT_ESCAPE, OPT_SHOW_COUNT, OPT_HELP
};

static const cli_option option_table[] = {
    {"--model", "-m", OPT_MODEL, "MODEL"},
    {"--prompt", "-p", OPT_PROMPT, "TEXT"},
    {"--file", "-f", OPT_FILE, "FILE"},
    {"--stdin", NULL, OPT_STDIN, NULL},
    {"--ids", NULL, OPT_IDS, NULL},
    {"--no-bos", NULL, OPT_NO_BOS, NULL},
    {"--parse-special", NULL, OPT_PARSE_SPECIAL, NULL},
    {"--no-parse-special", NULL, OPT_NO_PARSE_SPECIAL, NULL},
    {"--no-escape", NULL, OPT_NO_ESCAPE, NULL},
    {"--escape", NULL, OPT_ESCAPE, NULL},
    {"--show-count", NULL, OPT_SHOW_COUNT, NULL},
    {"--help", "-h", OPT_HELP, NULL},
};

/* No operands: the text comes with -p, -f or --stdin, as in llama-tokenize. */
static const cli_spec cli = {"gguf-tokenize: error: ", " (see --help)", EXIT_USAGE,
                             CLI_TABLE(option_table), 0};

static int apply_option(void *context, const cli_arg *arg)
{
    tokenize_args *args = context;
    switch ((enum option_id)arg->option->id) {
    case OPT_MODEL: args->model = arg->value; return 0;
    case OPT_PROMPT: args->prompt = arg->value; return 0;
    case OPT_FILE: args->file = arg->value; return 0;
    case OPT_STDIN: args->from_stdin = true; return 0;
    case OPT_IDS: args->ids_only = true; return 0;
    case OPT_NO_BOS: args->no_bos = true; return 0;
    case OPT_PARSE_SPECIAL: args->parse_special = true; return 0;
    case OPT_NO_PARSE_SPECIAL: args->parse_special = false; return 0;
    case OPT_NO_ESCAPE: args->escape = false; return 0;
    case OPT_ESCAPE: args->escape = true; return 0;
    case OPT_SHOW_COUNT: args->show_count = true; return 0;
    case OPT_HELP: fputs(usage, stdout); return CLI_STOP;
    }
    return EXIT_USAGE;
}

int tokenize_args_parse(tokenize_args *args, int argc, char **argv, bool *exit_now)
{
    *args = (tokenize_args){.escape = true, .parse_special = true};
    int n_operands = 0;
    int rc = cli_parse(&cli, argc, argv, apply_option, args, NULL, &n_operands, exit_now);
    if (rc != 0 || *exit_now)
        return rc;
    if (!args->model)
        return cli_usage_error(&cli, "no model given (-m MODEL)");
    if (!args->from_stdin && !args->file && !args->prompt)
        return cli_usage_error(&cli, "no text given: one of -p TEXT, -f FILE or --stdin");
    return 0;
}
