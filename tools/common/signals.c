/* signals.c - see signals.h. The handler may run on any thread (the OpenMP workers too), so it
 * shares state with the main thread through lock-free atomics only, and calls only
 * async-signal-safe functions (unlink, sigaction, sigprocmask, raise, _exit). Holding is a flag,
 * not a blocked mask: a mask is per thread, and the workers would still take the signal. */
#include "signals.h"

#include <limits.h>
#include <signal.h>
#include <stdatomic.h>
#include <string.h>
#include <unistd.h>

_Static_assert(ATOMIC_INT_LOCK_FREE == 2, "the handler needs lock-free atomic ints");

/* The signals handled; the last one is a fault, which cannot wait for a release. */
static const int HANDLED[] = {SIGINT, SIGTERM, SIGHUP, SIGPIPE, SIGBUS};
#define N_HANDLED (sizeof HANDLED / sizeof HANDLED[0])

/* Most tools write one or two files at a time; gguf-split keeps every part of a set as a
 * temporary file until all were written (split_tool.h's SPLIT_MAX_FILES). The paths live in
 * zero-filled static memory, which takes no RAM until a slot is used. */
enum { N_SLOTS = 1024 };
static char slot_path[N_SLOTS][PATH_MAX];
static atomic_int slot_used[N_SLOTS];

static atomic_int holding;
static atomic_int pending; /* a held signal, 0 for none */

/* Remove the tracked files and die of `sig` (the default action of every handled signal ends the
 * process). */
static void die(int sig)
{
    for (int i = 0; i < N_SLOTS; i++)
        if (atomic_load(&slot_used[i]))
            unlink(slot_path[i]);
    struct sigaction dfl;
    memset(&dfl, 0, sizeof dfl);
    dfl.sa_handler = SIG_DFL;
    sigemptyset(&dfl.sa_mask);
    sigaction(sig, &dfl, NULL);
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, sig);
    sigprocmask(SIG_UNBLOCK, &set, NULL);
    raise(sig);
    _exit(128 + sig);
}

/* pending is stored before holding is read, and release() clears holding before it reads pending:
 * with sequentially consistent atomics, at least one of the two sees the other and dies. */
static void on_signal(int sig)
{
    if (sig != SIGBUS) {
        atomic_store(&pending, sig);
        if (atomic_load(&holding))
            return;
    }
    die(sig);
}

void tool_signals_install(void)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    /* Restarted calls: a held signal must not turn a write in progress into an error. */
    sa.sa_flags = SA_RESTART;
    sigemptyset(&sa.sa_mask);
    for (size_t i = 0; i < N_HANDLED; i++)
        sigaddset(&sa.sa_mask, HANDLED[i]);
    for (size_t i = 0; i < N_HANDLED; i++) {
        struct sigaction old;
        if (sigaction(HANDLED[i], NULL, &old) == 0 && old.sa_handler != SIG_IGN)
            sigaction(HANDLED[i], &sa, NULL);
    }
}

void tool_signals_hold(void) { atomic_store(&holding, 1); }

void tool_signals_release(void)
{
    atomic_store(&holding, 0);
    int sig = atomic_load(&pending);
    if (sig)
        die(sig);
}

int tool_signals_track(const char *path)
{
    size_t len = strlen(path);
    if (len >= PATH_MAX)
        return -1;
    for (int i = 0; i < N_SLOTS; i++) {
        if (atomic_load(&slot_used[i]))
            continue;
        memcpy(slot_path[i], path, len + 1);
        atomic_store(&slot_used[i], 1); /* publishes the path to the handler */
        return i;
    }
    return -1;
}

void tool_signals_untrack(int slot)
{
    if (slot >= 0 && slot < N_SLOTS)
        atomic_store(&slot_used[slot], 0);
}
