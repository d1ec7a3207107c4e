/* fuzz_safetensors.c - libFuzzer harness of the safetensors reader (libinfer/src/convert/),
 * fed through a memory file (memfd) named by its /proc path. A refused input must carry one line
 * naming it; an accepted one must list tensors whose data lies inside the input, tiles it without
 * overlap, and whose sizes are their element counts times their dtype's size. Any other outcome
 * aborts. */
#include <stdlib.h>
#include <string.h>

#include <ggtk/inf_convert.h>

#include "fuzz_input.h"

static void check_tensors(const inf_safetensors *st, size_t size)
{
    uint64_t total = 0;
    for (int64_t i = 0; i < inf_safetensors_count(st); i++) {
        const inf_safetensors_tensor *t = inf_safetensors_tensor_at(st, i);
        uint64_t n = 1;
        for (uint32_t d = 0; d < t->n_dims; d++)
            n *= t->shape[d];
        if (!t->name[0] || n != t->n_elements || t->size > size || t->n_dims > INF_SAFETENSORS_MAX_DIMS ||
            inf_safetensors_find(st, t->name) != i)
            abort();
        total += t->size;
        volatile uint8_t sink = 0;
        for (uint64_t b = 0; b < t->size; b++) /* every byte is readable */
            sink ^= ((const uint8_t *)t->data)[b];
        (void)sink;
    }
    if (total > size)
        abort();
}

static bool read_input(const char *path, size_t size, ggtk_error *err)
{
    inf_safetensors *st = inf_safetensors_open(path, err);
    if (st)
        check_tensors(st, size);
    inf_safetensors_close(st);
    return st != NULL;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fuzz_path_input(data, size, read_input);
    return 0;
}
