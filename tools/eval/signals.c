/* signals.c - an interrupted gguf-eval (SIGINT, SIGTERM, SIGHUP) removes the base file it was
 * writing, so no partial output stays behind, then dies of the same signal. */
#include <signal.h>
#include <string.h>
#include <unistd.h>

#include "eval_tool.h"

static const char *volatile temp_path;

static void on_signal(int sig)
{
    const char *path = temp_path;
    if (path)
        unlink(path);
    signal(sig, SIG_DFL);
    raise(sig);
}

void eval_signals_install(const char *path)
{
    temp_path = path;
    if (!path)
        return;
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGHUP, &sa, NULL);
}

void eval_signals_done(void) { temp_path = NULL; }
