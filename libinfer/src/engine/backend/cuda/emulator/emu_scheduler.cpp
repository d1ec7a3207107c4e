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
 * to meet it at a barrier, waits that can never complete, and memory faults during a launch
 * (device allocations end at an inaccessible page; see emu_runtime.cpp). One launch runs at a
 * time (a mutex), which is also what makes `static` shared arrays private to the running block.
 *
 * Threads start and are released in rank order, or in reverse (INF_CUDA_EMU_ORDER=reverse), or
 * in an order shuffled anew for each block (INF_CUDA_EMU_ORDER=shuffle or shuffle:SEED, the same
 * for the same seed): a kernel whose result changes with the order has a race (a missing
 * barrier). An order is a permutation of the warps and one of the lanes within every warp. */
#include "emu_fiber.h"
#include "emu_launch.h"

#include <csignal>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <ucontext.h>
#include <unistd.h>
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
static_assert(max_warps == 32, "warp and lane orders are both permutations of 32");

enum thread_state { RUNNABLE, AT_SYNCTHREADS, AT_WARP, EXITED };

struct thread_slot {
    fiber_context ctx;
    uint3 idx;
    thread_state state;
    char *stack; /* lowest usable byte of the fiber's stack; its guard is below */
};

struct warp_slot {
    unsigned int lanes;   /* threads of the block in this warp (the last may be partial) */
    unsigned int arrived; /* lanes waiting at the current exchange */
    unsigned int exited;
    unsigned int parity;  /* which slot array the current exchange fills */
    uint64_t slots[2][32];
};

/* The state of the block being run. The fibers of slots [0, fibers_built) exist. */
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
    unsigned int barrier_count[2]; /* __syncthreads_count's sums, by barrier_parity */
    unsigned int barrier_parity;
    /* Run queue: a ring of thread ranks; each runnable, not running thread is in it once. */
    unsigned int queue[max_threads];
    unsigned int queue_head;
    unsigned int queue_count;
    fiber_context scheduler;
    const launch_desc *launch;
    unsigned int fibers_built;
    /* The order threads start and are released in: warps by warp_order, lanes by lane_order. */
    unsigned char warp_order[max_warps];
    unsigned char lane_order[32];
    enum { ORDER_RANK, ORDER_REVERSE, ORDER_SHUFFLE } order;
    uint64_t shuffle_state;
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

/* Makes the `lanes` threads from rank `first` (one warp) but `skip` runnable, in lane order. */
void release_warp(unsigned int first, unsigned int lanes, unsigned int skip)
{
    for (unsigned int i = 0; i < 32; i++) {
        unsigned int lane = run.lane_order[i];
        if (lane < lanes && first + lane != skip) {
            run.threads[first + lane].state = RUNNABLE;
            queue_push(first + lane);
        }
    }
}

/* Makes every thread of the block but `skip` runnable, in warp then lane order. */
void release_block(unsigned int skip)
{
    for (unsigned int i = 0; i < max_warps; i++) {
        unsigned int w = run.warp_order[i];
        if (w * 32 < run.n_threads)
            release_warp(w * 32, run.warps[w].lanes, skip);
    }
}

/* A permutation of [0, n) from the shuffle state (xorshift, Fisher-Yates). */
void shuffle(unsigned char *order, unsigned int n)
{
    for (unsigned int i = 0; i < n; i++)
        order[i] = static_cast<unsigned char>(i);
    for (unsigned int i = n - 1; i > 0; i--) {
        run.shuffle_state ^= run.shuffle_state << 13;
        run.shuffle_state ^= run.shuffle_state >> 7;
        run.shuffle_state ^= run.shuffle_state << 17;
        unsigned int j = static_cast<unsigned int>(run.shuffle_state % (i + 1));
        unsigned char t = order[i];
        order[i] = order[j];
        order[j] = t;
    }
}

/* Sets the order of the next block's threads. */
void choose_order()
{
    bool reverse = run.order == block_run::ORDER_REVERSE;
    for (unsigned int i = 0; i < 32; i++) {
        run.lane_order[i] = static_cast<unsigned char>(reverse ? 31 - i : i);
        run.warp_order[i] = static_cast<unsigned char>(reverse ? 31 - i : i);
    }
    if (run.order == block_run::ORDER_SHUFFLE) {
        shuffle(run.lane_order, 32);
        shuffle(run.warp_order, max_warps);
    }
}

/* Reads INF_CUDA_EMU_ORDER for a launch. */
void read_order()
{
    const char *order = getenv("INF_CUDA_EMU_ORDER");
    run.order = block_run::ORDER_RANK;
    if (order && strcmp(order, "reverse") == 0) {
        run.order = block_run::ORDER_REVERSE;
    } else if (order && strncmp(order, "shuffle", 7) == 0) {
        run.order = block_run::ORDER_SHUFFLE;
        uint64_t seed = order[7] == ':' ? strtoull(order + 8, nullptr, 0) : 1;
        run.shuffle_state = seed * 0x9e3779b97f4a7c15ull + 0x632be59bd9b4e019ull; /* never 0 */
    }
    choose_order();
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
    fiber_entered();
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
            fail("returned while %u lane(s) of its warp wait for it at a warp shuffle (shuffle masks are ignored: "
                 "every lane of the warp must take part)",
                 warp.arrived);
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

/* A memory fault while a kernel runs: say which kernel, thread and address, then abort. Runs on
 * an alternate stack so that a fiber's stack overflow can be reported too. */
thread_local bool running_kernel;
struct sigaction previous_segv, previous_bus;

/* The stack pointer at the fault, or NULL where unknown. */
char *stack_pointer(void *context)
{
    ucontext_t *uc = static_cast<ucontext_t *>(context);
#if defined(__x86_64__)
    return reinterpret_cast<char *>(uc->uc_mcontext.gregs[REG_RSP]);
#elif defined(__aarch64__)
    return reinterpret_cast<char *>(uc->uc_mcontext.sp);
#else
    (void)uc;
    return nullptr;
#endif
}

void on_fault(int sig, siginfo_t *info, void *context)
{
    if (!running_kernel) {
        /* Not a kernel's: put the previous handler back and fault again into it. */
        sigaction(sig, sig == SIGSEGV ? &previous_segv : &previous_bus, nullptr);
        return;
    }
    char *addr = static_cast<char *>(info->si_addr);
    char *stack = run.threads[run.current].stack;
    if ((addr < stack && addr >= stack - fiber_stack_guard) || stack_pointer(context) < stack)
        fail("stack overflow: a thread needs more than its %zu-byte fiber stack (set INF_CUDA_EMU_STACK)",
             fiber_stack_size());
    fail("illegal memory access at %p, %s", static_cast<void *>(addr), describe_address(addr));
}

/* Installs on_fault and an alternate signal stack for this OS thread (once each). */
void watch_faults()
{
    static std::once_flag installed;
    std::call_once(installed, [] {
        struct sigaction action;
        memset(&action, 0, sizeof action);
        action.sa_sigaction = on_fault;
        action.sa_flags = SA_SIGINFO | SA_ONSTACK;
        sigemptyset(&action.sa_mask);
        sigaction(SIGSEGV, &action, &previous_segv);
        sigaction(SIGBUS, &action, &previous_bus);
    });
    static thread_local bool have_altstack = false;
    if (!have_altstack) {
        static thread_local std::vector<char> altstack(64 * 1024);
        stack_t ss;
        memset(&ss, 0, sizeof ss);
        ss.ss_sp = altstack.data();
        ss.ss_size = altstack.size();
        sigaltstack(&ss, nullptr);
        have_altstack = true;
    }
}

bool build_fibers(unsigned int n)
{
    for (; run.fibers_built < n; run.fibers_built++) {
        void *stack = fiber_stack_alloc();
        if (!stack)
            return false;
        run.threads[run.fibers_built].stack = static_cast<char *>(stack);
        context_init(&run.threads[run.fibers_built].ctx, stack, fiber_stack_size(), fiber_main);
    }
    return true;
}

void run_block()
{
    run.exited = 0;
    run.barrier_arrived = 0;
    run.barrier_file = nullptr;
    run.barrier_count[0] = run.barrier_count[1] = 0;
    run.barrier_parity = 0;
    run.queue_head = 0;
    run.queue_count = 0;
    for (unsigned int w = 0; w * 32 < run.n_threads; w++) {
        run.warps[w].arrived = 0;
        run.warps[w].exited = 0;
    }
    if (run.order == block_run::ORDER_SHUFFLE)
        choose_order();
    release_block(max_threads);
    unsigned int first = queue_pop();
    set_current(first);
    context_switch(&run.scheduler, &run.threads[first].ctx);
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

int syncthreads_count(const char *file, int line, int predicate)
{
    thread_slot &self = run.threads[run.current];
    if (run.exited > 0)
        fail("reached __syncthreads (%s:%d) after %u thread(s) of its block returned", file, line,
             run.exited);
    if (run.barrier_arrived == 0) {
        run.barrier_file = file;
        run.barrier_line = line;
    } else if (line != run.barrier_line || (file != run.barrier_file && strcmp(file, run.barrier_file) != 0)) {
        fail("reached __syncthreads at %s:%d while others wait at %s:%d", file, line, run.barrier_file,
             run.barrier_line);
    }
    /* The counts of two barriers in a row use alternate slots: a thread released from one reads
     * its slot while the first threads already count the next barrier in the other. */
    unsigned int parity = run.barrier_parity;
    run.barrier_count[parity] += predicate != 0;
    if (++run.barrier_arrived == run.n_threads) {
        run.barrier_arrived = 0;
        run.barrier_parity ^= 1;
        run.barrier_count[parity ^ 1] = 0;
        release_block(run.current);
        return static_cast<int>(run.barrier_count[parity]);
    }
    self.state = AT_SYNCTHREADS;
    wait_here();
    return static_cast<int>(run.barrier_count[parity]);
}

void syncthreads(const char *file, int line)
{
    syncthreads_count(file, line, 0);
}

const uint64_t *warp_exchange(uint64_t bits)
{
    unsigned int rank = run.current;
    warp_slot &warp = run.warps[rank / 32];
    if (warp.exited > 0)
        fail("reached a warp shuffle after %u lane(s) of its warp returned (shuffle masks are ignored: every lane "
             "of the warp must take part)",
             warp.exited);
    uint64_t *slots = warp.slots[warp.parity];
    slots[rank % 32] = bits;
    if (++warp.arrived == warp.lanes) {
        warp.arrived = 0;
        warp.parity ^= 1;
        unsigned int first = rank & ~31u;
        release_warp(first, warp.lanes, rank);
        return slots;
    }
    run.threads[rank].state = AT_WARP;
    wait_here();
    return slots;
}

void launch(const launch_desc &desc)
{
    if (running_kernel)
        fail("launches %s: a kernel cannot launch kernels on the emulator", desc.kernel_name);
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
    memset(dynamic_shared, 0xff, desc.shared_bytes); /* NaN until written, as garbage would be */
    if (getenv("INF_CUDA_EMU_TRACE"))
        fprintf(stderr, "cuda emulator: launch %s grid (%u,%u,%u) block (%u,%u,%u) dynamic shared %zu\n",
                desc.kernel_name, desc.grid.x, desc.grid.y, desc.grid.z, desc.block.x, desc.block.y, desc.block.z,
                desc.shared_bytes);
    read_order();
    watch_faults();
    run.launch = &desc;
    running_kernel = true;
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
    running_kernel = false;
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
