/* emu_scheduler.cpp - runs a launch: blocks one after another, each block's threads as fibers on
 * the calling OS thread.
 *
 * A thread runs until it reaches a barrier (__syncthreads, or a warp exchange behind every
 * shuffle), then the next runnable thread of a FIFO run queue resumes. The last thread to arrive
 * at a barrier puts the others back on the queue and goes on, so each barrier costs one switch
 * per thread. Fibers are persistent: when a thread's kernel returns, its fiber parks, and the
 * next block (or launch) resumes it for a new thread, so a launch never builds contexts.
 *
 * Misuse that would hang or corrupt a real block is reported (one line naming the kernel, then
 * abort): threads waiting at different __syncthreads, a thread leaving while others still have
 * to meet it at a barrier, and waits that can never complete. One launch runs at a time (a
 * mutex), which is also what makes `static` shared arrays private to the running block. */
#include "emu_fiber.h"
#include "emu_launch.h"

#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <vector>

uint3 threadIdx;
uint3 blockIdx;
dim3 blockDim;
dim3 gridDim;

namespace emu {

unsigned int thread_rank;
unsigned int warp_lanes;
unsigned char *dynamic_shared;

namespace {

constexpr unsigned int max_threads = 1024;
constexpr unsigned int max_warps = max_threads / 32;
constexpr size_t default_dynamic_shared = 48 * 1024;

enum thread_state { RUNNABLE, AT_SYNCTHREADS, AT_WARP, EXITED };

struct thread_slot {
    fiber_context ctx;
    uint3 idx;
    thread_state state;
};

struct warp_slot {
    unsigned int lanes;   /* threads of the block in this warp (the last may be partial) */
    unsigned int arrived; /* lanes waiting at the current exchange */
    unsigned int exited;
    unsigned int parity;  /* which slot array the current exchange fills */
    uint64_t slots[2][32];
};

/* The state of the block being run. Slots of fibers never created have ctx.sp == nullptr. */
struct block_run {
    thread_slot threads[max_threads];
    warp_slot warps[max_warps];
    unsigned int n_threads;
    unsigned int exited;
    unsigned int current;
    /* __syncthreads: how many wait, and where the first of them called it. */
    unsigned int barrier_arrived;
    const char *barrier_file;
    int barrier_line;
    /* Run queue: a ring of thread ranks; each runnable, not running thread is in it once. */
    unsigned int queue[max_threads];
    unsigned int queue_head;
    unsigned int queue_count;
    fiber_context scheduler;
    const launch_desc *launch;
    unsigned int fibers_built;
};

block_run run;
std::mutex launch_mutex;
std::vector<unsigned char> dynamic_shared_buffer;
/* Dynamic shared memory limits set with cudaFuncSetAttribute, by kernel. */
std::vector<std::pair<const void *, int>> kernel_shared_limits;

[[noreturn]] __attribute__((format(printf, 1, 2))) void fail(const char *fmt, ...)
{
    const launch_desc *l = run.launch;
    uint3 t = run.threads[run.current].idx;
    fprintf(stderr, "cuda emulator: kernel %s, block (%u,%u,%u), thread (%u,%u,%u): ", l->kernel_name,
            blockIdx.x, blockIdx.y, blockIdx.z, t.x, t.y, t.z);
    va_list args;
    va_start(args, fmt);
    vfprintf(stderr, fmt, args);
    va_end(args);
    fputc('\n', stderr);
    abort();
}

void queue_push(unsigned int rank)
{
    run.queue[(run.queue_head + run.queue_count) % max_threads] = rank;
    run.queue_count++;
}

unsigned int queue_pop()
{
    unsigned int rank = run.queue[run.queue_head];
    run.queue_head = (run.queue_head + 1) % max_threads;
    run.queue_count--;
    return rank;
}

void set_current(unsigned int rank)
{
    run.current = rank;
    threadIdx = run.threads[rank].idx;
    thread_rank = rank;
    warp_lanes = run.warps[rank / 32].lanes;
}

/* No thread can run although some have not exited: say where they wait. */
[[noreturn]] void fail_stuck()
{
    unsigned int at_sync = 0, at_warp = 0;
    for (unsigned int r = 0; r < run.n_threads; r++) {
        at_sync += run.threads[r].state == AT_SYNCTHREADS;
        at_warp += run.threads[r].state == AT_WARP;
    }
    if (at_sync > 0)
        fail("waits can never complete: %u thread(s) at __syncthreads (%s:%d), %u at a warp shuffle",
             at_sync, run.barrier_file, run.barrier_line, at_warp);
    fail("waits can never complete: %u thread(s) at a warp shuffle", at_warp);
}

/* The running thread waits: resume the next runnable one. */
void wait_here()
{
    if (run.queue_count == 0)
        fail_stuck();
    unsigned int self = run.current;
    unsigned int next = queue_pop();
    set_current(next);
    context_switch(&run.threads[self].ctx, &run.threads[next].ctx);
}

/* A fiber's life: run the kernel as the thread it was given, park, repeat. */
void fiber_main()
{
    for (;;) {
        run.launch->entry(run.launch->params);
        unsigned int self = run.current;
        warp_slot &warp = run.warps[self / 32];
        run.threads[self].state = EXITED;
        run.exited++;
        warp.exited++;
        if (run.barrier_arrived > 0)
            fail("returned while %u thread(s) wait for it at __syncthreads (%s:%d)", run.barrier_arrived,
                 run.barrier_file, run.barrier_line);
        if (warp.arrived > 0)
            fail("returned while %u lane(s) of its warp wait for it at a warp shuffle", warp.arrived);
        if (run.queue_count == 0) {
            if (run.exited != run.n_threads)
                fail_stuck();
            context_switch(&run.threads[self].ctx, &run.scheduler);
        } else {
            unsigned int next = queue_pop();
            set_current(next);
            context_switch(&run.threads[self].ctx, &run.threads[next].ctx);
        }
    }
}

bool build_fibers(unsigned int n)
{
    for (; run.fibers_built < n; run.fibers_built++) {
        void *stack = fiber_stack_alloc();
        if (!stack)
            return false;
        context_init(&run.threads[run.fibers_built].ctx, stack, fiber_stack_size(), fiber_main);
    }
    return true;
}

void run_block()
{
    run.exited = 0;
    run.barrier_arrived = 0;
    run.barrier_file = nullptr;
    run.queue_head = 0;
    run.queue_count = 0;
    for (unsigned int r = 0; r < run.n_threads; r++) {
        run.threads[r].state = RUNNABLE;
        if (r > 0)
            queue_push(r);
    }
    for (unsigned int w = 0; w * 32 < run.n_threads; w++) {
        run.warps[w].arrived = 0;
        run.warps[w].exited = 0;
    }
    set_current(0);
    context_switch(&run.scheduler, &run.threads[0].ctx);
}

void setup_block_shape(dim3 block)
{
    run.n_threads = block.x * block.y * block.z;
    for (unsigned int r = 0; r < run.n_threads; r++)
        run.threads[r].idx = uint3{r % block.x, r / block.x % block.y, r / (block.x * block.y)};
    for (unsigned int w = 0; w * 32 < run.n_threads; w++) {
        unsigned int left = run.n_threads - w * 32;
        run.warps[w].lanes = left < 32 ? left : 32;
        run.warps[w].parity = 0;
    }
}

size_t shared_limit(const void *kernel)
{
    for (const auto &entry : kernel_shared_limits)
        if (entry.first == kernel)
            return static_cast<size_t>(entry.second);
    return default_dynamic_shared;
}

/* The error a real launch with this configuration would give, or cudaSuccess. */
cudaError_t check_config(const launch_desc &d)
{
    cudaError_t status = runtime_status();
    if (status != cudaSuccess)
        return status;
    if (!stream_valid(d.stream))
        return cudaErrorInvalidResourceHandle;
    const cudaDeviceProp &prop = device_properties();
    const dim3 &g = d.grid, &b = d.block;
    if (g.x == 0 || g.y == 0 || g.z == 0 || b.x == 0 || b.y == 0 || b.z == 0)
        return cudaErrorInvalidConfiguration;
    if (b.x > 1024 || b.y > 1024 || b.z > 64 || static_cast<uint64_t>(b.x) * b.y * b.z > max_threads)
        return cudaErrorInvalidConfiguration;
    if (g.x > 2147483647u || g.y > 65535 || g.z > 65535)
        return cudaErrorInvalidConfiguration;
    if (d.shared_bytes > prop.sharedMemPerBlockOptin || d.shared_bytes > shared_limit(d.kernel))
        return cudaErrorInvalidValue;
    return cudaSuccess;
}

} // namespace

void syncthreads(const char *file, int line)
{
    thread_slot &self = run.threads[run.current];
    if (run.exited > 0)
        fail("reached __syncthreads (%s:%d) after %u thread(s) of its block returned", file, line,
             run.exited);
    if (run.barrier_arrived == 0) {
        run.barrier_file = file;
        run.barrier_line = line;
    } else if (line != run.barrier_line || strcmp(file, run.barrier_file) != 0) {
        fail("reached __syncthreads at %s:%d while others wait at %s:%d", file, line, run.barrier_file,
             run.barrier_line);
    }
    if (++run.barrier_arrived == run.n_threads) {
        run.barrier_arrived = 0;
        for (unsigned int r = 0; r < run.n_threads; r++) {
            if (r != run.current) {
                run.threads[r].state = RUNNABLE;
                queue_push(r);
            }
        }
        return;
    }
    self.state = AT_SYNCTHREADS;
    wait_here();
}

const uint64_t *warp_exchange(uint64_t bits)
{
    unsigned int rank = run.current;
    warp_slot &warp = run.warps[rank / 32];
    if (warp.exited > 0)
        fail("reached a warp shuffle after %u lane(s) of its warp returned", warp.exited);
    uint64_t *slots = warp.slots[warp.parity];
    slots[rank % 32] = bits;
    if (++warp.arrived == warp.lanes) {
        warp.arrived = 0;
        warp.parity ^= 1;
        unsigned int first = rank & ~31u;
        for (unsigned int r = first; r < first + warp.lanes; r++) {
            if (r != rank) {
                run.threads[r].state = RUNNABLE;
                queue_push(r);
            }
        }
        return slots;
    }
    run.threads[rank].state = AT_WARP;
    wait_here();
    return slots;
}

void launch(const launch_desc &desc)
{
    cudaError_t config = check_config(desc);
    if (config != cudaSuccess) {
        set_error(config);
        return;
    }
    std::lock_guard<std::mutex> lock(launch_mutex);
    unsigned int n = desc.block.x * desc.block.y * desc.block.z;
    if (!build_fibers(n)) {
        set_error(cudaErrorLaunchOutOfResources);
        return;
    }
    if (dynamic_shared_buffer.size() < desc.shared_bytes + 16)
        dynamic_shared_buffer.resize(desc.shared_bytes + 16);
    uintptr_t base = reinterpret_cast<uintptr_t>(dynamic_shared_buffer.data());
    dynamic_shared = reinterpret_cast<unsigned char *>((base + 15) & ~static_cast<uintptr_t>(15));
    run.launch = &desc;
    blockDim = desc.block;
    gridDim = desc.grid;
    setup_block_shape(desc.block);
    for (unsigned int z = 0; z < desc.grid.z; z++) {
        for (unsigned int y = 0; y < desc.grid.y; y++) {
            for (unsigned int x = 0; x < desc.grid.x; x++) {
                blockIdx = uint3{x, y, z};
                run_block();
            }
        }
    }
    run.launch = nullptr;
}

void set_kernel_shared_limit(const void *kernel, int bytes)
{
    std::lock_guard<std::mutex> lock(launch_mutex);
    for (auto &entry : kernel_shared_limits) {
        if (entry.first == kernel) {
            entry.second = bytes;
            return;
        }
    }
    kernel_shared_limits.emplace_back(kernel, bytes);
}

} // namespace emu
