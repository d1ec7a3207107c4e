/* bench_emulator.cpp - what a launch costs on the emulator: a 256-thread block reduction over
 * 1M floats (the common shape of norm and softmax kernels), and the cost of one fiber switch. */
#include "cuda_compat.cuh"

#include <chrono>
#include <cstdio>
#include <vector>

namespace {

constexpr int threads = 256;

__global__ void block_sum(const float *x, float *out, int n)
{
    __shared__ float partial[threads];
    float sum = 0.0f;
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)
        sum += x[i];
    partial[threadIdx.x] = sum;
    __syncthreads();
    for (unsigned int stride = blockDim.x / 2; stride > 0; stride /= 2) {
        if (threadIdx.x < stride)
            partial[threadIdx.x] += partial[threadIdx.x + stride];
        __syncthreads();
    }
    if (threadIdx.x == 0)
        out[blockIdx.x] = partial[0];
}

/* The same reduction through warp shuffles: one barrier, a shuffle tree per warp. */
__global__ void warp_block_sum(const float *x, float *out, int n)
{
    __shared__ float warp_sums[threads / 32];
    float sum = 0.0f;
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)
        sum += x[i];
    for (int offset = 16; offset > 0; offset /= 2)
        sum += __shfl_xor_sync(0xffffffffu, sum, offset);
    if (threadIdx.x % 32 == 0)
        warp_sums[threadIdx.x / 32] = sum;
    __syncthreads();
    if (threadIdx.x < 32) {
        sum = threadIdx.x < threads / 32 ? warp_sums[threadIdx.x] : 0.0f;
        for (int offset = 16; offset > 0; offset /= 2)
            sum += __shfl_xor_sync(0xffffffffu, sum, offset);
        if (threadIdx.x == 0)
            out[blockIdx.x] = sum;
    }
}

/* Threads that only meet at barriers: measures the switch. */
__global__ void barriers_only(int rounds)
{
    for (int r = 0; r < rounds; r++)
        __syncthreads();
}

double seconds_since(std::chrono::steady_clock::time_point t0)
{
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

template <typename K> void time_reduction(const char *name, K kernel, const float *dx, float *dout, int n, int blocks)
{
    CUDA_LAUNCH(kernel, blocks, threads, 0, 0, dx, dout, n); /* warm: builds the fibers */
    int reps = 0;
    auto t0 = std::chrono::steady_clock::now();
    do {
        CUDA_LAUNCH(kernel, blocks, threads, 0, 0, dx, dout, n);
        reps++;
    } while (seconds_since(t0) < 1.0);
    double per_launch = seconds_since(t0) / reps;
    printf("%-26s %5d blocks x %d threads over %d floats: %8.2f ms per launch (%.1f ns per thread)\n", name, blocks,
           threads, n, per_launch * 1e3, per_launch * 1e9 / (static_cast<double>(blocks) * threads));
}

} // namespace

int main()
{
    const int n = 1 << 20;
    std::vector<float> x(n, 1.0f);
    float *dx = nullptr, *dout = nullptr;
    cudaMalloc(reinterpret_cast<void **>(&dx), n * sizeof(float));
    cudaMalloc(reinterpret_cast<void **>(&dout), n / threads * sizeof(float));
    cudaMemcpy(dx, x.data(), n * sizeof(float), cudaMemcpyHostToDevice);
    /* One element per thread (4096 blocks), and a grid-stride loop over 256 blocks. */
    time_reduction("shared-memory tree", block_sum, dx, dout, n, n / threads);
    time_reduction("shared-memory tree", block_sum, dx, dout, n, 256);
    time_reduction("warp shuffles", warp_block_sum, dx, dout, n, n / threads);
    time_reduction("warp shuffles", warp_block_sum, dx, dout, n, 256);

    const int rounds = 1000, blocks = 64;
    auto t0 = std::chrono::steady_clock::now();
    CUDA_LAUNCH(barriers_only, blocks, threads, 0, 0, rounds);
    double switches = static_cast<double>(blocks) * threads * rounds;
    printf("__syncthreads switch: %.1f ns per thread per barrier\n", seconds_since(t0) * 1e9 / switches);
    if (cudaGetLastError() != cudaSuccess)
        return 1;
    cudaFree(dx);
    cudaFree(dout);
    return 0;
}
