/* source.h - the mapped input of a run (source.c); not public. */
#ifndef INF_QUANTIZE_SOURCE_H
#define INF_QUANTIZE_SOURCE_H

#include <ggtk/inf_quantize_file.h>

/* The input file mapped read-only. */
typedef struct quantize_source {
    uint8_t *map;         /* whole file */
    uint64_t size;        /* bytes mapped */
    uint64_t data_offset; /* start of the data section in the file */
    uint64_t released;    /* bytes from the start already handed back to the kernel */
} quantize_source;

/* Map the file `header` was read from. Fails with INPUT when it cannot be opened or its size
 * differs from what the header promised. Close with quantize_source_close(). */
ggtk_status quantize_source_open(quantize_source *source, const ggtk_file *header,
                                         ggtk_error *err);

/* Start of a tensor's data in the map, or NULL when it lies outside the file. */
const uint8_t *quantize_source_tensor(const quantize_source *source, const ggtk_tensor_info *info);

/* Drop the mapped pages before `processed_end` from resident memory (they stay in the page
 * cache); whole pages only. */
void quantize_source_release(quantize_source *source, const uint8_t *processed_end);

void quantize_source_close(quantize_source *source);

#endif
