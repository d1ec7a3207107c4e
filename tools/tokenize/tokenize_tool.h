/* tokenize_tool.h - gguf-tokenize's options and input text, shared by its files. */
#ifndef TOOLS_TOKENIZE_TOOL_H
#define TOOLS_TOKENIZE_TOOL_H

#include <stdbool.h>
#include <stddef.h>

enum { EXIT_FAILED = 1, EXIT_USAGE = 2 };

typedef struct tokenize_args {
    const char *model;  /* -m */
    const char *prompt; /* -p, NULL when not given */
    const char *file;   /* -f, NULL when not given */
    bool from_stdin;    /* --stdin (wins over -f and -p, as in llama-tokenize) */
    bool ids_only;      /* --ids: one list "[1, 2, 3]" */
    bool no_bos;        /* --no-bos: no BOS/EOS even when the vocabulary asks for them */
    bool parse_special; /* control-token texts become those tokens (default; --no-parse-special) */
    bool escape;        /* process \n, \t, \xHH... in the text (default; --no-escape turns it off) */
    bool show_count;    /* --show-count: a last line "Total number of tokens: N" */
} tokenize_args;

/* Parse argv. Returns 0 on success, EXIT_USAGE after one line on stderr, or 0 with *exit_now set
 * after printing the help. */
int tokenize_args_parse(tokenize_args *args, int argc, char **argv, bool *exit_now);

/* The text to tokenize as the options say (stdin, else the file, else -p), escapes processed
 * when args->escape: a malloc'd buffer with its length in *len, or NULL after one line on stderr. */
char *tokenize_read_text(const tokenize_args *args, size_t *len);

/* Replace backslash escapes in text[0..*len) in place as llama.cpp's tools do: \n \r \t \' \" \\
 * and \xHH; any other backslash is kept with the character after it. Updates *len. */
void tokenize_process_escapes(char *text, size_t *len);

#endif
