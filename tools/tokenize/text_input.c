/* text_input.c - the text gguf-tokenize works on: from -p, a file or stdin, read byte for byte
 * (NUL bytes and a last newline included), with llama.cpp's escape processing. */
#include "tokenize_tool.h"

#include <errno.h>
#include <stdio.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* All of `stream` in a malloc'd buffer (*len bytes, NUL-terminated), or NULL with errno set. */
static char *read_stream(FILE *stream, size_t *len)
{
    size_t cap = 1 << 16, n = 0;
    char *buf = malloc(cap);
    while (buf) {
        n += fread(buf + n, 1, cap - 1 - n, stream);
        if (ferror(stream)) {
            free(buf);
            return NULL;
        }
        if (feof(stream)) {
            buf[n] = '\0';
            *len = n;
            return buf;
        }
        char *grown = cap < SIZE_MAX / 2 ? realloc(buf, cap * 2) : NULL;
        if (!grown) {
            free(buf);
            errno = ENOMEM;
            return NULL;
        }
        buf = grown;
        cap *= 2;
    }
    return NULL;
}

static int hex_digit(char c)
{
    return (c >= '0' && c <= '9') ? c - '0' : (c >= 'a' && c <= 'f') ? c - 'a' + 10 : (c >= 'A' && c <= 'F') ? c - 'A' + 10 : -1;
}

/* The byte of "\\xAB": llama.cpp reads the two characters with strtol(base 16), so a sign or a
 * space may stand first ("\\x-1" is 0xFF); -1 when they are not a number. */
static int escaped_byte(char a, char b)
{
    if (hex_digit(b) < 0) {
        return -1;
    }
    if (hex_digit(a) >= 0) {
        return hex_digit(a) * 16 + hex_digit(b);
    }
    if (a == '+' || a == ' ' || (a >= '\t' && a <= '\r')) {
        return hex_digit(b);
    }
    return a == '-' ? (-hex_digit(b)) & 0xFF : -1;
}

void tokenize_process_escapes(char *text, size_t *len)
{
    size_t out = 0, n = *len;
    for (size_t i = 0; i < n; i++) {
        if (text[i] != '\\' || i + 1 >= n) {
            text[out++] = text[i];
            continue;
        }
        char c = text[++i];
        const char *from = "nrt'\"\\", *to = "\n\r\t'\"\\";
        const char *hit = c ? strchr(from, c) : NULL;
        if (hit) {
            text[out++] = to[hit - from];
        } else if (c == 'x' && i + 2 < n && escaped_byte(text[i + 1], text[i + 2]) >= 0) {
            text[out++] = (char)escaped_byte(text[i + 1], text[i + 2]);
            i += 2;
        } else {
            text[out++] = '\\';
            text[out++] = c;
        }
    }
    *len = out;
}

char *tokenize_read_text(const tokenize_args *args, size_t *len)
{
    char *text = NULL;
    if (args->from_stdin) {
        text = read_stream(stdin, len);
        if (!text) {
            fprintf(stderr, "gguf-tokenize: error: stdin: %s\n", strerror(errno));
        }
    } else if (args->file) {
        FILE *f = fopen(args->file, "rb");
        text = f ? read_stream(f, len) : NULL;
        if (!text) {
            fprintf(stderr, "gguf-tokenize: error: %s: %s\n", args->file, strerror(errno));
        }
        if (f) {
            fclose(f);
        }
    } else {
        *len = strlen(args->prompt);
        text = malloc(*len + 1);
        if (text) {
            memcpy(text, args->prompt, *len + 1);
        } else {
            fprintf(stderr, "gguf-tokenize: error: out of memory\n");
        }
    }
    if (text && args->escape) {
        tokenize_process_escapes(text, len);
    }
    return text;
}
