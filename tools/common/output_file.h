/* output_file.h - the files a tool writes itself (the SVG chart): libgguf's atomic file
 * (ggtk/atomic_file.h: a temporary file beside the target, renamed into place on commit) with its
 * temporary file tracked by the signal handler (signals.h) for as long as it exists.
 * Shared by the tools (tools/common is linked into each tool, not installed). */
#ifndef TOOLS_OUTPUT_FILE_H
#define TOOLS_OUTPUT_FILE_H

#include <stdio.h>

#include <ggtk/atomic_file.h>

/* A write in progress. */
typedef struct output_file {
    FILE *stream;           /* write the contents here */
    ggtk_atomic_file *file; /* owns the stream */
    int slot;               /* tool_signals_track() slot of its temporary file */
} output_file;

/* Start writing `path`: ggtk_atomic_file_open()'s statuses and messages, in *err (may be NULL).
 * On failure nothing was created and *file needs no abort. */
ggtk_status output_file_open(output_file *file, const char *path, ggtk_error *err);
/* ggtk_atomic_file_commit(): on failure (GGTK_ERR_IO) the temporary file is removed and the target
 * untouched. The file is finished either way. */
ggtk_status output_file_commit(output_file *file, ggtk_error *err);
/* Abandon the write: close and remove the temporary file. */
void output_file_abort(output_file *file);

/* Whether a file can be created beside `path`: creates and removes an empty temporary file there,
 * which answers for read-only file systems and for root too (access(2) does not). 0, or the errno
 * of the failure. */
int output_file_probe(const char *path);

#endif
