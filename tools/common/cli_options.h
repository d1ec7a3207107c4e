/* cli_options.h - the command line of every tool: one table of options (name, alias, whether it
 * takes a value), options and operands in any order, and usage errors as one line on stderr.
 * Shared by the tools (tools/common is linked into each tool, not installed).
 *
 * A tool writes its table and a cli_spec, and hands each option to its own function:
 *
 *     enum option_id { OPT_THREADS, OPT_QUIET, OPT_HELP };
 *     static const cli_option option_table[] = {
 *         {"--threads", "-t", OPT_THREADS, "N"},
 *         {"--quiet", "-q", OPT_QUIET, NULL},
 *         {"--help", "-h", OPT_HELP, NULL},
 *     };
 *     static const cli_spec cli = {"gguf-x: ", " (see gguf-x --help)", EXIT_USAGE,
 *                                  CLI_TABLE(option_table), 2};
 *
 *     static int apply_option(void *context, const cli_arg *arg)
 *     {
 *         x_args *args = context;
 *         switch (arg->option->id) {
 *         case OPT_THREADS: return parse_threads(arg->value, &args->threads);
 *         case OPT_QUIET: args->quiet = true; return 0;
 *         case OPT_HELP: fputs(usage_text, stdout); return CLI_STOP;
 *         }
 *         return EXIT_USAGE;
 *     }
 *
 *     const char *operands[2];
 *     int n_operands;
 *     bool stopped;
 *     int rc = cli_parse(&cli, argc, argv, apply_option, args, operands, &n_operands, &stopped);
 *     if (rc != 0 || stopped)
 *         return rc;      (an error was printed, or --help was: exit with rc either way)
 *     if (n_operands != 2)
 *         return cli_usage_error(&cli, "expected IN OUT");
 *
 * The errors cli_parse prints, each "<error_prefix><message><help_hint>\n", exit usage_status:
 *     unknown option '--bogus'      an argument starting with '-' that no row names (also "--":
 *                                   no tool has an end-of-options marker)
 *     --threads wants a value       a row with a value_name is the last argument (the option is
 *                                   named as typed: "-t wants a value" for the alias)
 *     unexpected argument 'X'       more operands than max_operands
 * The tool's own errors (a bad value, options that do not go together) use cli_usage_error() so
 * that they read the same. A tool whose messages differ (gguf-eval) calls cli_next_arg() in its
 * own loop instead. Nothing is allocated: every pointer handed out points into argv or the
 * table. */
#ifndef TOOLS_CLI_OPTIONS_H
#define TOOLS_CLI_OPTIONS_H

#include <stdbool.h>
#include <stddef.h>

/* One option. A row matches an argument equal to its name or its alias, nothing else (no
 * "--name=value", no bundled "-qt4"); rows are tried in order and the first match wins. */
typedef struct cli_option {
    const char *name;       /* "--threads" */
    const char *alias;      /* a second spelling ("-t", "--output-tensor-type"), or NULL */
    int id;                 /* the tool's own number for the option, usually an enum */
    const char *value_name; /* NULL: a flag; else the option takes the next argument as its value
                             * (even one starting with '-'), and this names it in help ("N") */
} cli_option;

/* The rows of a tool's table. Rows may be the tool's own struct with a cli_option as its first
 * member (to carry more per option: a help line, an edit kind), hence the row size. */
typedef struct cli_table {
    const cli_option *first; /* the first row's cli_option */
    size_t n_rows;
    size_t row_size;         /* bytes from one row to the next */
} cli_table;

/* A cli_table initializer for an array of cli_option, and for an array of structs whose member
 * `member` (the first) is the row's cli_option. Both are constant expressions for static arrays. */
#define CLI_TABLE(rows) {&(rows)[0], sizeof(rows) / sizeof((rows)[0]), sizeof((rows)[0])}
#define CLI_TABLE_OF(rows, member) \
    {&(rows)[0].member, sizeof(rows) / sizeof((rows)[0]), sizeof((rows)[0])}

/* A tool's command line: how its usage errors read, its options, how many operands it takes. */
typedef struct cli_spec {
    const char *error_prefix; /* starts every usage error: "gguf-quantize: " */
    const char *help_hint;    /* ends it, before the newline: " (see gguf-quantize --help)" */
    int usage_status;         /* what cli_usage_error and cli_parse return for a usage error */
    cli_table options;
    int max_operands;         /* arguments that are not options, at most (the size of the
                               * operands array given to cli_parse) */
} cli_spec;

/* What one argument is. */
typedef enum cli_arg_kind {
    CLI_ARG_OPTION,        /* a row of the table, with its value when it takes one */
    CLI_ARG_OPERAND,       /* not an option: does not start with '-', or is "-" alone (by
                            * convention standard input or output, for the tool to interpret) */
    CLI_ARG_UNKNOWN,       /* starts with '-', is longer than "-", and no row names it */
    CLI_ARG_MISSING_VALUE, /* a row that takes a value, but it is the last argument */
} cli_arg_kind;

typedef struct cli_arg {
    cli_arg_kind kind;
    const char *text;          /* the argument as given: the option as typed (name or alias), or
                                * the operand */
    size_t row;                /* OPTION, MISSING_VALUE: the row's index in the table */
    const cli_option *option;  /* OPTION, MISSING_VALUE: the row; else NULL */
    const char *value;         /* OPTION: the value argument, or NULL for a flag */
} cli_arg;

/* Classify argv[*i] against `table`. When it is an option that takes a value and one follows,
 * *i is advanced to that value (so the caller's loop goes on after it); otherwise *i is left
 * alone. Never prints. `argv[*i]` must exist (1 <= *i < argc). */
cli_arg cli_next_arg(const cli_table *table, int argc, char **argv, int *i);

/* A tool's handler of one option (kind CLI_ARG_OPTION), with the context given to cli_parse.
 * Returns 0 to go on, CLI_STOP to stop parsing without an error (after printing --help), or a
 * positive exit status after printing its own error (cli_usage_error, usually). */
typedef int cli_apply_fn(void *context, const cli_arg *arg);

/* Returned by a cli_apply_fn: stop parsing here, nothing is wrong. */
#define CLI_STOP (-1)

/* Parse argv[1..argc-1] left to right: options go to apply(context, arg) in command-line order,
 * operands are stored in operands[0..*n_operands-1] (pointers into argv; at most
 * spec->max_operands). Returns 0 when every argument was taken or when apply returned CLI_STOP
 * (then *stopped is set and later arguments are not looked at, not even for errors), apply's
 * positive status, or spec->usage_status after printing one of the errors listed at the top of
 * this file. The first problem ends the parse; *stopped is false unless CLI_STOP ended it. */
int cli_parse(const cli_spec *spec, int argc, char **argv, cli_apply_fn *apply, void *context,
              const char **operands, int *n_operands, bool *stopped);

/* Print spec->error_prefix, the message (printf format), spec->help_hint and a newline on stderr,
 * as one line; returns spec->usage_status, so that `return cli_usage_error(...)` ends a parse. */
int cli_usage_error(const cli_spec *spec, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

#endif
