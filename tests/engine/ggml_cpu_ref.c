/* ggml_cpu_ref.c - dlopen of REF_BIN/libggml-cpu.so (which pulls in libggml-base.so); see
 * ggml_cpu_ref.h. */
#include "ggml_cpu_ref.h"

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>

/* *slot = the address of `name` in one of the libraries; false when neither has it. */
static bool find(void *cpu, void *base, const char *name, void *slot)
{
    void *sym = dlsym(cpu, name);
    if (!sym)
        sym = dlsym(base, name);
    *(void **)slot = sym;
    return sym != NULL;
}

bool ggml_cpu_ref_load(ggml_cpu_ref *ref, const char **why)
{
    const char *dir = getenv("REF_BIN");
    if (!dir || !*dir) {
        *why = "REF_BIN is unset";
        return false;
    }
    char path[4096];
    snprintf(path, sizeof path, "%s/libggml-base.so", dir);
    void *base = dlopen(path, RTLD_NOW | RTLD_GLOBAL);
    snprintf(path, sizeof path, "%s/libggml-cpu.so", dir);
    void *cpu = base ? dlopen(path, RTLD_NOW | RTLD_LOCAL) : NULL;
    if (!cpu) {
        *why = "REF_BIN has no loadable libggml-base.so and libggml-cpu.so";
        return false;
    }
    void (*cpu_init)(void) = NULL;
    bool ok = find(cpu, base, "ggml_init", &ref->init) && find(cpu, base, "ggml_free", &ref->free) &&
              find(cpu, base, "ggml_new_tensor_2d", &ref->new_tensor_2d) &&
              find(cpu, base, "ggml_get_data", &ref->get_data) &&
              find(cpu, base, "ggml_gelu", &ref->gelu) &&
              find(cpu, base, "ggml_geglu_split", &ref->geglu_split) &&
              find(cpu, base, "ggml_tanh", &ref->tanh) && find(cpu, base, "ggml_scale", &ref->scale) &&
              find(cpu, base, "ggml_soft_max_ext", &ref->soft_max_ext) &&
              find(cpu, base, "ggml_new_graph", &ref->new_graph) &&
              find(cpu, base, "ggml_build_forward_expand", &ref->build_forward_expand) &&
              find(cpu, base, "ggml_graph_compute_with_ctx", &ref->graph_compute_with_ctx) &&
              find(cpu, base, "ggml_table_gelu_f16", &ref->table_gelu_f16) &&
              find(cpu, base, "ggml_cpu_init", &cpu_init);
    if (!ok) {
        *why = "the ggml libraries lack a symbol the test needs";
        return false;
    }
    cpu_init();
    return true;
}
