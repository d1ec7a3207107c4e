/* signals.c - Ctrl-C or kill (SIGINT/SIGTERM) during a run must not leave the temporary output
 * behind. The handler only calls async-signal-safe functions (unlink, sigaction, raise) on a path
 * copied in advance. The signals stay blocked from start-up until that path is known, so none can
 * arrive between the creation of the temporary file and the moment the handler can see it. */
#include "quantize_tool.h"

#include <signal.h>
#include <string.h>
#include <unistd.h>

static char temp_path[4096];
static volatile sig_atomic_t have_temp_path;

static void remove_temp_and_die(int sig)
{
    if (have_temp_path)
        unlink(temp_path);
    /* Die of the same signal so the parent sees how we ended. */
    struct sigaction dfl;
    memset(&dfl, 0, sizeof dfl);
    dfl.sa_handler = SIG_DFL;
    sigaction(sig, &dfl, NULL);
    raise(sig);
}

static void set_blocked(bool blocked)
{
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGINT);
    sigaddset(&set, SIGTERM);
    sigprocmask(blocked ? SIG_BLOCK : SIG_UNBLOCK, &set, NULL);
}

void tool_signals_install(void)
{
    set_blocked(true);
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = remove_temp_and_die;
    sigemptyset(&sa.sa_mask);
    sigaddset(&sa.sa_mask, SIGINT);
    sigaddset(&sa.sa_mask, SIGTERM);
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
}

void tool_signals_on_temp_file(const char *path, void *user)
{
    (void)user;
    size_t n = strlen(path);
    if (n < sizeof temp_path) {
        memcpy(temp_path, path, n + 1);
        have_temp_path = 1;
    }
    set_blocked(false);
}

void tool_signals_done(void)
{
    /* The temporary file is gone (renamed or removed) once the run returned. */
    have_temp_path = 0;
    set_blocked(false);
}
