/* output_file.c - see output_file.h. Signals are held from the creation of a temporary file to its
 * tracking, so that none finds it created but untracked. */
#include "output_file.h"
#include "signals.h"

#include <errno.h>

int output_file_probe(const char *path)
{
    /* Held: the probe exists for a moment only, and is never tracked. */
    tool_signals_hold();
    ggtk_atomic_file *probe = ggtk_atomic_file_open(path, NULL);
    int code = probe ? 0 : errno;
    ggtk_atomic_file_close(probe);
    tool_signals_release();
    return code;
}

ggtk_status output_file_open(output_file *file, const char *path, ggtk_error *err)
{
    ggtk_error local;
    tool_signals_hold();
    *file = (output_file){.file = ggtk_atomic_file_open(path, err ? err : &local), .slot = -1};
    if (file->file) {
        file->stream = ggtk_atomic_file_stream(file->file);
        file->slot = tool_signals_track(ggtk_atomic_file_temp_path(file->file));
    }
    tool_signals_release();
    if (!file->file)
        return err ? err->status : local.status;
    return GGTK_OK;
}

static void release(output_file *file)
{
    ggtk_atomic_file_close(file->file);
    tool_signals_untrack(file->slot);
    *file = (output_file){.slot = -1};
}

void output_file_abort(output_file *file) { release(file); }

ggtk_status output_file_commit(output_file *file, ggtk_error *err)
{
    ggtk_status status = ggtk_atomic_file_commit(file->file, err);
    release(file);
    return status;
}
