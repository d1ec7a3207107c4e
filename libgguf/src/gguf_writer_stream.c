/* gguf_writer_stream.c - writing a file safely: the header and the streamed tensor data go to a
 * temporary file beside the target (atomic_file.h), which is committed only once every tensor's
 * bytes arrived. Any failure removes the temporary file and leaves the target as it was. */
#include "gguf_internal.h"
#include "gguf_writer_internal.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

static void stream_release(writer_stream *stream)
{
    writer_output_close(&stream->out);
    ggtk_atomic_file_close(stream->file);
    memset(stream, 0, sizeof *stream);
    stream->out.fd = -1;
}

void ggtk_writer_abort(ggtk_writer *writer)
{
    if (!writer || !writer->stream.active)
        return;
    stream_release(&writer->stream);
}

/* Abandon the write and report why; the message is built before the paths are freed. */
__attribute__((format(printf, 4, 5))) static ggtk_status
stream_fail(ggtk_writer *writer, ggtk_error *err, ggtk_status status, const char *fmt, ...)
{
    char message[400];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(message, sizeof message, fmt, ap);
    va_end(ap);
    ggtk_fail(err, status, ggtk_atomic_file_path(writer->stream.file), UINT64_MAX, "%s", message);
    ggtk_writer_abort(writer);
    return status;
}

static ggtk_status stream_io_fail(ggtk_writer *writer, ggtk_error *err, const char *what, int code)
{
    return stream_fail(writer, err, GGTK_ERR_IO, "%s %s: %s", what,
                       ggtk_atomic_file_temp_path(writer->stream.file), strerror(code));
}

ggtk_status ggtk_writer_begin(ggtk_writer *writer, const char *path, ggtk_error *err)
{
    if (!writer || !path || !*path)
        return ggtk_fail(err, GGTK_ERR_USAGE, path, UINT64_MAX, "no writer or no output path");
    writer_stream *stream = &writer->stream;
    if (stream->active)
        return ggtk_fail(err, GGTK_ERR_USAGE, path, UINT64_MAX,
                         "a write to %s is already in progress",
                         ggtk_atomic_file_path(stream->file));
    ggtk_error local;
    stream->file = ggtk_atomic_file_open(path, err ? err : &local);
    if (!stream->file)
        return err ? err->status : local.status;
    stream->active = true;
    if (!writer_output_open(&stream->out, ggtk_atomic_file_fd(stream->file)))
        return stream_fail(writer, err, GGTK_ERR_NOMEM, "out of memory");
    for (int64_t i = 0; i < writer->n_tensors; i++)
        stream->data_left += writer->tensors[i].size;
    writer_header_serialize(writer, &stream->out);
    if (stream->out.error)
        return stream_io_fail(writer, err, "cannot write", stream->out.error);
    return GGTK_OK;
}

const char *ggtk_writer_temp_path(const ggtk_writer *writer)
{
    return writer && writer->stream.active ? ggtk_atomic_file_temp_path(writer->stream.file) : NULL;
}

ggtk_status ggtk_writer_write_data(ggtk_writer *writer, const void *data, size_t size,
                                   ggtk_error *err)
{
    if (!writer || !writer->stream.active)
        return ggtk_fail(err, GGTK_ERR_USAGE, NULL, UINT64_MAX, "no write in progress");
    writer_stream *stream = &writer->stream;
    if (size > 0 && !data)
        return stream_fail(writer, err, GGTK_ERR_USAGE, "tensor data pointer is NULL");
    if (size > stream->data_left)
        return stream_fail(writer, err, GGTK_ERR_USAGE,
                           "%zu bytes of tensor data given where only %llu remain", size,
                           (unsigned long long)stream->data_left);
    stream->data_left -= size;
    const unsigned char *bytes = data;
    while (size > 0) {
        const ggtk_tensor_info *tensor = &writer->tensors[stream->tensor];
        uint64_t room = tensor->size - stream->tensor_done;
        size_t chunk = size < room ? size : (size_t)room;
        writer_output_bytes(&stream->out, bytes, chunk);
        bytes += chunk;
        size -= chunk;
        stream->tensor_done += chunk;
        if (stream->tensor_done == tensor->size) {
            writer_output_zeros(&stream->out, writer_padding(tensor->size, writer->alignment));
            stream->tensor++;
            stream->tensor_done = 0;
        }
    }
    if (stream->out.error)
        return stream_io_fail(writer, err, "cannot write", stream->out.error);
    return GGTK_OK;
}

/* Every tensor's data arrived and all of it reached the temporary file; else the write is
 * abandoned. */
static ggtk_status stream_complete(ggtk_writer *writer, ggtk_error *err)
{
    if (!writer || !writer->stream.active)
        return ggtk_fail(err, GGTK_ERR_USAGE, NULL, UINT64_MAX, "no write in progress");
    writer_stream *stream = &writer->stream;
    if (stream->tensor < writer->n_tensors) {
        const ggtk_tensor_info *tensor = &writer->tensors[stream->tensor];
        char shown[128];
        return stream_fail(writer, err, GGTK_ERR_USAGE, "tensor '%s' got %llu of its %llu bytes",
                           ggtk_escape_cut(shown, sizeof shown, tensor->name),
                           (unsigned long long)stream->tensor_done,
                           (unsigned long long)tensor->size);
    }
    if (!writer_output_flush(&stream->out))
        return stream_io_fail(writer, err, "cannot write", stream->out.error);
    return GGTK_OK;
}

ggtk_status ggtk_writer_finish(ggtk_writer *writer, ggtk_error *err)
{
    ggtk_status status = stream_complete(writer, err);
    if (status != GGTK_OK)
        return status;
    status = ggtk_atomic_file_commit(writer->stream.file, err);
    stream_release(&writer->stream);
    return status;
}

ggtk_atomic_file *ggtk_writer_finish_uncommitted(ggtk_writer *writer, ggtk_error *err)
{
    if (stream_complete(writer, err) != GGTK_OK)
        return NULL;
    ggtk_atomic_file *file = writer->stream.file;
    writer->stream.file = NULL; /* now the caller's */
    stream_release(&writer->stream);
    return file;
}
