/* ggml_ref.c - dlopen of REF_BIN/libggml-base.so (see ggml_ref.h). */
#include "ggml_ref.h"

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>

void *ggml_ref_symbol(const char *name, const char **why)
{
    const char *dir = getenv("REF_BIN");
    if (!dir || !*dir) {
        *why = "REF_BIN is unset";
        return NULL;
    }
    char path[4096];
    snprintf(path, sizeof path, "%s/libggml-base.so", dir);
    void *lib = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!lib) {
        *why = "REF_BIN has no loadable libggml-base.so";
        return NULL;
    }
    void *sym = dlsym(lib, name);
    *why = "libggml-base.so lacks a symbol the test needs";
    return sym;
}
