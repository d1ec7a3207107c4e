/* test_emu_misuse.cpp - kernels that would hang or misbehave on a device are reported by name and
 * aborted, and launches a real runtime refuses set the error cudaGetLastError() returns. */
#include "emu_test.h"

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
