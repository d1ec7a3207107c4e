/* test_emu_misuse.cpp - kernels that would hang or misbehave on a device are reported by name and
 * aborted, and launches a real runtime refuses set the error cudaGetLastError() returns. */
#include "emu_test.h"

#include <cstdlib>
#include <string>

namespace {

/* Even threads wait at one barrier, odd ones at another. */
__global__ void divergent_barriers(int *x)
{
    if (threadIdx.x % 2 == 0) {
        x[threadIdx.x] = 1;
        __syncthreads();
    } else {
        x[threadIdx.x] = 2;
        __syncthreads();
    }
}

/* The classic early return before a barrier the remaining threads still use. */
__global__ void early_return_before_barrier(int *x, int n)
{
    if (static_cast<int>(threadIdx.x) >= n)
        return;
    x[threadIdx.x] = 1;
    __syncthreads();
}

/* Half a warp shuffles while the other half waits at __syncthreads. */
__global__ void shuffle_against_barrier(int *x)
{
    if (threadIdx.x < 16)
        x[threadIdx.x] = __shfl_xor_sync(0xffffffffu, 1, 1);
    else
        __syncthreads();
}

/* Lanes returning before a shuffle their warp needs. */
__global__ void early_return_before_shuffle(int *x)
{
    if (threadIdx.x >= 24)
        return;
    x[threadIdx.x] = __shfl_down_sync(0xffffffffu, 1, 1);
}

int *scratch()
{
    static int *d = nullptr;
    if (!d && cudaMalloc(reinterpret_cast<void **>(&d), 1024 * sizeof(int)) != cudaSuccess)
        return nullptr;
    return d;
}

void run_divergent()
{
    CUDA_LAUNCH(divergent_barriers, 2, 64, 0, 0, scratch());
}
void run_early_return()
{
    CUDA_LAUNCH(early_return_before_barrier, 1, 128, 0, 0, scratch(), 100);
}
void run_shuffle_against_barrier()
{
    CUDA_LAUNCH(shuffle_against_barrier, 1, 32, 0, 0, scratch());
}
void run_early_return_shuffle()
{
    CUDA_LAUNCH(early_return_before_shuffle, 1, 32, 0, 0, scratch());
}
void run_all_threads_return_early()
{
    /* Not a misuse: every thread of the block skips the barrier. */
    CUDA_LAUNCH(early_return_before_barrier, 1, 64, 0, 0, scratch(), 0);
    if (cudaGetLastError() == cudaSuccess)
        fprintf(stderr, "finished\n");
}

bool contains(const std::string &text, const char *part)
{
    return text.find(part) != std::string::npos;
}

TEST(test_emulator_reports_threads_at_different_barriers)
{
    bool aborted;
    std::string err = run_in_child(run_divergent, &aborted);
    CHECK_MSG(aborted, "not aborted; stderr: %s", err.c_str());
    CHECK_MSG(contains(err, "kernel divergent_barriers") && contains(err, "while others wait at"), "stderr: %s",
              err.c_str());
    CHECK_MSG(err.find('\n') == err.size() - 1, "one line: %s", err.c_str());
}

TEST(test_emulator_reports_exit_while_others_wait_at_syncthreads)
{
    bool aborted;
    std::string err = run_in_child(run_early_return, &aborted);
    CHECK_MSG(aborted, "not aborted; stderr: %s", err.c_str());
    CHECK_MSG(contains(err, "kernel early_return_before_barrier") && contains(err, "__syncthreads"), "stderr: %s",
              err.c_str());
}

TEST(test_emulator_reports_shuffle_against_syncthreads)
{
    bool aborted;
    std::string err = run_in_child(run_shuffle_against_barrier, &aborted);
    CHECK_MSG(aborted, "not aborted; stderr: %s", err.c_str());
    CHECK_MSG(contains(err, "kernel shuffle_against_barrier") && contains(err, "can never complete"), "stderr: %s",
              err.c_str());
}

TEST(test_emulator_reports_lanes_missing_from_a_shuffle)
{
    bool aborted;
    std::string err = run_in_child(run_early_return_shuffle, &aborted);
    CHECK_MSG(aborted, "not aborted; stderr: %s", err.c_str());
    CHECK_MSG(contains(err, "kernel early_return_before_shuffle") && contains(err, "warp shuffle"), "stderr: %s",
              err.c_str());
}

TEST(test_emulator_accepts_a_block_that_returns_entirely)
{
    bool aborted;
    std::string err = run_in_child(run_all_threads_return_early, &aborted);
    CHECK_MSG(!aborted && err == "finished\n", "stderr: %s", err.c_str());
}

/* Thread i writes x[i]: with more threads than elements it writes past the allocation. */
__global__ void write_each(float *x)
{
    x[blockIdx.x * blockDim.x + threadIdx.x] = 1.0f;
}

void run_out_of_bounds()
{
    float *d = nullptr;
    cudaMalloc(reinterpret_cast<void **>(&d), 1000 * sizeof(float)); /* rounded to 1024 floats */
    CUDA_LAUNCH(write_each, 5, 256, 0, 0, d);
}

void run_use_after_free()
{
    float *d = nullptr;
    cudaMalloc(reinterpret_cast<void **>(&d), 1 << 20);
    cudaFree(d);
    CUDA_LAUNCH(write_each, 1, 32, 0, 0, d);
}

/* Needs 96 KiB of stack, more than the default fiber stack (64 KiB). */
__global__ void deep_stack(float *x)
{
    volatile float local[24576];
    for (int i = 0; i < 24576; i += 1024)
        local[i] = static_cast<float>(i);
    x[threadIdx.x] = local[threadIdx.x * 1024];
}

void run_deep_stack()
{
    float *d = nullptr;
    cudaMalloc(reinterpret_cast<void **>(&d), 32 * sizeof(float));
    CUDA_LAUNCH(deep_stack, 1, 32, 0, 0, d);
}

TEST(test_emulator_reports_out_of_bounds_and_freed_memory_in_kernels)
{
    unsetenv("INF_CUDA_EMU_ORDER"); /* the first thread to fault depends on it */
    bool aborted;
    std::string err = run_in_child(run_out_of_bounds, &aborted);
    CHECK_MSG(aborted && contains(err, "kernel write_each") && contains(err, "past the end of a device allocation"),
              "stderr: %s", err.c_str());
    CHECK_MSG(contains(err, "block (4,0,0), thread (0,0,0)"), "the first thread past 4096 bytes: %s", err.c_str());
    err = run_in_child(run_use_after_free, &aborted);
    CHECK_MSG(aborted && contains(err, "illegal memory access") && contains(err, "inside freed device memory"),
              "stderr: %s", err.c_str());
    err = run_in_child(run_deep_stack, &aborted);
    CHECK_MSG(aborted && contains(err, "kernel deep_stack") && contains(err, "INF_CUDA_EMU_STACK"), "stderr: %s",
              err.c_str());
}

/* A race: each thread reads its right neighbour's shared value without a barrier between the
 * write and the read. Each launch writes other values (`base`), so a value read before its
 * neighbour wrote it is the previous launch's. */
__global__ void neighbour_without_barrier(float *out, float base)
{
    __shared__ float value[64];
    value[threadIdx.x] = base + static_cast<float>(threadIdx.x);
    out[threadIdx.x] = value[(threadIdx.x + 1) % 64] - base;
}

/* Which threads of neighbour_without_barrier read their neighbour's value of this launch. */
unsigned long long neighbours_seen(const char *order, float *d, float base)
{
    if (order)
        setenv("INF_CUDA_EMU_ORDER", order, 1);
    else
        unsetenv("INF_CUDA_EMU_ORDER");
    CUDA_LAUNCH(neighbour_without_barrier, 1, 64, 0, 0, d, base);
    float out[64];
    cudaMemcpy(out, d, sizeof out, cudaMemcpyDeviceToHost);
    unsigned long long seen = 0;
    for (int t = 0; t < 64; t++)
        if (out[t] == static_cast<float>((t + 1) % 64))
            seen |= 1ull << t;
    return seen;
}

TEST(test_emulator_other_orders_expose_a_missing_barrier)
{
    float *d = nullptr;
    CHECK(cudaMalloc(reinterpret_cast<void **>(&d), 64 * sizeof(float)) == cudaSuccess);
    /* In rank order only thread 63 (reading value[0]) sees this launch's value; in reverse, every
     * thread but 63 (value[0] is written last) does. */
    unsigned long long forward = neighbours_seen(nullptr, d, 100.0f);
    unsigned long long reverse = neighbours_seen("reverse", d, 200.0f);
    CHECK_MSG(forward == 1ull << 63, "rank order: %016llx", forward);
    CHECK_MSG(reverse == ~(1ull << 63), "reverse order: %016llx", reverse);
    /* A shuffled order lies between, and is the same for the same seed. */
    unsigned long long shuffled = neighbours_seen("shuffle:7", d, 300.0f);
    unsigned long long again = neighbours_seen("shuffle:7", d, 400.0f);
    CHECK_MSG(shuffled == again, "shuffle:7 gave %016llx then %016llx", shuffled, again);
    CHECK_MSG(shuffled != forward && shuffled != reverse, "shuffled: %016llx", shuffled);
}

__global__ void noop(int *x)
{
    (void)x;
}

__global__ void big_shared(float *x)
{
    CUDA_DYNAMIC_SHARED(float, tile);
    tile[threadIdx.x] = 1.0f;
    x[threadIdx.x] = tile[threadIdx.x];
}

TEST(test_emulator_bad_launch_configurations_set_the_last_error)
{
    CHECK(cudaGetLastError() == cudaSuccess);
    CUDA_LAUNCH(noop, 1, 1025, 0, 0, scratch());
    CHECK(cudaPeekAtLastError() == cudaErrorInvalidConfiguration);
    CHECK(cudaGetLastError() == cudaErrorInvalidConfiguration);
    CHECK(cudaGetLastError() == cudaSuccess); /* reading it resets it */
    CUDA_LAUNCH(noop, 0, 32, 0, 0, scratch());
    CHECK(cudaGetLastError() == cudaErrorInvalidConfiguration);
    CUDA_LAUNCH(noop, dim3(1, 65536, 1), 32, 0, 0, scratch());
    CHECK(cudaGetLastError() == cudaErrorInvalidConfiguration);
    CUDA_LAUNCH(noop, 1, dim3(2, 2, 65), 0, 0, scratch());
    CHECK(cudaGetLastError() == cudaErrorInvalidConfiguration);
    CHECK(strcmp(cudaGetErrorString(cudaErrorInvalidConfiguration), "invalid configuration argument") == 0);
    /* A stream that was destroyed. */
    cudaStream_t s;
    CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking) == cudaSuccess);
    CHECK(cudaStreamDestroy(s) == cudaSuccess);
    CUDA_LAUNCH(noop, 1, 32, 0, s, scratch());
    CHECK(cudaGetLastError() == cudaErrorInvalidResourceHandle);
}

TEST(test_emulator_dynamic_shared_memory_needs_the_opt_in_above_48k)
{
    float *d = nullptr;
    CHECK(cudaMalloc(reinterpret_cast<void **>(&d), 64 * sizeof(float)) == cudaSuccess);
    const size_t big = 100 * 1024;
    CUDA_LAUNCH(big_shared, 1, 64, big, 0, d);
    CHECK(cudaGetLastError() == cudaErrorInvalidValue);
    CHECK(cudaFuncSetAttribute(big_shared, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(big)) ==
          cudaSuccess);
    CUDA_LAUNCH(big_shared, 1, 64, big, 0, d);
    CHECK(cudaGetLastError() == cudaSuccess);
    /* Beyond what the emulated device (8.0: 163 KiB) can give at all. */
    CHECK(cudaFuncSetAttribute(big_shared, cudaFuncAttributeMaxDynamicSharedMemorySize, 228 * 1024) ==
          cudaErrorInvalidValue);
    CHECK(cudaGetLastError() == cudaErrorInvalidValue);
    CUDA_LAUNCH(big_shared, 1, 64, 228 * 1024, 0, d);
    CHECK(cudaGetLastError() == cudaErrorInvalidValue);
    cudaFree(d);
}

} // namespace
