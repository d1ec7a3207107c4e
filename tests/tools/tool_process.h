/* tool_process.h - a built tool run as a child process, for the tests of hostile runs (signals,
 * faults, FIFOs, umasks): a known signal state, a chosen stdout and umask, waits on observable
 * states with a long deadline as a backstop only, and the temporary files a run leaves. */
#ifndef TOOL_PROCESS_H
#define TOOL_PROCESS_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

/* How to start a tool; {0} gives stdout on /dev/null, the test's umask, no signal ignored. */
typedef struct tool_start_options {
    int stdout_fd;     /* 0: /dev/null */
    bool set_umask;
    mode_t umask;
    int ignored_signal; /* started with this signal ignored (as nohup does SIGHUP), 0 for none */
} tool_start_options;

/* Start the built tool `tool` ("gguf-eval") with the NULL-terminated arguments `args`; stdin and
 * stderr on /dev/null, every signal at its default action and unblocked, OMP_WAIT_POLICY=passive
 * (gguf-quantize would re-exec itself to set it). The pid, or -1. */
pid_t tool_start(const char *tool, const char *const *args, const tool_start_options *options);

/* Wait at most `seconds` for `pid` to end: its wait status, or -1 after killing it (SIGKILL) at
 * the deadline. */
int tool_wait(pid_t pid, double seconds);
/* tool_wait() that also gives the process's peak resident memory in KiB (ru_maxrss) when it
 * ended in time. */
int tool_wait_usage(pid_t pid, double seconds, long *max_rss_kib);

/* Size of the first entry of `dir` whose name holds ".tmp" (the tools' temporary files), its
 * path copied to `temp`; -1 when there is none. */
long long tool_temp_file(const char *dir, char *temp, size_t temp_size);

/* Poll until `dir` holds a temporary file of at least `min_bytes` (true), or `pid` ended (false,
 * its wait status in *status) or `seconds` passed (false, *status -1). */
bool tool_wait_for_temp(pid_t pid, const char *dir, long long min_bytes, double seconds,
                        int *status);

/* True when `status` says the process died of signal `sig`. */
bool tool_died_of(int status, int sig);

#endif
