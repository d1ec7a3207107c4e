/* args.c - gguf-edit's command line: IN OUT (or --in-place IN) and edits, in any order. One
 * table lists every option; the edits are kept in command-line order. */
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

static const struct {
    const char *name;
    const char *alias;
    enum option_id id;
    edit_kind kind;  /* for OPT_EDIT */
    const char *key; /* the fixed key of EDIT_STRING / EDIT_STRING_FILE */
} option_table[] = {
    {"--set", NULL, OPT_EDIT, EDIT_SET, NULL},
    {"--remove", "--remove-metadata", OPT_EDIT, EDIT_REMOVE, NULL},
    {"--name", "--general-name", OPT_EDIT, EDIT_STRING, "general.name"},
    {"--description", "--general-description", OPT_EDIT, EDIT_STRING, "general.description"},
    {"--pre-tokenizer", NULL, OPT_EDIT, EDIT_STRING, "tokenizer.ggml.pre"},
    {"--chat-template", NULL, OPT_EDIT, EDIT_STRING, "tokenizer.chat_template"},
    {"--chat-template-file", NULL, OPT_EDIT, EDIT_STRING_FILE, "tokenizer.chat_template"},
    {"--chat-template-config", NULL, OPT_EDIT, EDIT_TEMPLATE_CONFIG, NULL},
    {"--special-token", NULL, OPT_EDIT, EDIT_SPECIAL_TOKEN, NULL},
    {"--special-token-by-id", NULL, OPT_EDIT, EDIT_SPECIAL_TOKEN_ID, NULL},
    {"--in-place", "-i", OPT_IN_PLACE, EDIT_SET, NULL},
    {"--dry-run", "-n", OPT_DRY_RUN, EDIT_SET, NULL},
    {"--quiet", "-q", OPT_QUIET, EDIT_SET, NULL},
    {"--help", "-h", OPT_HELP, EDIT_SET, NULL},
};
#define N_OPTIONS (sizeof option_table / sizeof option_table[0])

static int usage_error(const char *fmt, const char *detail)
{
    fprintf(stderr, EDIT_ERROR_PREFIX);
    fprintf(stderr, fmt, detail);
    fprintf(stderr, " (see gguf-edit --help)\n");
    return EXIT_USAGE;
}

static int add_edit(edit_args *args, size_t row, const char *option, const char *value)
{
    edit_request *grown = realloc(args->edits, (args->n_edits + 1) * sizeof *grown);
    if (!grown) {
        fprintf(stderr, EDIT_ERROR_PREFIX "out of memory\n");
        return EXIT_FAILED;
    }
    args->edits = grown;
    args->edits[args->n_edits++] =
        (edit_request){option_table[row].kind, option, value, option_table[row].key};
    return 0;
}

/* Handle argv[*i] when it is an option; -1 when it is not one. */
static int parse_option(edit_args *args, int argc, char **argv, int *i, bool *exit_now)
{
    const char *arg = argv[*i];
    for (size_t k = 0; k < N_OPTIONS; k++) {
        if (strcmp(arg, option_table[k].name) != 0 &&
            !(option_table[k].alias && strcmp(arg, option_table[k].alias) == 0))
            continue;
        switch (option_table[k].id) {
        case OPT_IN_PLACE: args->in_place = true; return 0;
        case OPT_DRY_RUN: args->dry_run = true; return 0;
        case OPT_QUIET: args->quiet = true; return 0;
        case OPT_HELP:
            fputs(usage_text, stdout);
            *exit_now = true;
            return 0;
        case OPT_EDIT:
            if (*i + 1 >= argc)
                return usage_error("%s wants a value", arg);
            *i += 1;
            return add_edit(args, k, arg, argv[*i]);
        }
    }
    if (arg[0] == '-' && arg[1] != '\0')
        return usage_error("unknown option '%s'", arg);
    return -1;
}

/* IN OUT; IN alone with --in-place; IN [OUT] in a dry run. */
static int assign_positionals(edit_args *args, char **positional, int n)
{
    if (args->in_place && n != 1)
        return usage_error("%s", "--in-place takes one file, IN");
    if (!args->in_place && (n > 2 || n < (args->dry_run ? 1 : 2)))
        return usage_error("%s", args->dry_run ? "expected IN [OUT]" : "expected IN OUT");
    args->input = positional[0];
    args->output = n == 2 ? positional[1] : NULL;
    if (args->n_edits == 0)
        return usage_error("%s", "no edits given (--set, --remove, --name, ...)");
    return 0;
}

int edit_args_parse(edit_args *args, int argc, char **argv, bool *exit_now)
{
    memset(args, 0, sizeof *args);
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
    if (n_positional == 0)
        return usage_error("%s", "expected IN OUT, or --in-place IN");
    return assign_positionals(args, positional, n_positional);
}

void edit_args_free(edit_args *args)
{
    free(args->edits);
    args->edits = NULL;
    args->n_edits = 0;
}
