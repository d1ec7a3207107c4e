/* output_path.h - the checks every tool makes on the files a run will write, at start-up, before
 * it loads or writes anything: so that no input is ever overwritten, no device node or FIFO is
 * replaced, and an output that cannot be written is refused before the work, not after it.
 * Shared by the tools (tools/common is linked into each tool, not installed). */
#ifndef TOOLS_OUTPUT_PATH_H
#define TOOLS_OUTPUT_PATH_H

#include <stddef.h>

#include <ggtk/error.h>

/* A file named on the command line. */
typedef struct tool_path {
    const char *option; /* how the command line names it: "-m", "--plot", "OUT" */
    const char *path;
} tool_path;

/* Check each output of a run, in order: it is not one of the inputs (neither the same path once
 * symbolic links, "." and ".." are resolved, nor the same file through a hard or symbolic link);
 * when it exists it is a regular file; it is not the same file as an earlier output; and a file
 * can be created in its directory (output_file_probe). GGTK_OK, or GGTK_ERR_PATH with one line
 * naming the option and the path in *err (may be NULL). An input that does not exist is left for
 * the code that opens it to report. */
ggtk_status output_paths_check(const tool_path *inputs, size_t n_inputs, const tool_path *outputs,
                               size_t n_outputs, ggtk_error *err);

#endif
