/* check_blocks.c - the part of --check that needs libinfer: every tensor of a block-quantized
 * type is dequantized, so that a NaN or infinite scale (or a product beyond the float range) is
 * found in every type, not only in the float types that libgguf's check reads directly. */
#include "inspect.h"

#include <ggtk/inf_quant.h>

#include <math.h>
#include <stdlib.h>

/* Elements dequantized at a time: a multiple of every block size, small enough for L2. */
#define CHUNK_ELEMENTS (256 * 64)
/* Bytes checked between releases of the pages read (the resident memory of a thread, whatever
 * the model's size). */
#define RELEASE_BYTES (16u << 20)

/* Index of the first element of quantized tensor `t` that dequantizes to NaN or +-Inf, or -1.
 * `scratch` holds CHUNK_ELEMENTS floats. A type without a dequantizer is not checked. */
static int64_t first_non_finite_element(const ggtk_file *file, const ggtk_tensor_info *t,
                                        float *scratch)
{
    const ggtk_tensor_type_info *info = ggtk_tensor_type_info_get(t->type);
    const int64_t total = (int64_t)ggtk_tensor_elements(t);
    if (!info->quantized || !inf_type_can_dequantize(t->type))
        return -1;
    const uint8_t *released = t->data;
    for (int64_t first = 0; first < total; first += CHUNK_ELEMENTS) {
        const int64_t n = total - first < CHUNK_ELEMENTS ? total - first : CHUNK_ELEMENTS;
        const uint8_t *blocks = (const uint8_t *)t->data +
                                (size_t)(first / info->block_size) * info->block_bytes;
        const uint8_t *end = blocks + (size_t)(n / info->block_size) * info->block_bytes;
        if (!inf_dequantize_row(t->type, blocks, scratch, n))
            return -1;
        if ((size_t)(end - released) >= RELEASE_BYTES || first + n == total) {
            ggtk_release_data(file, released, (uint64_t)(end - released));
            released = end;
        }
        for (int64_t i = 0; i < n; i++)
            if (!isfinite(scratch[i]))
                return first + i;
    }
    return -1;
}

bool inspect_check_blocks(const char *path, const ggtk_file *file)
{
    const int64_t n = ggtk_tensor_count(file);
    int64_t *bad = malloc((size_t)(n ? n : 1) * sizeof *bad);
    bool out_of_memory = bad == NULL;
#pragma omp parallel if (bad != NULL)
    {
        float *scratch = malloc(CHUNK_ELEMENTS * sizeof *scratch);
#pragma omp for schedule(dynamic, 1)
        for (int64_t i = 0; i < n; i++)
            bad[i] = scratch ? first_non_finite_element(file, ggtk_tensor(file, i), scratch)
                             : -1;
        if (!scratch)
#pragma omp atomic write
            out_of_memory = true;
        free(scratch);
    }
    if (out_of_memory) {
        inspect_error("%s: out of memory checking quantized tensors", path);
        free(bad);
        return false;
    }
    for (int64_t i = 0; i < n; i++) {
        if (bad[i] < 0)
            continue;
        const ggtk_tensor_info *t = ggtk_tensor(file, i);
        const ggtk_tensor_type_info *info = ggtk_tensor_type_info_get(t->type);
        const uint64_t block_offset = ggtk_data_offset(file) + t->offset +
                                      (uint64_t)(bad[i] / info->block_size) * info->block_bytes;
        char *name = inspect_escape_dup(t->name);
        inspect_error("%s: tensor '%s': element %lld (%s block at byte %llu) dequantizes to NaN "
                      "or infinity",
                      path, name ? name : "?", (long long)bad[i], info->name,
                      (unsigned long long)block_offset);
        free(name);
        free(bad);
        return false;
    }
    free(bad);
    return true;
}
