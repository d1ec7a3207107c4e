/* output_file.h - the files a tool writes itself (the SVG chart), written the safe way: to a
 * temporary file beside the target, created as open(2) with mode 0666 creates a new file (the umask
 * and default ACLs apply) and tracked by the signal handler (signals.h), then flushed, fsynced and
 * renamed into place, and the directory synced, so that the target is either the old file or the
 * whole new one. Shared by the tools (tools/common is linked into each tool, not installed). */
#ifndef TOOLS_OUTPUT_FILE_H
#define TOOLS_OUTPUT_FILE_H

#include <stdio.h>

#include <ggtk/error.h>

/* A write in progress. */
typedef struct output_file {
    FILE *stream;    /* write the contents here */
    char *path;      /* the target */
    char *temp_path; /* ".<name>.XXXXXX.tmp" beside it */
    int slot;        /* tool_signals_track() slot */
} output_file;

/* Start writing `path`. GGTK_ERR_PATH when `path` exists and is not a regular file (a device node
 * or a FIFO would be replaced by the rename), GGTK_ERR_IO when the temporary file cannot be
 * created, GGTK_ERR_NOMEM; one line naming `path` in *err (may be NULL). On failure nothing was
 * created and *file needs no abort. */
ggtk_status output_file_open(output_file *file, const char *path, ggtk_error *err);
/* Flush, fsync and close the stream, rename the temporary file onto the target and sync the
 * directory. On failure (GGTK_ERR_IO) the temporary file is removed and the target untouched. The
 * file is finished either way. */
ggtk_status output_file_commit(output_file *file, ggtk_error *err);
/* Abandon the write: close and remove the temporary file. */
void output_file_abort(output_file *file);

/* Whether a file can be created beside `path`: creates and removes an empty temporary file there,
 * which answers for read-only file systems and for root too (access(2) does not). 0, or the errno
 * of the failure. */
int output_file_probe(const char *path);

#endif
