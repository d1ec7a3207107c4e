/* tool_stdout.c - see tool_stdout.h. */
#include "tool_stdout.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

bool tool_stdout_close(const char *prefix)
{
    /* fflush retries what an earlier failed write left in the buffer, so its errno names the
     * cause; EIO stands in for a failure that left nothing to retry. */
    int code = fflush(stdout) != 0 ? errno : ferror(stdout) ? EIO : 0;
    /* EBADF from close: stdout was closed (>&-) and nothing was written to it. */
    if (fclose(stdout) != 0 && code == 0 && errno != EBADF)
        code = errno;
    if (code == 0)
        return true;
    fprintf(stderr, "%sstdout: write failed: %s\n", prefix, strerror(code));
    return false;
}
