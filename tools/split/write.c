/* write.c - writing the planned files as one set: each through its own temporary file (tracked by
 * the signal handler), tensor data copied from the input's maps with the input pages handed back
 * after each tensor, so memory stays bounded whatever the model's size; the files are renamed
 * into place only once all of them were written. */
#include "signals.h"
#include "split_tool.h"

#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

/* Pieces handed to the writer; the input pages of each are handed back right after it, so this
 * bounds the resident input (a tensor may be larger than memory). */
enum { COPY_PIECE_BYTES = 8 << 20 };

/* The written, not yet renamed files. */
typedef struct pending_set {
    ggtk_atomic_file **files;
    int *slots;
    int n;
} pending_set;

/* Let the kernel drop the input pages of a copied tensor (whole pages inside it only): the map is
 * private and read-only, so a page touched again is read back from the file. */
static void release_pages(const void *data, uint64_t size)
{
    uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE);
    uintptr_t start = ((uintptr_t)data + page - 1) / page * page;
    uintptr_t end = ((uintptr_t)data + size) / page * page;
    if (end > start)
        madvise((void *)start, end - start, MADV_DONTNEED);
}

static ggtk_status copy_tensor(ggtk_writer *writer, const ggtk_tensor_info *from, ggtk_error *err)
{
    const unsigned char *data = from->data;
    ggtk_status status = GGTK_OK;
    for (uint64_t done = 0; done < from->size && status == GGTK_OK; done += COPY_PIECE_BYTES) {
        uint64_t left = from->size - done;
        size_t piece = left < COPY_PIECE_BYTES ? (size_t)left : COPY_PIECE_BYTES;
        status = ggtk_writer_write_data(writer, data + done, piece, err);
        release_pages(data + done, piece);
    }
    return status;
}

/* Write file `index` of the plan into a temporary file, added to `pending` when complete. */
static ggtk_status write_file(const split_plan *plan, int index, const ggtk_split *input,
                              pending_set *pending, ggtk_error *err)
{
    ggtk_writer *writer = plan->writers[index];
    /* Held from the temporary file's creation to its tracking. */
    tool_signals_hold();
    ggtk_status status = ggtk_writer_begin(writer, plan->paths[index], err);
    int slot = status == GGTK_OK ? tool_signals_track(ggtk_writer_temp_path(writer)) : -1;
    tool_signals_release();
    for (int64_t i = 0; i < ggtk_writer_tensor_count(writer) && status == GGTK_OK; i++) {
        const ggtk_tensor_info *tensor = ggtk_writer_tensor(writer, i);
        const ggtk_tensor_info *from =
            ggtk_split_tensor(input, ggtk_split_find_tensor(input, tensor->name), NULL);
        status = copy_tensor(writer, from, err);
    }
    ggtk_atomic_file *file = status == GGTK_OK ? ggtk_writer_finish_uncommitted(writer, err) : NULL;
    if (!file) {
        ggtk_writer_abort(writer);
        tool_signals_untrack(slot);
        return status == GGTK_OK ? (err ? err->status : GGTK_ERR_IO) : status;
    }
    pending->files[pending->n] = file;
    pending->slots[pending->n++] = slot;
    return GGTK_OK;
}

/* Rename every file into place. When one rename fails the files already renamed are removed
 * too: a partial set would only be refused when opened. */
static ggtk_status commit_all(pending_set *pending, ggtk_error *err)
{
    int done = 0;
    ggtk_status status = GGTK_OK;
    for (; done < pending->n && status == GGTK_OK; done++)
        status = ggtk_atomic_file_commit(pending->files[done], err);
    for (int i = 0; status != GGTK_OK && i < done - 1; i++)
        unlink(ggtk_atomic_file_path(pending->files[i]));
    return status;
}

ggtk_status split_write_set(const split_plan *plan, const ggtk_split *input, ggtk_error *err)
{
    pending_set pending = {calloc((size_t)plan->n_files, sizeof *pending.files),
                           calloc((size_t)plan->n_files, sizeof *pending.slots), 0};
    ggtk_status status = GGTK_OK;
    if (!pending.files || !pending.slots)
        status = ggtk_error_set(err, GGTK_ERR_NOMEM, GGTK_NO_OFFSET, "out of memory");
    for (int p = 0; p < plan->n_files && status == GGTK_OK; p++)
        status = write_file(plan, p, input, &pending, err);
    if (status == GGTK_OK)
        status = commit_all(&pending, err);
    for (int i = 0; i < pending.n; i++) {
        ggtk_atomic_file_close(pending.files[i]); /* removes a file not renamed */
        tool_signals_untrack(pending.slots[i]);
    }
    free(pending.files);
    free(pending.slots);
    return status;
}
