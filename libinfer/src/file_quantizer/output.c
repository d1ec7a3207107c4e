/* output.c - see output.h. A split output begins each part when its first tensor's data arrives
 * and ends it (without renaming) when the next part begins, so only one part's buffer is alive;
 * renaming waits until every part was written. */
#include "output.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

ggtk_status quantize_output_open(quantize_output *out, inf_quantize_plan *plan,
                                 const char *output_path, const inf_quantize_callbacks *callbacks,
                                 ggtk_error *err)
{
    memset(out, 0, sizeof *out);
    out->current = -1;
    out->callbacks = callbacks;
    bool split = plan->n_output_parts > 0;
    out->n_files = split ? plan->n_output_parts : 1;
    out->writers = split ? plan->output_parts : &plan->writer;
    out->paths = calloc((size_t)out->n_files, sizeof *out->paths);
    out->finished = calloc((size_t)out->n_files, sizeof *out->finished);
    if (!out->paths || !out->finished)
        return ggtk_error_set(err, GGTK_ERR_NOMEM, GGTK_NO_OFFSET, "out of memory");
    for (int f = 0; f < out->n_files; f++) {
        size_t length = split ? ggtk_split_part_path(NULL, 0, output_path, f, out->n_files)
                              : strlen(output_path);
        if (!(out->paths[f] = malloc(length + 1)))
            return ggtk_error_set(err, GGTK_ERR_NOMEM, GGTK_NO_OFFSET, "out of memory");
        if (split)
            ggtk_split_part_path(out->paths[f], length + 1, output_path, f, out->n_files);
        else
            memcpy(out->paths[f], output_path, length + 1);
    }
    return GGTK_OK;
}

/* End the current file (if any) and begin the next one. */
static ggtk_status next_file(quantize_output *out, ggtk_error *err)
{
    if (out->current >= 0) {
        ggtk_writer *writer = out->writers[out->current];
        out->finished[out->current] = ggtk_writer_finish_uncommitted(writer, err);
        if (!out->finished[out->current])
            return err ? err->status : GGTK_ERR_IO;
    }
    if (++out->current == out->n_files)
        return GGTK_OK;
    ggtk_writer *writer = out->writers[out->current];
    if (out->callbacks && out->callbacks->before_temp_file)
        out->callbacks->before_temp_file(out->callbacks->user);
    ggtk_status status = ggtk_writer_begin(writer, out->paths[out->current], err);
    if (status == GGTK_OK && out->callbacks && out->callbacks->on_temp_file)
        out->callbacks->on_temp_file(ggtk_writer_temp_path(writer), out->callbacks->user);
    return status;
}

ggtk_status quantize_output_write(quantize_output *out, int file, const void *data, size_t size,
                                  ggtk_error *err)
{
    ggtk_status status = GGTK_OK;
    while (out->current < file && status == GGTK_OK)
        status = next_file(out, err);
    return status == GGTK_OK ? ggtk_writer_write_data(out->writers[file], data, size, err)
                             : status;
}

ggtk_status quantize_output_finish(quantize_output *out, ggtk_error *err)
{
    ggtk_status status = GGTK_OK;
    while (out->current < out->n_files && status == GGTK_OK)
        status = next_file(out, err);
    int renamed = 0;
    for (; renamed < out->n_files && status == GGTK_OK; renamed++)
        status = ggtk_atomic_file_commit(out->finished[renamed], err);
    for (int f = 0; status != GGTK_OK && f < renamed - 1; f++)
        unlink(out->paths[f]);
    return status;
}

void quantize_output_close(quantize_output *out)
{
    for (int f = 0; f < out->n_files; f++) {
        if (out->finished)
            ggtk_atomic_file_close(out->finished[f]); /* removes a file not renamed */
        if (out->paths)
            free(out->paths[f]);
    }
    if (out->current >= 0 && out->current < out->n_files)
        ggtk_writer_abort(out->writers[out->current]);
    free(out->paths);
    free(out->finished);
    memset(out, 0, sizeof *out);
}
