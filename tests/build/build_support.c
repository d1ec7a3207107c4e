/* build_support.c - symbol name lists, header parsing and the staged install of the build tests. */
#include "build_support.h"

#include <ctype.h>
#include <glob.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "test.h"

void names_add(name_list *list, const char *name, size_t len)
{
    if (list->count == list->cap) {
        list->cap = list->cap ? 2 * list->cap : 64;
        list->names = realloc(list->names, list->cap * sizeof *list->names);
        if (!list->names)
            abort();
    }
    list->names[list->count] = strndup(name, len);
    if (!list->names[list->count++])
        abort();
}

bool names_contain(const name_list *list, const char *name)
{
    for (size_t i = 0; i < list->count; i++)
        if (strcmp(list->names[i], name) == 0)
            return true;
    return false;
}

void names_free(name_list *list)
{
    for (size_t i = 0; i < list->count; i++)
        free(list->names[i]);
    free(list->names);
    *list = (name_list){0};
}

bool names_exported(const char *library, name_list *out)
{
    char *text = NULL;
    /* POSIX format puts the name first: "name type value size". */
    int rc = test_run(&text, "nm -D --defined-only --format=posix '%s'", library);
    if (rc != 0) {
        test_fail(__FILE__, __LINE__, "nm %s failed (%d): %s", library, rc, text);
        free(text);
        return false;
    }
    for (char *line = strtok(text, "\n"); line; line = strtok(NULL, "\n"))
        names_add(out, line, strcspn(line, " @"));
    free(text);
    return true;
}

/* The declared name in one "GGTK_API ..." line: the identifier before the first '(' of a
 * function, or before the ';', '[' or '=' of an object. */
static bool declared_name(const char *line, const char **name, size_t *len)
{
    const char *end = strpbrk(line, "(;[=");
    if (!end)
        return false;
    while (end > line && isspace((unsigned char)end[-1]))
        end--;
    const char *start = end;
    while (start > line && (isalnum((unsigned char)start[-1]) || start[-1] == '_'))
        start--;
    *name = start;
    *len = (size_t)(end - start);
    return *len > 0 && !isdigit((unsigned char)*start);
}

static bool declared_in_header(const char *path, name_list *out)
{
    FILE *file = fopen(path, "r");
    if (!file) {
        test_fail(__FILE__, __LINE__, "cannot read %s", path);
        return false;
    }
    char line[1024];
    bool ok = true;
    for (int number = 1; ok && fgets(line, sizeof line, file); number++) {
        if (strncmp(line, "GGTK_API ", 9) != 0)
            continue;
        const char *name;
        size_t len;
        ok = declared_name(line + 9, &name, &len);
        if (ok)
            names_add(out, name, len);
        else
            test_fail(__FILE__, __LINE__, "%s:%d: no declared name in: %s", path, number, line);
    }
    fclose(file);
    return ok;
}

bool names_declared(const char *header_glob, name_list *out)
{
    glob_t headers;
    if (glob(header_glob, 0, NULL, &headers) != 0) {
        test_fail(__FILE__, __LINE__, "no header matches %s", header_glob);
        return false;
    }
    bool ok = true;
    for (size_t i = 0; ok && i < headers.gl_pathc; i++)
        ok = declared_in_header(headers.gl_pathv[i], out);
    globfree(&headers);
    return ok;
}

const char *build_lib(const char *file)
{
    static char path[512];
    snprintf(path, sizeof path, "%s/lib/%s", TEST_BUILD_DIR, file);
    return path;
}

const char *install_staged(const char *stage)
{
    static char prefix[600];
    char destdir[512];
    snprintf(destdir, sizeof destdir, "%s", test_tmpfile(stage));
    char *output = NULL;
    /* The outer make's job server is not ours to use. */
    int rc = test_run(&output, "env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL make -s install "
                               "DESTDIR='%s' PREFIX=/usr/local %s", destdir, TEST_MAKE_VARS);
    if (rc != 0) {
        test_fail(__FILE__, __LINE__, "make install failed (%d):\n%s", rc, output);
        free(output);
        return NULL;
    }
    free(output);
    snprintf(prefix, sizeof prefix, "%s/usr/local", destdir);
    return prefix;
}

void require_tool(const char *tool, const char *package)
{
    if (test_run(NULL, "command -v '%s'", tool) != 0)
        SKIP("%s is not installed (apt-get install %s)", tool, package);
}
