/* gguf_writer.c - creating and freeing a writer. The writer's parts live in gguf_writer_*.c:
 * values, metadata, tensors, header, output, stream (temporary file) and copy (from a file). */
#include "gguf_writer_internal.h"

#include <stdlib.h>

ggtk_writer *ggtk_writer_new(void)
{
    ggtk_writer *writer = calloc(1, sizeof *writer);
    if (!writer)
        return NULL;
    writer->version = 3;
    writer->alignment = GGTK_DEFAULT_ALIGNMENT;
    writer->stream.out.fd = -1;
    writer_layout(writer, 0); /* an empty header cannot overflow */
    return writer;
}

void ggtk_writer_free(ggtk_writer *writer)
{
    if (!writer)
        return;
    ggtk_writer_abort(writer);
    writer_kvs_free(writer);
    writer_tensors_free(writer);
    free(writer);
}
