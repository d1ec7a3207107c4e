/* source.h - the mapped input of a run (source.c); not public. */
#ifndef INF_QUANTIZE_SOURCE_H
#define INF_QUANTIZE_SOURCE_H

#include <ggtk/inf_quantize_file.h>

/* One input file mapped read-only. */
typedef struct quantize_source_part {
    uint8_t *map;         /* whole file */
    uint64_t size;        /* bytes mapped */
    uint64_t data_offset; /* start of the data section in the file */
    uint64_t released;    /* bytes from the start already handed back to the kernel */
} quantize_source_part;

/* The input: one file, or each part of a split model, mapped separately. */
typedef struct quantize_source {
    quantize_source_part *parts;
    int n_parts;
} quantize_source;

/* Map every file the headers of `input` were read from. Fails with GGTK_ERR_IO when one cannot be
 * opened or its size differs from what its header promised. Close with quantize_source_close()
 * (also after a failure). */
ggtk_status quantize_source_open(quantize_source *source, const ggtk_split *input,
                                 ggtk_error *err);

/* Start of the data of a tensor of part `part` in its map, or NULL when it lies outside the
 * file. */
const uint8_t *quantize_source_tensor(const quantize_source *source, int part,
                                      const ggtk_tensor_info *info);

/* Drop the mapped pages of part `part` before `processed_end` from resident memory (they stay in
 * the page cache); whole pages only. */
void quantize_source_release(quantize_source *source, int part, const uint8_t *processed_end);

void quantize_source_close(quantize_source *source);

#endif
