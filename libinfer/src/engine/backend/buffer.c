/* buffer.c - host, wrapped and file-mapped buffers, and moving data in and out of tensors
 * through a buffer's operations so the same code serves device buffers. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <ggtk/inf_backend.h>
#include "engine/tensor/tensor_internal.h"

static void host_write(inf_buffer *buffer, void *dst, const void *src, size_t size)
{
    (void)buffer;
    memcpy(dst, src, size);
}

static void host_read(inf_buffer *buffer, void *dst, const void *src, size_t size)
{
    (void)buffer;
    memcpy(dst, src, size);
}

static void host_fill(inf_buffer *buffer, void *dst, uint8_t value, size_t size)
{
    (void)buffer;
    memset(dst, value, size);
}

static void host_release(inf_buffer *buffer)
{
    free(buffer->impl);
}

static void nothing_to_release(inf_buffer *buffer)
{
    (void)buffer;
}

/* impl of a mapped buffer: the page-aligned mapping that contains [base, base + size). */
typedef struct mapping {
    void *start;
    size_t length;
} mapping;

static void map_release(inf_buffer *buffer)
{
    mapping *map = buffer->impl;
    munmap(map->start, map->length);
    free(map);
}

static const inf_buffer_ops host_ops = {"host", host_release, host_write, host_read, host_fill};
static const inf_buffer_ops wrapped_ops = {"wrapped", nothing_to_release, host_write, host_read,
                                           host_fill};
static const inf_buffer_ops mapped_ops = {"mmap", map_release, host_write, host_read, host_fill};

inf_buffer *inf_buffer_new_custom(const inf_buffer_ops *ops, void *base, size_t size, bool host,
                                  bool read_only, void *impl)
{
    inf_buffer *buffer = malloc(sizeof *buffer);
    if (!buffer)
        return NULL;
    *buffer = (inf_buffer){ops, base, size, host, read_only, impl};
    return buffer;
}

inf_buffer *inf_buffer_host_new(size_t size, size_t alignment)
{
    if (alignment == 0)
        alignment = INF_DATA_ALIGNMENT;
    if ((alignment & (alignment - 1)) != 0 || size > SIZE_MAX - alignment)
        return NULL;
    /* aligned_alloc wants a multiple of the alignment, and a non-zero size gives a real pointer. */
    size_t rounded = (size + alignment - 1) / alignment * alignment;
    void *memory = aligned_alloc(alignment, rounded ? rounded : alignment);
    if (!memory)
        return NULL;
    inf_buffer *buffer = inf_buffer_new_custom(&host_ops, memory, size, true, false, memory);
    if (!buffer)
        free(memory);
    return buffer;
}

inf_buffer *inf_buffer_wrap(void *base, size_t size, bool read_only)
{
    return inf_buffer_new_custom(&wrapped_ops, base, size, true, read_only, NULL);
}

inf_buffer *inf_buffer_map_file(const char *path, uint64_t offset, size_t size, ggtk_error *err)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        ggtk_error_set(err, GGTK_ERR_IO, GGTK_NO_OFFSET, "%s: cannot open: %s", path, strerror(errno));
        return NULL;
    }
    struct stat st;
    if (fstat(fd, &st) != 0 || offset > (uint64_t)st.st_size ||
        size > (uint64_t)st.st_size - offset || size == 0) {
        ggtk_error_set(err, GGTK_ERR_LAYOUT, offset,
                       "%s: %zu bytes at offset %llu are not inside the file", path, size,
                       (unsigned long long)offset);
        close(fd);
        return NULL;
    }
    uint64_t page = (uint64_t)sysconf(_SC_PAGESIZE);
    uint64_t start = offset / page * page;
    size_t length = size + (size_t)(offset - start);
    void *map = mmap(NULL, length, PROT_READ, MAP_PRIVATE, fd, (off_t)start);
    close(fd);
    if (map == MAP_FAILED) {
        ggtk_error_set(err, GGTK_ERR_IO, GGTK_NO_OFFSET, "%s: mmap failed: %s", path,
                       strerror(errno));
        return NULL;
    }
    mapping *impl = malloc(sizeof *impl);
    inf_buffer *buffer = impl ? inf_buffer_new_custom(&mapped_ops, (char *)map + (offset - start),
                                                      size, true, true, impl)
                              : NULL;
    if (!buffer) {
        free(impl);
        munmap(map, length);
        ggtk_error_set(err, GGTK_ERR_NOMEM, GGTK_NO_OFFSET, "%s: out of memory", path);
        return NULL;
    }
    *impl = (mapping){map, length};
    return buffer;
}

void inf_buffer_free(inf_buffer *buffer)
{
    if (!buffer)
        return;
    buffer->ops->release(buffer);
    free(buffer);
}

ggtk_status inf_buffer_fill(inf_buffer *buffer, uint8_t value, ggtk_error *err)
{
    if (buffer->read_only)
        return ggtk_error_set(err, GGTK_ERR_USAGE, GGTK_NO_OFFSET,
                              "%s buffer: cannot fill a read-only buffer", buffer->ops->name);
    if (buffer->size > 0)
        buffer->ops->fill(buffer, buffer->base, value, buffer->size);
    return GGTK_OK;
}

ggtk_status inf_buffer_place_tensor(inf_buffer *buffer, inf_tensor *tensor, size_t offset,
                                    ggtk_error *err)
{
    size_t bytes = inf_tensor_nbytes(tensor);
    if (tensor->view_src || tensor->data)
        return ggtk_error_set(err, GGTK_ERR_INVALID, GGTK_NO_OFFSET,
                              "%s buffer: tensor '%s' is a view or already has memory",
                              buffer->ops->name, tensor->name);
    if (offset > buffer->size || bytes > buffer->size - offset)
        return ggtk_error_set(err, GGTK_ERR_INVALID, GGTK_NO_OFFSET,
                              "%s buffer: tensor '%s' (%zu bytes at offset %zu) does not fit in %zu "
                              "bytes", buffer->ops->name, tensor->name, bytes, offset, buffer->size);
    tensor->data = (char *)buffer->base + offset;
    tensor->buffer = buffer;
    return GGTK_OK;
}

ggtk_status inf_buffer_bind_tensor(inf_buffer *buffer, inf_tensor *tensor, const void *data,
                                   ggtk_error *err)
{
    const char *base = buffer->base;
    const char *at = data;
    size_t bytes = inf_tensor_nbytes(tensor);
    if (tensor->view_src || at < base || (size_t)(at - base) > buffer->size ||
        bytes > buffer->size - (size_t)(at - base))
        return ggtk_error_set(err, GGTK_ERR_INVALID, GGTK_NO_OFFSET,
                              "%s buffer: tensor '%s' is a view or its %zu bytes are not inside the "
                              "buffer", buffer->ops->name, tensor->name, bytes);
    tensor->data = (void *)at;
    tensor->buffer = buffer;
    return GGTK_OK;
}

/* Memory of a tensor, resolving a view whose data was not yet derived from its source. */
static char *tensor_memory(const inf_tensor *tensor)
{
    if (tensor->data)
        return tensor->data;
    if (tensor->view_src && tensor->view_src->data)
        return (char *)tensor->view_src->data + tensor->view_offset;
    return NULL;
}

static inf_buffer *tensor_buffer(const inf_tensor *tensor)
{
    return tensor->view_src ? tensor->view_src->buffer : tensor->buffer;
}

/* GGTK_ERR_USAGE naming why `tensor` cannot be read or written at [offset, offset + size). */
static ggtk_status access_error(const inf_tensor *tensor, const char *verb, size_t offset,
                                size_t size, ggtk_error *err)
{
    if (!tensor_memory(tensor))
        return ggtk_error_set(err, GGTK_ERR_USAGE, GGTK_NO_OFFSET,
                              "cannot %s tensor '%s': it has no memory", verb, tensor->name);
    return ggtk_error_set(err, GGTK_ERR_USAGE, GGTK_NO_OFFSET,
                          "cannot %s tensor '%s': %zu bytes at offset %zu are outside its %zu bytes",
                          verb, tensor->name, size, offset, inf_tensor_nbytes(tensor));
}

ggtk_status inf_tensor_write(inf_tensor *tensor, const void *data, size_t offset, size_t size,
                             ggtk_error *err)
{
    char *memory = tensor_memory(tensor);
    inf_buffer *buffer = tensor_buffer(tensor);
    size_t bytes = inf_tensor_nbytes(tensor);
    if (!memory || offset > bytes || size > bytes - offset)
        return access_error(tensor, "write", offset, size, err);
    if (buffer && buffer->read_only)
        return ggtk_error_set(err, GGTK_ERR_USAGE, GGTK_NO_OFFSET,
                              "cannot write tensor '%s': its %s buffer is read-only", tensor->name,
                              buffer->ops->name);
    if (buffer)
        buffer->ops->write(buffer, memory + offset, data, size);
    else
        memcpy(memory + offset, data, size);
    return GGTK_OK;
}

ggtk_status inf_tensor_read(const inf_tensor *tensor, void *data, size_t offset, size_t size,
                            ggtk_error *err)
{
    const char *memory = tensor_memory(tensor);
    inf_buffer *buffer = tensor_buffer(tensor);
    size_t bytes = inf_tensor_nbytes(tensor);
    if (!memory || offset > bytes || size > bytes - offset)
        return access_error(tensor, "read", offset, size, err);
    if (buffer)
        buffer->ops->read(buffer, data, memory + offset, size);
    else
        memcpy(data, memory + offset, size);
    return GGTK_OK;
}
