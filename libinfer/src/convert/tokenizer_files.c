/* tokenizer_files.c - the plumbing of the tokenizer converter: the vocabulary under construction,
 * paths in a model folder, and JSON files read whole. */
#include "convert/tokenizer_internal.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

bool conv_vocab_alloc(conv_vocab *v, uint32_t n, bool with_scores)
{
    memset(v, 0, sizeof *v);
    v->tokens = calloc(n ? n : 1, sizeof *v->tokens);
    v->types = calloc(n ? n : 1, sizeof *v->types);
    v->scores = with_scores ? calloc(n ? n : 1, sizeof *v->scores) : NULL;
    v->n_tokens = n;
    if (!v->tokens || !v->types || (with_scores && !v->scores)) {
        conv_vocab_free(v);
        return false;
    }
    return true;
}

void conv_vocab_free(conv_vocab *v)
{
    for (uint32_t i = 0; v->tokens && i < v->n_tokens; i++) {
        free(v->tokens[i]);
    }
    for (uint32_t i = 0; v->merges && i < v->n_merges; i++) {
        free(v->merges[i]);
    }
    free(v->tokens);
    free(v->types);
    free(v->scores);
    free(v->merges);
    memset(v, 0, sizeof *v);
}

bool conv_vocab_fill_pads(conv_vocab *v, float pad_score)
{
    for (uint32_t i = 0; i < v->n_tokens; i++) {
        if (v->tokens[i]) {
            continue;
        }
        char name[32];
        snprintf(name, sizeof name, "[PAD%u]", (unsigned)i);
        if (!(v->tokens[i] = strdup(name))) {
            return false;
        }
        v->types[i] = TOK_UNUSED;
        if (v->scores) {
            v->scores[i] = pad_score;
        }
    }
    return true;
}

char *conv_path(const char *dir, const char *name)
{
    size_t n = strlen(dir) + strlen(name) + 2;
    char *path = malloc(n);
    if (path) {
        snprintf(path, n, "%s/%s", dir, name);
    }
    return path;
}

bool conv_is_file(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 && S_ISREG(st.st_mode);
}

bool conv_json_load(const char *path, bool optional, json_t **out, ggtk_error *err)
{
    *out = NULL;
    struct stat st;
    if (stat(path, &st) != 0) {
        if (optional && errno == ENOENT) {
            return true;
        }
        ggtk_error_set(err, GGTK_ERR_IO, GGTK_NO_OFFSET, "%s: %s", path, strerror(errno));
        return false;
    }
    json_error_t jerr;
    *out = json_load_file(path, JSON_REJECT_DUPLICATES, &jerr);
    if (!*out) {
        ggtk_error_set(err, json_error_code(&jerr) == json_error_out_of_memory ? GGTK_ERR_NOMEM : GGTK_ERR_INVALID,
                       jerr.position >= 0 ? (uint64_t)jerr.position : GGTK_NO_OFFSET,
                       "%s: line %d, column %d: %s", path, jerr.line, jerr.column, jerr.text);
        return false;
    }
    return true;
}

bool conv_json_is_string(const json_t *s, const char *text)
{
    return json_is_string(s) && text && strcmp(json_string_value(s), text) == 0;
}

static bool starts_ends(const char *text, size_t len, const char *head, const char *tail)
{
    size_t h = strlen(head), t = strlen(tail);
    return len >= h && len >= t && memcmp(text, head, h) == 0 && memcmp(text + len - t, tail, t) == 0;
}

bool conv_token_looks_special(const char *text)
{
    static const char *const exact[] = {"<pad>", "<mask>", "<2mass>", "[@BOS@]"};
    for (size_t i = 0; i < sizeof exact / sizeof exact[0]; i++) {
        if (strcmp(text, exact[i]) == 0) {
            return true;
        }
    }
    size_t len = strlen(text);
    return starts_ends(text, len, "<|", "|>") || starts_ends(text, len, "<\xef\xbd\x9c", "\xef\xbd\x9c>") ||
           starts_ends(text, len, "<unused", ">");
}

char *conv_replace_all(const char *text, const char *from, const char *to)
{
    size_t nf = strlen(from), nt = strlen(to), count = 0;
    for (const char *p = strstr(text, from); p; p = strstr(p + nf, from)) {
        count++;
    }
    char *out = malloc(strlen(text) + count * (nt > nf ? nt - nf : 0) + 1);
    if (!out) {
        return NULL;
    }
    char *o = out;
    for (const char *p = text;;) {
        const char *hit = strstr(p, from);
        size_t n = hit ? (size_t)(hit - p) : strlen(p);
        memcpy(o, p, n);
        o += n;
        if (!hit) {
            break;
        }
        memcpy(o, to, nt);
        o += nt;
        p = hit + nf;
    }
    *o = '\0';
    return out;
}

bool conv_name_in_list(const char *list, const char *name)
{
    size_t len = strlen(name);
    for (const char *p = list; *p; p += strcspn(p, "|"), p += *p == '|') {
        if (strncmp(p, name, len) == 0 && (p[len] == '|' || p[len] == '\0')) {
            return true;
        }
    }
    return false;
}
