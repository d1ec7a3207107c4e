/* ggml_ref.c - loading llama.cpp's libggml-base.so from REF_BIN (see ggml_ref.h). */
#include "ggml_ref.h"

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>

ggml_get_traits_fn ggml_ref_load(const char **why)
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
    ggml_get_traits_fn fn;
    *(void **)&fn = dlsym(lib, "ggml_get_type_traits");
    *why = "libggml-base.so lacks ggml_get_type_traits";
    return fn;
}
