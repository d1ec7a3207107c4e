/* args.c - gguf-edit's command line: IN OUT (or --in-place IN) and edits, in any order. One
 * table lists every option; the edits are kept in command-line order. */
#include "cli_options.h"
#include "edit_tool.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char usage_text[] =
    "usage: gguf-edit [options] IN OUT EDIT...       write a copy of IN with edits as OUT\n"
    "       gguf-edit --in-place [options] IN EDIT... rewrite IN (temporary file + rename)\n"
    "       gguf-edit --dry-run [options] IN EDIT...  print what would change, write nothing\n"
    "\n"
    "Edits the metadata of a GGUF file; tensor data is copied byte for byte. Edits apply in\n"
    "command-line order, and what would change is printed one key a line (+ added, - removed,\n"
    "~ changed). The output is written to a temporary file and renamed into place when complete,\n"
    "so IN (with --in-place) or OUT is never left half written.\n"
    "\n"
    "edits:\n"
    "  --set KEY=VALUE           give KEY a new VALUE of the type it has in the file\n"
    "  --set KEY:TYPE=VALUE      set or add KEY with TYPE: u8 i8 u16 i16 u32 i32 u64 i64 f32 f64\n"
    "                            bool str, or arr[TYPE] with VALUE a JSON list: [1, 2, 3] or\n"
    "                            [\"a\", \"b\"]; integers are range-checked, bool is true/false\n"
    "  --remove KEY              remove KEY, or every key matching a shell pattern (general.*);\n"
    "                            alias --remove-metadata\n"
    "  --name TEXT               general.name (alias --general-name)\n"
    "  --description TEXT        general.description (alias --general-description)\n"
    "  --pre-tokenizer TEXT      tokenizer.ggml.pre\n"
    "  --chat-template TEXT      tokenizer.chat_template\n"
    "  --chat-template-file FILE tokenizer.chat_template from a UTF-8 text file (a .jinja file)\n"
    "  --chat-template-config FILE  the chat_template of a tokenizer_config.json (a string, or a\n"
    "                            list of named templates); replaces every tokenizer.chat_template*\n"
    "  --special-token NAME=TOKEN    tokenizer.ggml.NAME_token_id: the id of the token TOKEN\n"
    "  --special-token-by-id NAME=ID tokenizer.ggml.NAME_token_id = ID (checked against the\n"
    "                            vocabulary); NAME: bos eos eot eom unk sep pad mask fim_pre\n"
    "                            fim_suf fim_mid fim_pad fim_rep fim_sep prefix suffix middle\n"
    "\n"
    "options:\n"
    "  -i, --in-place            rewrite IN; it keeps its permissions, and stays as it was if\n"
    "                            anything fails\n"
    "  -n, --dry-run             print the changes, write nothing\n"
    "  -q, --quiet               print nothing but errors\n"
    "  -h, --help                this help\n"
    "\n"
    "Refused, with one line naming the key: split.* keys (gguf-split writes them), a value that\n"
    "does not fit the key's type, a new key without a type, general.alignment other than a power\n"
    "of two (changing or removing it re-lays out the data section, which is noted).\n"
    "Exit status: 0 done, 1 a bad file or a failed write, 2 a bad command line or a refused edit.\n";

enum option_id { OPT_EDIT, OPT_IN_PLACE, OPT_DRY_RUN, OPT_QUIET, OPT_HELP };

/* A row of the table: the option, and for the edits what they do. */
typedef struct edit_option {
    cli_option option;
    edit_kind kind;  /* for OPT_EDIT */
    const char *key; /* the fixed key of EDIT_STRING / EDIT_STRING_FILE */
} edit_option;

static const edit_option option_table[] = {
    {{"--set", NULL, OPT_EDIT, "KEY=VALUE"}, EDIT_SET, NULL},
    {{"--remove", "--remove-metadata", OPT_EDIT, "KEY"}, EDIT_REMOVE, NULL},
    {{"--name", "--general-name", OPT_EDIT, "TEXT"}, EDIT_STRING, "general.name"},
    {{"--description", "--general-description", OPT_EDIT, "TEXT"}, EDIT_STRING,
     "general.description"},
    {{"--pre-tokenizer", NULL, OPT_EDIT, "TEXT"}, EDIT_STRING, "tokenizer.ggml.pre"},
    {{"--chat-template", NULL, OPT_EDIT, "TEXT"}, EDIT_STRING, "tokenizer.chat_template"},
    {{"--chat-template-file", NULL, OPT_EDIT, "FILE"}, EDIT_STRING_FILE,
     "tokenizer.chat_template"},
    {{"--chat-template-config", NULL, OPT_EDIT, "FILE"}, EDIT_TEMPLATE_CONFIG, NULL},
    {{"--special-token", NULL, OPT_EDIT, "NAME=TOKEN"}, EDIT_SPECIAL_TOKEN, NULL},
    {{"--special-token-by-id", NULL, OPT_EDIT, "NAME=ID"}, EDIT_SPECIAL_TOKEN_ID, NULL},
    {{"--in-place", "-i", OPT_IN_PLACE, NULL}, EDIT_SET, NULL},
    {{"--dry-run", "-n", OPT_DRY_RUN, NULL}, EDIT_SET, NULL},
    {{"--quiet", "-q", OPT_QUIET, NULL}, EDIT_SET, NULL},
    {{"--help", "-h", OPT_HELP, NULL}, EDIT_SET, NULL},
};

/* IN OUT at most; a third operand is taken so that the error names the form expected. */
static const cli_spec cli = {EDIT_ERROR_PREFIX, " (see gguf-edit --help)", EXIT_USAGE,
                             CLI_TABLE_OF(option_table, option), 3};

static int add_edit(edit_args *args, const edit_option *row, const char *option, const char *value)
{
    edit_request *grown = realloc(args->edits, (args->n_edits + 1) * sizeof *grown);
    if (!grown) {
        fprintf(stderr, EDIT_ERROR_PREFIX "out of memory\n");
        return EXIT_FAILED;
    }
    args->edits = grown;
    args->edits[args->n_edits++] = (edit_request){row->kind, option, value, row->key};
    return 0;
}

/* cli_parse's handler of one option. */
static int apply_option(void *context, const cli_arg *arg)
{
    edit_args *args = context;
    switch ((enum option_id)arg->option->id) {
    case OPT_IN_PLACE: args->in_place = true; return 0;
    case OPT_DRY_RUN: args->dry_run = true; return 0;
    case OPT_QUIET: args->quiet = true; return 0;
    case OPT_HELP: fputs(usage_text, stdout); return CLI_STOP;
    case OPT_EDIT: return add_edit(args, &option_table[arg->row], arg->text, arg->value);
    }
    return EXIT_USAGE;
}

/* IN OUT; IN alone with --in-place; IN [OUT] in a dry run. */
static int assign_positionals(edit_args *args, const char **positional, int n)
{
    if (args->in_place && n != 1)
        return cli_usage_error(&cli, "--in-place takes one file, IN");
    if (!args->in_place && (n > 2 || n < (args->dry_run ? 1 : 2)))
        return cli_usage_error(&cli, "%s", args->dry_run ? "expected IN [OUT]" : "expected IN OUT");
    args->input = positional[0];
    args->output = n == 2 ? positional[1] : NULL;
    if (args->n_edits == 0)
        return cli_usage_error(&cli, "no edits given (--set, --remove, --name, ...)");
    return 0;
}

int edit_args_parse(edit_args *args, int argc, char **argv, bool *exit_now)
{
    memset(args, 0, sizeof *args);
    const char *positional[3];
    int n_positional;
    int rc = cli_parse(&cli, argc, argv, apply_option, args, positional, &n_positional, exit_now);
    if (rc != 0 || *exit_now)
        return rc;
    if (n_positional == 0)
        return cli_usage_error(&cli, "expected IN OUT, or --in-place IN");
    return assign_positionals(args, positional, n_positional);
}

void edit_args_free(edit_args *args)
{
    free(args->edits);
    args->edits = NULL;
    args->n_edits = 0;
}
