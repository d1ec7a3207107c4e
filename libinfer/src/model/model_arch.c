/* model_arch.c - the table of architectures (see model_arch.h): one row per family, defined in
 * its arch_<name>.c. */
#include <stdio.h>
#include <string.h>

#include "model_arch.h"

static const model_arch *const MODEL_ARCHS[] = {
    &MODEL_ARCH_QWEN2,
    &MODEL_ARCH_QWEN3,
    &MODEL_ARCH_PHI3,
    &MODEL_ARCH_LLAMA,
    &MODEL_ARCH_GEMMA2,
    &MODEL_ARCH_GEMMA3,
};
#define N_ARCHS (sizeof MODEL_ARCHS / sizeof MODEL_ARCHS[0])

const model_arch *model_arch_find(const char *name)
{
    for (size_t i = 0; i < N_ARCHS; i++)
        if (strcmp(MODEL_ARCHS[i]->name, name) == 0)
            return MODEL_ARCHS[i];
    return NULL;
}

void model_arch_names(char *buf, size_t size)
{
    size_t len = 0;
    buf[0] = '\0';
    for (size_t i = 0; i < N_ARCHS && len < size; i++)
        len += (size_t)snprintf(buf + len, size - len, "%s%s", i ? ", " : "", MODEL_ARCHS[i]->name);
}
