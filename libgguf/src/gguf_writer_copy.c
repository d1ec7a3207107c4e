/* gguf_writer_copy.c - copy-with-edits: a writer initialised from an opened file, and writing
 * it out with each tensor's bytes streamed from the source file (its map or buffer), so editing
 * metadata never needs a second copy of the model in memory. */
#include "gguf_internal.h"
#include "gguf_writer_internal.h"

#include <string.h>

ggtk_writer *ggtk_writer_new_from_file(const ggtk_file *source)
{
    if (!source)
        return NULL;
    ggtk_writer *writer = ggtk_writer_new();
    if (!writer)
        return NULL;
    writer->version = ggtk_version(source);
    ggtk_status status = GGTK_OK;
    for (int64_t i = 0; i < ggtk_kv_count(source) && status == GGTK_OK; i++)
        status = ggtk_writer_set(writer, ggtk_kv_key(source, i), ggtk_kv_value(source, i));
    for (int64_t i = 0; i < ggtk_tensor_count(source) && status == GGTK_OK; i++) {
        const ggtk_tensor_info *tensor = ggtk_tensor(source, i);
        status = ggtk_writer_add_tensor(writer, tensor->name, tensor->type, tensor->n_dims,
                                        tensor->ne);
    }
    if (status != GGTK_OK) {
        ggtk_writer_free(writer);
        return NULL;
    }
    return writer;
}

/* Finds in `source` the tensor that provides the data of writer tensor `tensor`. */
static ggtk_status find_source_tensor(const ggtk_tensor_info *tensor, const char *path,
                                      const ggtk_file *source, const ggtk_tensor_info **found,
                                      ggtk_error *err)
{
    char shown[128];
    int64_t index = ggtk_find_tensor(source, tensor->name);
    if (index < 0)
        return ggtk_fail(err, GGTK_ERR_NOT_FOUND, path, UINT64_MAX, "tensor '%s' is not in %s",
                         ggtk_escape_cut(shown, sizeof shown, tensor->name), ggtk_path(source));
    *found = ggtk_tensor(source, index);
    if ((*found)->type != tensor->type || memcmp((*found)->ne, tensor->ne, sizeof tensor->ne) != 0)
        return ggtk_fail(err, GGTK_ERR_INVALID, path, UINT64_MAX,
                         "tensor '%s' has another type or shape in %s than in the output",
                         ggtk_escape_cut(shown, sizeof shown, tensor->name), ggtk_path(source));
    if (!(*found)->data)
        return ggtk_fail(err, GGTK_ERR_USAGE, path, UINT64_MAX,
                         "%s was opened without its tensor data", ggtk_path(source));
    return GGTK_OK;
}

/* Hands the data over in pieces, the source's pages handed back after each, so that resident
 * memory stays bounded on a model larger than RAM (and no single size needs to fit size_t). */
static ggtk_status copy_tensor_data(ggtk_writer *writer, const ggtk_file *source,
                                    const ggtk_tensor_info *from, ggtk_error *err)
{
    enum { PIECE_BYTES = 16 << 20 };
    const unsigned char *data = from->data;
    ggtk_status status = GGTK_OK;
    for (uint64_t done = 0; done < from->size && status == GGTK_OK; done += PIECE_BYTES) {
        uint64_t left = from->size - done;
        size_t piece = left < PIECE_BYTES ? (size_t)left : PIECE_BYTES;
        status = ggtk_writer_write_data(writer, data + done, piece, err);
        ggtk_release_data(source, data + done, piece);
    }
    return status;
}

ggtk_status ggtk_writer_write_from(ggtk_writer *writer, const char *path, const ggtk_file *source,
                                   ggtk_error *err)
{
    if (!writer || !source)
        return ggtk_fail(err, GGTK_ERR_USAGE, path, UINT64_MAX, "no writer or no source file");
    const ggtk_tensor_info *from;
    /* Check every tensor before creating anything, so a mismatch leaves no file behind. */
    for (int64_t i = 0; i < writer->n_tensors; i++) {
        ggtk_status status = find_source_tensor(&writer->tensors[i], path, source, &from, err);
        if (status != GGTK_OK)
            return status;
    }
    ggtk_status status = ggtk_writer_begin(writer, path, err);
    if (status == GGTK_OK)
        status = ggtk_writer_write_data_from(writer, source, err);
    if (status == GGTK_OK)
        status = ggtk_writer_finish(writer, err);
    return status;
}

ggtk_status ggtk_writer_write_data_from(ggtk_writer *writer, const ggtk_file *source,
                                        ggtk_error *err)
{
    if (!writer || !source || !writer->stream.active || writer->stream.tensor != 0 ||
        writer->stream.tensor_done != 0) {
        ggtk_writer_abort(writer);
        return ggtk_fail(err, GGTK_ERR_USAGE, "(writer)", UINT64_MAX,
                         "no source file, or no write begun with no tensor data yet");
    }
    const char *path = ggtk_atomic_file_path(writer->stream.file);
    const ggtk_tensor_info *from;
    ggtk_status status = GGTK_OK;
    for (int64_t i = 0; i < writer->n_tensors && status == GGTK_OK; i++)
        status = find_source_tensor(&writer->tensors[i], path, source, &from, err);
    for (int64_t i = 0; i < writer->n_tensors && status == GGTK_OK; i++) {
        find_source_tensor(&writer->tensors[i], path, source, &from, err);
        status = copy_tensor_data(writer, source, from, err);
    }
    if (status != GGTK_OK)
        ggtk_writer_abort(writer);
    return status;
}
