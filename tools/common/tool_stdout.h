/* tool_stdout.h - a tool's results on stdout are its output too: a full disk or a failing pipe at
 * any point of the run must end it with an error, not exit 0. Shared by the tools (tools/common is
 * linked into each tool, not installed). */
#ifndef TOOLS_TOOL_STDOUT_H
#define TOOLS_TOOL_STDOUT_H

#include <stdbool.h>

/* Flush and close stdout at the end of a run, catching a failure of any earlier write too. True,
 * or false after one line "<prefix>stdout: write failed: REASON" on stderr, where `prefix` is how
 * the tool starts its error lines ("gguf-eval: error: "). stderr is not checked: it carries only
 * diagnostics, and a failure there could not be reported anyway. */
bool tool_stdout_close(const char *prefix);

#endif
