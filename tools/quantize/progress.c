/* progress.c - the progress bar of gguf-quantize on stderr: tensors done, throughput of input
 * data and the time left, redrawn at most ten times a second, only on a terminal. */
#include "quantize_tool.h"

#include <stdio.h>
#include <time.h>
#include <unistd.h>

enum { BAR_WIDTH = 30 };

double tool_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

void tool_progress_init(tool_progress *progress, bool quiet)
{
    progress->enabled = !quiet && isatty(STDERR_FILENO);
    progress->start = tool_now();
    progress->last_draw = 0.0;
}

void tool_progress_update(const inf_quantize_progress *p, void *user)
{
    tool_progress *progress = user;
    double now = tool_now();
    if (!progress->enabled || now - progress->last_draw < 0.1)
        return;
    progress->last_draw = now;
    double fraction = p->bytes_total ? (double)p->bytes_done / (double)p->bytes_total : 1.0;
    double elapsed = now - progress->start;
    double rate = elapsed > 0 ? (double)p->bytes_done / elapsed : 0.0;
    double eta = rate > 0 ? (double)(p->bytes_total - p->bytes_done) / rate : 0.0;
    char bar[BAR_WIDTH + 1];
    int filled = (int)(fraction * BAR_WIDTH);
    for (int i = 0; i < BAR_WIDTH; i++)
        bar[i] = i < filled ? '#' : '.';
    bar[BAR_WIDTH] = '\0';
    fprintf(stderr, "\r[%s] %3.0f%% %lld/%lld tensors %7.1f MB/s ETA %4.0fs \033[K", bar,
            fraction * 100.0, (long long)p->tensor_index + 1, (long long)p->n_tensors,
            rate / 1e6, eta);
    fflush(stderr);
}

void tool_progress_end(tool_progress *progress)
{
    if (progress->enabled && progress->last_draw > 0.0)
        fprintf(stderr, "\r\033[K");
}
