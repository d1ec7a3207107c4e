/* source.c - the input side of a run: refuse an output that is the input, map the input's bytes
 * read-only (each part of a split model on its own), and hand mapped pages back once processed so
 * that the process's resident memory does not grow with the model. */
#include "quantize_internal.h"
#include "source.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <stdlib.h>
#include <unistd.h>

ggtk_status inf_quantize_check_paths(const char *input_path, const char *output_path,
                                             ggtk_error *err)
{
    if (strcmp(input_path, output_path) == 0)
        return ggtk_error_set(err, GGTK_ERR_PATH, GGTK_NO_OFFSET,
                              "%s: output and input are the same file", output_path);
    struct stat in, out;
    if (stat(input_path, &in) != 0)
        return ggtk_error_set(err, GGTK_ERR_IO, GGTK_NO_OFFSET,
                              "%s: %s", input_path, strerror(errno));
    if (stat(output_path, &out) == 0 && in.st_dev == out.st_dev && in.st_ino == out.st_ino)
        return ggtk_error_set(err, GGTK_ERR_PATH, GGTK_NO_OFFSET,
                              "%s: output is the input file %s (same inode)", output_path,
                              input_path);
    return GGTK_OK;
}

static ggtk_status map_part(quantize_source_part *source, const ggtk_file *header,
                            ggtk_error *err)
{
    const char *path = ggtk_path(header);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return ggtk_error_set(err, GGTK_ERR_IO, GGTK_NO_OFFSET, "%s: %s", path, strerror(errno));
    struct stat st;
    if (fstat(fd, &st) != 0 || (uint64_t)st.st_size != ggtk_file_size(header) || st.st_size == 0) {
        close(fd);
        return ggtk_error_set(err, GGTK_ERR_IO, GGTK_NO_OFFSET,
                              "%s: the file changed since its header was read", path);
    }
    void *map = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
    int map_errno = errno;
    close(fd);
    if (map == MAP_FAILED)
        return ggtk_error_set(err, GGTK_ERR_IO, GGTK_NO_OFFSET, "%s: mmap: %s", path,
                              strerror(map_errno));
    madvise(map, (size_t)st.st_size, MADV_SEQUENTIAL); /* a hint; failure changes nothing */
    source->map = map;
    source->size = (uint64_t)st.st_size;
    source->data_offset = ggtk_data_offset(header);
    source->released = 0;
    return GGTK_OK;
}

ggtk_status quantize_source_open(quantize_source *source, const ggtk_split *input,
                                 ggtk_error *err)
{
    int n_parts = ggtk_split_part_count(input);
    source->parts = calloc((size_t)n_parts, sizeof *source->parts);
    source->n_parts = source->parts ? n_parts : 0;
    if (!source->parts)
        return ggtk_error_set(err, GGTK_ERR_NOMEM, GGTK_NO_OFFSET, "out of memory");
    ggtk_status status = GGTK_OK;
    for (int p = 0; p < n_parts && status == GGTK_OK; p++)
        status = map_part(&source->parts[p], ggtk_split_part(input, p), err);
    return status;
}

const uint8_t *quantize_source_tensor(const quantize_source *source, int part,
                                      const ggtk_tensor_info *info)
{
    const quantize_source_part *mapped = &source->parts[part];
    /* The reader validated these against the file size; check again against the map we hold. */
    uint64_t start, end;
    if (__builtin_add_overflow(mapped->data_offset, info->offset, &start) ||
        __builtin_add_overflow(start, info->size, &end) || end > mapped->size)
        return NULL;
    return mapped->map + start;
}

void quantize_source_release(quantize_source *all, int part, const uint8_t *processed_end)
{
    quantize_source_part *source = &all->parts[part];
    uint64_t page = (uint64_t)sysconf(_SC_PAGESIZE);
    uint64_t end = (uint64_t)(processed_end - source->map) / page * page;
    if (end > source->released) {
        /* The map is private and never written: dropped pages would be read again from the
         * file if touched, so this only lowers resident memory. */
        madvise(source->map + source->released, end - source->released, MADV_DONTNEED);
        source->released = end;
    }
}

void quantize_source_close(quantize_source *source)
{
    for (int p = 0; p < source->n_parts; p++)
        if (source->parts[p].map)
            munmap(source->parts[p].map, source->parts[p].size);
    free(source->parts);
    memset(source, 0, sizeof *source);
}
