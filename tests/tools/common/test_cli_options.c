/* test_cli_options.c - the tools' shared option table (cli_options.h) called directly: matching
 * by name and alias, values, operands, the usage errors cli_parse prints, and how a handler's
 * status ends the parse. The tools' own messages are checked end to end in tests/tools/. */
#include "cli_options.h"
#include "test.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

enum { OPT_THREADS, OPT_QUIET, OPT_HELP, OPT_FAIL };

static const cli_option options[] = {
    {"--threads", "-t", OPT_THREADS, "N"},
    {"--quiet", "-q", OPT_QUIET, NULL},
    {"--help", "-h", OPT_HELP, NULL},
    {"--fail", NULL, OPT_FAIL, NULL},
};

static const cli_spec spec = {"tool: ", " (see tool --help)", 7, CLI_TABLE(options), 2};

/* A row of a tool's own struct, as gguf-edit and gguf-eval embed cli_option. */
typedef struct wide_row {
    cli_option option;
    const char *help;
    int extra[5];
} wide_row;

static const wide_row wide_rows[] = {
    {{"--alpha", NULL, 10, NULL}, "first", {0}},
    {{"--beta", "-b", 20, "X"}, "second", {0}},
};

/* cli_next_arg on argv = {"tool", args...} at index 1; *next gets the index it leaves. */
static cli_arg next_of(const cli_table *table, int n, char **args, int *next)
{
    char *argv[8] = {"tool"};
    for (int k = 0; k < n; k++)
        argv[k + 1] = args[k];
    int i = 1;
    cli_arg arg = cli_next_arg(table, n + 1, argv, &i);
    *next = i;
    return arg;
}

TEST(test_cli_options_match_a_flag_by_name_and_by_alias)
{
    int next;
    cli_arg arg = next_of(&spec.options, 1, (char *[]){"--quiet"}, &next);
    CHECK(arg.kind == CLI_ARG_OPTION && arg.row == 1 && arg.option == &options[1]);
    CHECK(strcmp(arg.text, "--quiet") == 0 && arg.value == NULL && next == 1);
    arg = next_of(&spec.options, 1, (char *[]){"-q"}, &next);
    CHECK(arg.kind == CLI_ARG_OPTION && arg.option->id == OPT_QUIET && next == 1);
    CHECK_MSG(strcmp(arg.text, "-q") == 0, "the text is the option as typed: %s", arg.text);
    /* Only whole arguments match: no prefixes, no attached values. */
    CHECK(next_of(&spec.options, 1, (char *[]){"--qui"}, &next).kind == CLI_ARG_UNKNOWN);
    CHECK(next_of(&spec.options, 1, (char *[]){"--threads=4"}, &next).kind == CLI_ARG_UNKNOWN);
    CHECK(next_of(&spec.options, 1, (char *[]){"-qt"}, &next).kind == CLI_ARG_UNKNOWN);
}

TEST(test_cli_options_value_is_the_next_argument_even_with_a_dash)
{
    int next;
    cli_arg arg = next_of(&spec.options, 2, (char *[]){"-t", "-5"}, &next);
    CHECK(arg.kind == CLI_ARG_OPTION && arg.option->id == OPT_THREADS);
    CHECK(arg.value && strcmp(arg.value, "-5") == 0 && next == 2);
    arg = next_of(&spec.options, 3, (char *[]){"--threads", "--quiet", "x"}, &next);
    CHECK(arg.kind == CLI_ARG_OPTION && strcmp(arg.value, "--quiet") == 0 && next == 2);
}

TEST(test_cli_options_missing_value_keeps_the_index_and_names_the_row)
{
    int next;
    cli_arg arg = next_of(&spec.options, 1, (char *[]){"-t"}, &next);
    CHECK(arg.kind == CLI_ARG_MISSING_VALUE && arg.option == &options[0] && arg.row == 0);
    CHECK(arg.value == NULL && next == 1 && strcmp(arg.text, "-t") == 0);
}

TEST(test_cli_options_unknown_option_and_double_dash)
{
    int next;
    cli_arg arg = next_of(&spec.options, 1, (char *[]){"--bogus"}, &next);
    CHECK(arg.kind == CLI_ARG_UNKNOWN && arg.option == NULL && next == 1);
    /* No tool has an end-of-options marker, so "--" is an unknown option like any other. */
    CHECK(next_of(&spec.options, 1, (char *[]){"--"}, &next).kind == CLI_ARG_UNKNOWN);
    CHECK(next_of(&spec.options, 1, (char *[]){"-x"}, &next).kind == CLI_ARG_UNKNOWN);
}

TEST(test_cli_options_lone_dash_and_words_are_operands)
{
    int next;
    const char *operands[] = {"-", "in.gguf", "", "a-b"};
    for (size_t k = 0; k < 4; k++) {
        cli_arg arg = next_of(&spec.options, 1, (char *[]){(char *)operands[k]}, &next);
        CHECK_MSG(arg.kind == CLI_ARG_OPERAND && arg.option == NULL && next == 1, "'%s'",
                  operands[k]);
        CHECK(arg.text == operands[k]);
    }
}

TEST(test_cli_options_rows_of_a_larger_struct_are_stepped_by_their_size)
{
    const cli_table table = CLI_TABLE_OF(wide_rows, option);
    CHECK(table.n_rows == 2 && table.row_size == sizeof(wide_row));
    int next;
    cli_arg arg = next_of(&table, 2, (char *[]){"-b", "v"}, &next);
    CHECK(arg.kind == CLI_ARG_OPTION && arg.row == 1 && arg.option == &wide_rows[1].option);
    CHECK(arg.option->id == 20 && strcmp(arg.value, "v") == 0 && next == 2);
    CHECK(strcmp(wide_rows[arg.row].help, "second") == 0);
    CHECK(next_of(&table, 1, (char *[]){"--alpha"}, &next).option->id == 10);
}

/* Send stderr to a file until stderr_restore(), which reads what was written into text. */
static int stderr_capture(void)
{
    fflush(stderr);
    int saved = dup(STDERR_FILENO);
    int fd = open(test_tmpfile("cli_options_stderr.txt"), O_WRONLY | O_CREAT | O_TRUNC, 0600);
    dup2(fd, STDERR_FILENO);
    close(fd);
    return saved;
}

static void stderr_restore(int saved, char *text, size_t size)
{
    fflush(stderr);
    dup2(saved, STDERR_FILENO);
    close(saved);
    FILE *f = fopen(test_tmpfile("cli_options_stderr.txt"), "rb");
    size_t len = f ? fread(text, 1, size - 1, f) : 0;
    if (f)
        fclose(f);
    text[len] = '\0';
}

/* One cli_parse over {"tool", args...}: its status and outputs, what the handler saw (the
 * options in order, as "id=value" words) and what was printed on stderr. */
typedef struct parse_run {
    int status;
    const char *operands[2];
    int n_operands;
    bool stopped;
    char log[256];
    char err[256];
} parse_run;

static int record_option(void *context, const cli_arg *arg)
{
    parse_run *run = context;
    size_t used = strlen(run->log);
    snprintf(run->log + used, sizeof run->log - used, "%s%d=%s", used ? " " : "",
             arg->option->id, arg->value ? arg->value : "");
    if (arg->option->id == OPT_HELP)
        return CLI_STOP;
    return arg->option->id == OPT_FAIL ? 42 : 0;
}

static parse_run parse(int n, char **args)
{
    char *argv[16] = {"tool"};
    for (int k = 0; k < n; k++)
        argv[k + 1] = args[k];
    parse_run run = {.n_operands = -1};
    int saved = stderr_capture();
    run.status = cli_parse(&spec, n + 1, argv, record_option, &run, run.operands,
                           &run.n_operands, &run.stopped);
    stderr_restore(saved, run.err, sizeof run.err);
    return run;
}

TEST(test_cli_parse_sends_options_in_order_and_collects_operands)
{
    parse_run run = parse(5, (char *[]){"in", "-t", "3", "--quiet", "-"});
    CHECK_MSG(run.status == 0 && !run.stopped && run.err[0] == '\0', "status %d, stderr '%s'",
              run.status, run.err);
    CHECK_MSG(strcmp(run.log, "0=3 1=") == 0, "handler saw '%s'", run.log);
    CHECK(run.n_operands == 2 && strcmp(run.operands[0], "in") == 0 &&
          strcmp(run.operands[1], "-") == 0);
    run = parse(0, NULL);
    CHECK(run.status == 0 && run.n_operands == 0 && run.log[0] == '\0' && !run.stopped);
}

TEST(test_cli_parse_prints_each_usage_error_as_one_line)
{
    static const struct {
        int n;
        char *args[4];
        const char *line;
    } cases[] = {
        {2, {"in", "--bogus"}, "tool: unknown option '--bogus' (see tool --help)\n"},
        {1, {"--"}, "tool: unknown option '--' (see tool --help)\n"},
        {2, {"in", "-t"}, "tool: -t wants a value (see tool --help)\n"},
        {2, {"in", "--threads"}, "tool: --threads wants a value (see tool --help)\n"},
        {3, {"a", "b", "c"}, "tool: unexpected argument 'c' (see tool --help)\n"},
    };
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        parse_run run = parse(cases[k].n, (char **)cases[k].args);
        CHECK_MSG(run.status == 7 && !run.stopped,
                  "case %zu: status %d, want the spec's usage status 7", k, run.status);
        CHECK_MSG(strcmp(run.err, cases[k].line) == 0, "case %zu: stderr '%s'", k, run.err);
    }
}

TEST(test_cli_parse_stops_at_the_first_problem_or_cli_stop)
{
    /* --help stops the parse: the unknown option after it is never looked at. */
    parse_run run = parse(3, (char *[]){"-q", "-h", "--bogus"});
    CHECK_MSG(run.status == 0 && run.stopped && run.err[0] == '\0', "status %d, stderr '%s'",
              run.status, run.err);
    CHECK_MSG(strcmp(run.log, "1= 2=") == 0, "handler saw '%s'", run.log);
    /* An error before --help wins, and the handler is not called after it. */
    run = parse(2, (char *[]){"--bogus", "-h"});
    CHECK(run.status == 7 && !run.stopped && run.log[0] == '\0' && strstr(run.err, "'--bogus'"));
    /* A handler's own status ends the parse as it is, with nothing printed by cli_parse. */
    run = parse(3, (char *[]){"--fail", "-q", "x"});
    CHECK_MSG(run.status == 42 && !run.stopped && run.err[0] == '\0' &&
                  strcmp(run.log, "3=") == 0,
              "status %d, log '%s'", run.status, run.log);
}

TEST(test_cli_usage_error_formats_between_prefix_and_hint)
{
    int saved = stderr_capture();
    int rc = cli_usage_error(&spec, "-t wants %d to %d, not '%s'", 1, 4096, "x");
    char text[128];
    stderr_restore(saved, text, sizeof text);
    CHECK(rc == 7);
    CHECK_MSG(strcmp(text, "tool: -t wants 1 to 4096, not 'x' (see tool --help)\n") == 0,
              "stderr '%s'", text);
}
