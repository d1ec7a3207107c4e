/* test_emu_support.cpp - the helpers of emu_test.h (no tests). */
#include "emu_test.h"

#include <csignal>
#include <sys/wait.h>
#include <unistd.h>

std::string run_in_child(void (*body)(), bool *aborted)
{
    int fds[2];
    *aborted = false;
    if (pipe(fds) != 0)
        return "pipe failed";
    pid_t pid = fork();
    if (pid == 0) {
        close(fds[0]);
        dup2(fds[1], 2);
        body();
        _exit(0);
    }
    close(fds[1]);
    std::string text;
    char buf[512];
    ssize_t got;
    while ((got = read(fds[0], buf, sizeof buf)) > 0)
        text.append(buf, static_cast<size_t>(got));
    close(fds[0]);
    int status = 0;
    waitpid(pid, &status, 0);
    *aborted = WIFSIGNALED(status) && WTERMSIG(status) == SIGABRT;
    return text;
}
