/* tool_process.c - see tool_process.h. */
#include "tool_process.h"
#include "test.h"

#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

enum { MAX_ARGS = 32 };

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static void pause_1ms(void) { nanosleep(&(struct timespec){0, 1000000}, NULL); }

/* In the child: the signal state a tool gets from a plain shell, whatever the runner set. */
static void reset_signals(int ignored)
{
    for (int sig = 1; sig < NSIG; sig++)
        if (sig != SIGKILL && sig != SIGSTOP)
            signal(sig, sig == ignored ? SIG_IGN : SIG_DFL);
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, NULL);
}

pid_t tool_start(const char *tool, const char *const *args, const tool_start_options *options)
{
    char *argv[MAX_ARGS + 2];
    int n = 0;
    argv[n++] = (char *)tool;
    while (args[n - 1] && n <= MAX_ARGS) {
        argv[n] = (char *)args[n - 1];
        n++;
    }
    argv[n] = NULL;
    const char *path = test_tool(tool);
    fflush(NULL);
    pid_t pid = fork();
    if (pid != 0)
        return pid;
    int null = open("/dev/null", O_RDWR);
    dup2(null, STDIN_FILENO);
    dup2(options->stdout_fd ? options->stdout_fd : null, STDOUT_FILENO);
    dup2(null, STDERR_FILENO);
    reset_signals(options->ignored_signal);
    if (options->set_umask)
        umask(options->umask);
    setenv("OMP_WAIT_POLICY", "passive", 1);
    execv(path, argv);
    _exit(127);
}

int tool_wait(pid_t pid, double seconds) { return tool_wait_usage(pid, seconds, NULL); }

int tool_wait_usage(pid_t pid, double seconds, long *max_rss_kib)
{
    double deadline = now() + seconds;
    int status;
    struct rusage usage;
    while (now() < deadline) {
        if (wait4(pid, &status, WNOHANG, &usage) == pid) {
            if (max_rss_kib)
                *max_rss_kib = usage.ru_maxrss;
            return status;
        }
        pause_1ms();
    }
    kill(pid, SIGKILL);
    waitpid(pid, &status, 0);
    return -1;
}

long long tool_temp_file(const char *dir, char *temp, size_t temp_size)
{
    DIR *d = opendir(dir);
    long long found = -1;
    struct dirent *e;
    while (d && found < 0 && (e = readdir(d)) != NULL) {
        struct stat st;
        snprintf(temp, temp_size, "%s/%s", dir, e->d_name);
        if (strstr(e->d_name, ".tmp") && stat(temp, &st) == 0)
            found = (long long)st.st_size;
    }
    if (d)
        closedir(d);
    return found;
}

bool tool_wait_for_temp(pid_t pid, const char *dir, long long min_bytes, double seconds,
                        int *status)
{
    double deadline = now() + seconds;
    char temp[1024];
    while (now() < deadline) {
        if (tool_temp_file(dir, temp, sizeof temp) >= min_bytes)
            return true;
        if (waitpid(pid, status, WNOHANG) == pid)
            return false;
        pause_1ms();
    }
    *status = -1;
    return false;
}

bool tool_died_of(int status, int sig)
{
    return status != -1 && WIFSIGNALED(status) && WTERMSIG(status) == sig;
}
