/* gemma_test_support.c - see gemma_test_support.h. */
#include "gemma_test_support.h"

#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "test.h"

/* Run `tiny_gemma.py ARGS` unless `path` exists already; path on success, NULL after saying why. */
static const char *made(const char *path, const char *args)
{
    if (access(path, R_OK) == 0)
        return path;
    char *out = NULL;
    int rc = test_run(&out, "python3 tests/model/py/tiny_gemma.py %s", args);
    if (rc != 0)
        fprintf(stderr, "    tiny_gemma.py %s failed: %s\n", args, out ? out : "");
    free(out);
    return rc == 0 ? path : NULL;
}

const char *gemma_model(const char *variant)
{
    static char path[512];
    char name[64], args[1200];
    snprintf(name, sizeof name, "tiny_%s.gguf", variant);
    snprintf(path, sizeof path, "%s", test_tmpfile(name));
    snprintf(args, sizeof args, "make '%s' %s", path, variant);
    return made(path, args);
}

const char *gemma_model_as(const char *variant, const char *type)
{
    static char path[512];
    char source[512], name[96], args[1200];
    const char *src = gemma_model(variant);
    if (!src)
        return NULL;
    snprintf(source, sizeof source, "%s", src);
    snprintf(name, sizeof name, "tiny_%s_%s.gguf", variant, type);
    snprintf(path, sizeof path, "%s", test_tmpfile(name));
    snprintf(args, sizeof args, "copy '%s' '%s' %s", source, path, type);
    return made(path, args);
}
