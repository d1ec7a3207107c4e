/* gguf_writer_tensors.c - the writer's tensor table: checking and adding tensor infos, changing
 * their type, removing them, and laying them out (where each info sits in the header and where
 * each tensor's data sits in the aligned data section). */
#include "gguf_writer_internal.h"

#include <stdlib.h>
#include <string.h>

/* Name string, n_dims, the dimensions, type code and data offset. */
static uint64_t tensor_info_bytes(const ggtk_tensor_info *tensor)
{
    return 8 + strlen(tensor->name) + 4 + 8 * (uint64_t)tensor->n_dims + 4 + 8;
}

/* One pass over tensors [first, n): computes every offset and, when `store`, records them. */
static ggtk_status layout_pass(ggtk_writer *writer, int64_t first, bool store)
{
    uint64_t info_offset, data_offset;
    if (first == 0) {
        if (__builtin_add_overflow((uint64_t)GGTK_WRITER_FIXED_HEADER_BYTES, writer->kv_bytes,
                                   &info_offset))
            return GGTK_ERR_OVERFLOW;
        data_offset = 0;
    } else {
        const ggtk_tensor_info *previous = &writer->tensors[first - 1];
        info_offset = previous->info_offset + tensor_info_bytes(previous);
        data_offset = previous->offset + previous->size +
                      writer_padding(previous->size, writer->alignment);
    }
    for (int64_t i = first; i < writer->n_tensors; i++) {
        ggtk_tensor_info *tensor = &writer->tensors[i];
        uint64_t info_end, data_end;
        if (__builtin_add_overflow(info_offset, tensor_info_bytes(tensor), &info_end) ||
            __builtin_add_overflow(data_offset, tensor->size, &data_end) ||
            __builtin_add_overflow(data_end, writer_padding(tensor->size, writer->alignment),
                                   &data_end))
            return GGTK_ERR_OVERFLOW;
        if (store) {
            tensor->info_offset = info_offset;
            tensor->offset = data_offset;
        }
        info_offset = info_end;
        data_offset = data_end;
    }
    uint64_t section_start, file_size;
    if (__builtin_add_overflow(info_offset, writer_padding(info_offset, writer->alignment),
                               &section_start) ||
        __builtin_add_overflow(section_start, data_offset, &file_size))
        return GGTK_ERR_OVERFLOW;
    if (store) {
        writer->data_offset = section_start;
        writer->data_bytes = data_offset;
    }
    return GGTK_OK;
}

ggtk_status writer_layout(ggtk_writer *writer, int64_t first)
{
    ggtk_status status = layout_pass(writer, first, false);
    if (status == GGTK_OK)
        layout_pass(writer, first, true);
    return status;
}

int64_t writer_find_tensor(const ggtk_writer *writer, const char *name)
{
    for (int64_t i = 0; i < writer->n_tensors; i++)
        if (strcmp(writer->tensors[i].name, name) == 0)
            return i;
    return -1;
}

void writer_tensors_free(ggtk_writer *writer)
{
    for (int64_t i = 0; i < writer->n_tensors; i++)
        free((void *)writer->tensors[i].name);
    free(writer->tensors);
    writer->tensors = NULL;
    writer->n_tensors = writer->tensor_capacity = 0;
}

/* Elements of the shape `ne[0..n_dims)` and their bytes in `type`, with every rule a reader
 * enforces: dimensions positive and within int64, rows made of whole blocks. */
static ggtk_status shape_bytes(ggtk_tensor_type type, uint32_t n_dims, const uint64_t *ne,
                               uint64_t *bytes)
{
    const ggtk_tensor_type_info *info = ggtk_tensor_type_info_get(type);
    if (!info || n_dims == 0 || n_dims > GGTK_MAX_DIMS)
        return GGTK_ERR_INVALID;
    uint64_t elements = 1;
    for (uint32_t d = 0; d < n_dims; d++) {
        if (ne[d] == 0 || ne[d] > INT64_MAX)
            return GGTK_ERR_INVALID;
        if (__builtin_mul_overflow(elements, ne[d], &elements) || elements > INT64_MAX)
            return GGTK_ERR_OVERFLOW;
    }
    if (ne[0] % info->block_size != 0)
        return GGTK_ERR_INVALID;
    return ggtk_tensor_type_bytes(type, elements, bytes) ? GGTK_OK : GGTK_ERR_OVERFLOW;
}

static bool reserve_tensor(ggtk_writer *writer)
{
    if (writer->n_tensors < writer->tensor_capacity)
        return true;
    int64_t capacity = writer->tensor_capacity ? 2 * writer->tensor_capacity : 64;
    ggtk_tensor_info *grown = realloc(writer->tensors, (size_t)capacity * sizeof *grown);
    if (!grown)
        return false;
    writer->tensors = grown;
    writer->tensor_capacity = capacity;
    return true;
}

ggtk_status ggtk_writer_add_tensor(ggtk_writer *writer, const char *name, ggtk_tensor_type type,
                                   uint32_t n_dims, const uint64_t *ne)
{
    if (!writer || !name || !ne || writer->stream.active)
        return GGTK_ERR_USAGE;
    size_t name_len = strlen(name);
    if (name_len == 0 || name_len > GGTK_WRITER_MAX_TENSOR_NAME)
        return GGTK_ERR_INVALID;
    if (writer_find_tensor(writer, name) >= 0)
        return GGTK_ERR_DUPLICATE;
    uint64_t size;
    ggtk_status status = shape_bytes(type, n_dims, ne, &size);
    if (status != GGTK_OK)
        return status;
    char *name_copy = strdup(name);
    if (!name_copy || !reserve_tensor(writer)) {
        free(name_copy);
        return GGTK_ERR_NOMEM;
    }
    ggtk_tensor_info *tensor = &writer->tensors[writer->n_tensors];
    memset(tensor, 0, sizeof *tensor);
    tensor->name = name_copy;
    tensor->n_dims = n_dims;
    for (uint32_t d = 0; d < GGTK_MAX_DIMS; d++)
        tensor->ne[d] = d < n_dims ? ne[d] : 1;
    tensor->type = type;
    tensor->size = size;
    writer->n_tensors++;
    status = writer_layout(writer, writer->n_tensors - 1);
    if (status != GGTK_OK) {
        writer->n_tensors--;
        free(name_copy);
    }
    return status;
}

ggtk_status ggtk_writer_set_tensor_type(ggtk_writer *writer, const char *name,
                                        ggtk_tensor_type type)
{
    if (!writer || !name || writer->stream.active)
        return GGTK_ERR_USAGE;
    int64_t index = writer_find_tensor(writer, name);
    if (index < 0)
        return GGTK_ERR_NOT_FOUND;
    ggtk_tensor_info *tensor = &writer->tensors[index];
    uint64_t size;
    ggtk_status status = shape_bytes(type, tensor->n_dims, tensor->ne, &size);
    if (status != GGTK_OK)
        return status;
    ggtk_tensor_info before = *tensor;
    tensor->type = type;
    tensor->size = size;
    status = writer_layout(writer, index);
    if (status != GGTK_OK)
        *tensor = before;
    return status;
}

ggtk_status ggtk_writer_remove_tensor(ggtk_writer *writer, const char *name)
{
    if (!writer || !name || writer->stream.active)
        return GGTK_ERR_USAGE;
    int64_t index = writer_find_tensor(writer, name);
    if (index < 0)
        return GGTK_ERR_NOT_FOUND;
    free((void *)writer->tensors[index].name);
    memmove(&writer->tensors[index], &writer->tensors[index + 1],
            (size_t)(writer->n_tensors - index - 1) * sizeof *writer->tensors);
    writer->n_tensors--;
    /* Everything after the removed tensor moves towards the start: nothing can overflow. */
    return writer_layout(writer, index);
}

int64_t ggtk_writer_tensor_count(const ggtk_writer *writer)
{
    return writer ? writer->n_tensors : 0;
}

const ggtk_tensor_info *ggtk_writer_tensor(const ggtk_writer *writer, int64_t index)
{
    if (!writer || index < 0 || index >= writer->n_tensors)
        return NULL;
    return &writer->tensors[index];
}

uint64_t ggtk_writer_file_size(const ggtk_writer *writer)
{
    return writer ? writer->data_offset + writer->data_bytes : 0;
}
