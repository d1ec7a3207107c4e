/* gguf_writer_stream.c - writing a file safely: the header and the streamed tensor data go to a
 * temporary file beside the target, which is fsynced and renamed into place only once every
 * tensor's bytes arrived. Any failure removes the temporary file and leaves the target as it was. */
#include "gguf_internal.h"
#include "gguf_writer_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* The permissions a plain open(O_CREAT, 0666) would give: mkstemp creates files 0600. The umask
 * is read from /proc because setting it to read it would race with other threads. */
static mode_t new_file_mode(void)
{
    unsigned mask = 022;
    FILE *status = fopen("/proc/self/status", "re");
    if (status) {
        char line[256];
        while (fgets(line, sizeof line, status))
            if (sscanf(line, "Umask: %o", &mask) == 1)
                break;
        fclose(status);
    }
    return 0666 & ~(mode_t)mask;
}

/* Directory part of `path` ("." when it has none), malloc'd. */
static char *directory_of(const char *path)
{
    const char *slash = strrchr(path, '/');
    if (!slash)
        return strdup(".");
    if (slash == path)
        return strdup("/");
    return strndup(path, (size_t)(slash - path));
}

/* "<dir>/.<name>.XXXXXX.tmp" for mkstemps, malloc'd; NULL when out of memory. */
static char *temp_template(const char *path)
{
    const char *slash = strrchr(path, '/');
    const char *name = slash ? slash + 1 : path;
    int dir_len = slash ? (int)(slash - path + 1) : 0;
    char *template = NULL;
    if (asprintf(&template, "%.*s.%s.XXXXXX.tmp", dir_len, path, name) < 0)
        return NULL;
    return template;
}

static void stream_release(writer_stream *stream)
{
    writer_output_close(&stream->out);
    free(stream->path);
    free(stream->temp_path);
    memset(stream, 0, sizeof *stream);
    stream->out.fd = -1;
}

void ggtk_writer_abort(ggtk_writer *writer)
{
    if (!writer || !writer->stream.active)
        return;
    writer_stream *stream = &writer->stream;
    if (stream->out.fd >= 0)
        close(stream->out.fd);
    unlink(stream->temp_path);
    stream_release(stream);
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
    ggtk_fail(err, status, writer->stream.path, UINT64_MAX, "%s", message);
    ggtk_writer_abort(writer);
    return status;
}

static ggtk_status stream_io_fail(ggtk_writer *writer, ggtk_error *err, const char *what, int code)
{
    return stream_fail(writer, err, GGTK_ERR_IO, "%s %s: %s", what, writer->stream.temp_path,
                       strerror(code));
}

/* Create the temporary file with the target's future permissions. */
static ggtk_status open_temp(ggtk_writer *writer, ggtk_error *err)
{
    writer_stream *stream = &writer->stream;
    int fd = mkostemps(stream->temp_path, 4, O_CLOEXEC);
    if (fd < 0) {
        int code = errno;
        char *directory = directory_of(stream->path);
        ggtk_fail(err, GGTK_ERR_IO, stream->path, UINT64_MAX,
                  "cannot create a temporary file in %s: %s", directory ? directory : "?",
                  strerror(code));
        free(directory);
        stream_release(stream);
        return GGTK_ERR_IO;
    }
    stream->out.fd = fd;
    stream->active = true;
    if (fchmod(fd, new_file_mode()) != 0)
        return stream_io_fail(writer, err, "cannot set permissions of", errno);
    return GGTK_OK;
}

ggtk_status ggtk_writer_begin(ggtk_writer *writer, const char *path, ggtk_error *err)
{
    if (!writer || !path || !*path)
        return ggtk_fail(err, GGTK_ERR_USAGE, path, UINT64_MAX, "no writer or no output path");
    if (writer->stream.active)
        return ggtk_fail(err, GGTK_ERR_USAGE, path, UINT64_MAX,
                         "a write to %s is already in progress", writer->stream.path);
    if (path[strlen(path) - 1] == '/')
        return ggtk_fail(err, GGTK_ERR_USAGE, path, UINT64_MAX, "output path names a directory");
    /* The final rename would replace a FIFO or a device node (destroying the node, as root). */
    struct stat st;
    if (stat(path, &st) == 0 && !S_ISREG(st.st_mode))
        return ggtk_fail(err, GGTK_ERR_PATH, path, UINT64_MAX,
                         "exists and is not a regular file; refusing to replace it");
    writer_stream *stream = &writer->stream;
    stream->path = strdup(path);
    stream->temp_path = temp_template(path);
    if (!stream->path || !stream->temp_path || !writer_output_open(&stream->out, -1)) {
        stream_release(stream);
        return ggtk_fail(err, GGTK_ERR_NOMEM, path, UINT64_MAX, "out of memory");
    }
    ggtk_status status = open_temp(writer, err);
    if (status != GGTK_OK)
        return status;
    for (int64_t i = 0; i < writer->n_tensors; i++)
        stream->data_left += writer->tensors[i].size;
    writer_header_serialize(writer, &stream->out);
    if (stream->out.error)
        return stream_io_fail(writer, err, "cannot write", stream->out.error);
    return GGTK_OK;
}

const char *ggtk_writer_temp_path(const ggtk_writer *writer)
{
    return writer && writer->stream.active ? writer->stream.temp_path : NULL;
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

/* Make the rename durable. Filesystems that cannot sync a directory say EINVAL; that is fine. */
static int sync_directory(const char *path)
{
    char *directory = directory_of(path);
    if (!directory)
        return ENOMEM;
    int fd = open(directory, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    free(directory);
    if (fd < 0)
        return errno;
    int code = fsync(fd) == 0 || errno == EINVAL ? 0 : errno;
    close(fd);
    return code;
}

ggtk_status ggtk_writer_finish(ggtk_writer *writer, ggtk_error *err)
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
    if (fsync(stream->out.fd) != 0)
        return stream_io_fail(writer, err, "cannot fsync", errno);
    int fd = stream->out.fd;
    stream->out.fd = -1;
    if (close(fd) != 0)
        return stream_io_fail(writer, err, "cannot close", errno);
    if (rename(stream->temp_path, stream->path) != 0)
        return stream_io_fail(writer, err, "cannot rename", errno);
    int code = sync_directory(stream->path);
    if (code != 0)
        ggtk_fail(err, GGTK_ERR_IO, stream->path, UINT64_MAX,
                  "file written but its directory could not be synced: %s", strerror(code));
    stream_release(stream);
    return code == 0 ? GGTK_OK : GGTK_ERR_IO;
}
