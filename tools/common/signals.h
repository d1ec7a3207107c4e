/* signals.h - one signal policy for every tool that writes files: a run ended by a signal (Ctrl-C,
 * kill, a closed terminal or pipe, an input file truncated while it is mapped) leaves no temporary
 * file behind and dies of that same signal, so that its parent sees how it ended.
 * Shared by the tools (tools/common is linked into each tool, not installed). */
#ifndef TOOLS_SIGNALS_H
#define TOOLS_SIGNALS_H

/* Handle SIGINT, SIGTERM, SIGHUP, SIGPIPE and SIGBUS: unlink every tracked temporary file, then
 * die of the signal with its default action. Call it first thing in main(), before any temporary
 * file can exist. A signal ignored when the tool started (nohup, a background job) stays ignored.
 * Signals are never blocked, so a tool waiting on input (a FIFO) stays killable. */
void tool_signals_install(void);

/* Between tool_signals_hold() and tool_signals_release(), SIGINT, SIGTERM, SIGHUP and SIGPIPE are
 * held back: the first one that arrives takes effect at the release. Hold them around the creation
 * of a temporary file up to its tracking, so that no signal finds it created but not yet tracked;
 * never around a wait on input. SIGBUS (a fault) is never held. Releasing twice is harmless. */
void tool_signals_hold(void);
void tool_signals_release(void);

/* Track temporary file `path` (copied) for the handler to unlink. Returns a slot for
 * tool_signals_untrack(), or -1 when the path is longer than PATH_MAX or every slot is taken. */
int tool_signals_track(const char *path);
/* The file was renamed into place or removed: forget it (slot -1 is ignored). */
void tool_signals_untrack(int slot);

#endif
