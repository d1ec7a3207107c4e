/* gguf_writer_copy.c - copy-with-edits: a writer initialised from an opened file, and writing
 * it out with each tensor's bytes streamed from the source file (its map or buffer), so editing
 * metadata never needs a second copy of the model in memory. */
#include "gguf_internal.h"
#include "gguf_writer_internal.h"

#include <string.h>

gguf_writer *gguf_writer_from_file(const gguf_file *source)
{
    if (!source)
        return NULL;
    gguf_writer *writer = gguf_writer_create();
    if (!writer)
        return NULL;
    writer->version = gguf_version(source);
    gguf_status status = GGUF_OK;
    for (int64_t i = 0; i < gguf_kv_count(source) && status == GGUF_OK; i++)
        status = gguf_writer_set(writer, gguf_kv_key(source, i), gguf_kv_value(source, i));
    for (int64_t i = 0; i < gguf_tensor_count(source) && status == GGUF_OK; i++) {
        const gguf_tensor_info *tensor = gguf_tensor(source, i);
        status = gguf_writer_add_tensor(writer, tensor->name, tensor->type, tensor->n_dims,
                                        tensor->ne);
    }
    if (status != GGUF_OK) {
        gguf_writer_free(writer);
        return NULL;
    }
    return writer;
}

/* Finds in `source` the tensor that provides the data of writer tensor `tensor`. */
static gguf_status find_source_tensor(const gguf_tensor_info *tensor, const char *path,
                                      const gguf_file *source, const gguf_tensor_info **found,
                                      gguf_error *err)
{
    int64_t index = gguf_find_tensor(source, tensor->name);
    if (index < 0)
        return gguf_fail(err, GGUF_ERR_NOT_FOUND, path, UINT64_MAX, "tensor '%s' is not in %s",
                         tensor->name, gguf_path(source));
    *found = gguf_tensor(source, index);
    if ((*found)->type != tensor->type || memcmp((*found)->ne, tensor->ne, sizeof tensor->ne) != 0)
        return gguf_fail(err, GGUF_ERR_INVALID, path, UINT64_MAX,
                         "tensor '%s' has another type or shape in %s than in the output",
                         tensor->name, gguf_path(source));
    if (!(*found)->data)
        return gguf_fail(err, GGUF_ERR_USAGE, path, UINT64_MAX,
                         "%s was opened without its tensor data", gguf_path(source));
    return GGUF_OK;
}

/* Hands the data over in pieces so that no single size needs to fit size_t. */
static gguf_status copy_tensor_data(gguf_writer *writer, const gguf_tensor_info *from,
                                    gguf_error *err)
{
    enum { PIECE_BYTES = 1 << 30 };
    const unsigned char *data = from->data;
    gguf_status status = GGUF_OK;
    for (uint64_t done = 0; done < from->size && status == GGUF_OK; done += PIECE_BYTES) {
        uint64_t left = from->size - done;
        size_t piece = left < PIECE_BYTES ? (size_t)left : PIECE_BYTES;
        status = gguf_writer_write_data(writer, data + done, piece, err);
    }
    return status;
}

gguf_status gguf_writer_write_from(gguf_writer *writer, const char *path, const gguf_file *source,
                                   gguf_error *err)
{
    if (!writer || !source)
        return gguf_fail(err, GGUF_ERR_USAGE, path, UINT64_MAX, "no writer or no source file");
    const gguf_tensor_info *from;
    /* Check every tensor before creating anything, so a mismatch leaves no file behind. */
    for (int64_t i = 0; i < writer->n_tensors; i++) {
        gguf_status status = find_source_tensor(&writer->tensors[i], path, source, &from, err);
        if (status != GGUF_OK)
            return status;
    }
    gguf_status status = gguf_writer_begin(writer, path, err);
    for (int64_t i = 0; i < writer->n_tensors && status == GGUF_OK; i++) {
        find_source_tensor(&writer->tensors[i], path, source, &from, err);
        status = copy_tensor_data(writer, from, err);
    }
    if (status == GGUF_OK)
        status = gguf_writer_finish(writer, err);
    return status;
}
