/* cli_options.c - finding arguments in a tool's option table, the parse loop over argv and the
 * one-line usage error (see cli_options.h). */
#include "cli_options.h"

#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

/* Rows may be larger structs that start with a cli_option, so step by the table's row size. */
static const cli_option *table_row(const cli_table *table, size_t k)
{
    return (const cli_option *)((const char *)table->first + k * table->row_size);
}

static bool find_row(const cli_table *table, const char *text, size_t *row)
{
    for (size_t k = 0; k < table->n_rows; k++) {
        const cli_option *option = table_row(table, k);
        if (strcmp(text, option->name) == 0 ||
            (option->alias && strcmp(text, option->alias) == 0)) {
            *row = k;
            return true;
        }
    }
    return false;
}

cli_arg cli_next_arg(const cli_table *table, int argc, char **argv, int *i)
{
    cli_arg arg = {CLI_ARG_OPERAND, argv[*i], 0, NULL, NULL};
    if (!find_row(table, arg.text, &arg.row)) {
        if (arg.text[0] == '-' && arg.text[1] != '\0')
            arg.kind = CLI_ARG_UNKNOWN;
        return arg;
    }
    arg.option = table_row(table, arg.row);
    arg.kind = CLI_ARG_OPTION;
    if (arg.option->value_name) {
        if (*i + 1 >= argc)
            arg.kind = CLI_ARG_MISSING_VALUE;
        else
            arg.value = argv[++*i];
    }
    return arg;
}

int cli_parse(const cli_spec *spec, int argc, char **argv, cli_apply_fn *apply, void *context,
              const char **operands, int *n_operands, bool *stopped)
{
    *n_operands = 0;
    *stopped = false;
    for (int i = 1; i < argc; i++) {
        cli_arg arg = cli_next_arg(&spec->options, argc, argv, &i);
        switch (arg.kind) {
        case CLI_ARG_UNKNOWN: return cli_usage_error(spec, "unknown option '%s'", arg.text);
        case CLI_ARG_MISSING_VALUE: return cli_usage_error(spec, "%s wants a value", arg.text);
        case CLI_ARG_OPERAND:
            if (*n_operands == spec->max_operands)
                return cli_usage_error(spec, "unexpected argument '%s'", arg.text);
            operands[(*n_operands)++] = arg.text;
            break;
        case CLI_ARG_OPTION: {
            int rc = apply(context, &arg);
            *stopped = rc == CLI_STOP;
            if (rc != 0)
                return *stopped ? 0 : rc;
            break;
        }
        }
    }
    return 0;
}

int cli_usage_error(const cli_spec *spec, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fputs(spec->error_prefix, stderr);
    vfprintf(stderr, fmt, ap);
    fprintf(stderr, "%s\n", spec->help_hint);
    va_end(ap);
    return spec->usage_status;
}
