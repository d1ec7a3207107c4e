/* bench_emulator.cpp - what a launch costs on the emulator: a 256-thread block reduction over
 * 1M floats (the common shape of norm and softmax kernels), and the cost of one fiber switch. */
#include "cuda_compat.cuh"

#include <cstdio>
#include <ctime>
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

/* One element per thread, no barrier: the cost of starting and ending a thread. */
__global__ void add_one(float *x, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        x[i] += 1.0f;
}

/* Threads that only meet at barriers: measures the switch. */
__global__ void barriers_only(int rounds)
{
    for (int r = 0; r < rounds; r++)
        __syncthreads();
}

/* CPU time of this thread: the machine may be shared, and launches run on the calling thread. */
double cpu_seconds()
{
    timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return static_cast<double>(ts.tv_sec) + 1e-9 * static_cast<double>(ts.tv_nsec);
}

template <typename K> void time_reduction(const char *name, K kernel, const float *dx, float *dout, int n, int blocks)
{
    CUDA_LAUNCH(kernel, blocks, threads, 0, 0, dx, dout, n); /* warm: builds the fibers */
    int reps = 0;
    double t0 = cpu_seconds();
    do {
        CUDA_LAUNCH(kernel, blocks, threads, 0, 0, dx, dout, n);
        reps++;
    } while (cpu_seconds() - t0 < 1.0);
    double per_launch = (cpu_seconds() - t0) / reps;
    printf("%-26s %5d blocks x %d threads over %d floats: %8.2f ms per launch (%.1f ns per thread)\n", name, blocks,
           threads, n, per_launch * 1e3, per_launch * 1e9 / (static_cast<double>(blocks) * threads));
}

/* C (m x n, F32) = A^T (k x m, F16, as ggml stores weights) x B (k x n, F32 converted to F16). */
void time_gemm(int m, int n, int k)
{
    void *a = nullptr, *b = nullptr, *c = nullptr;
    cudaMalloc(&a, static_cast<size_t>(m) * k * 2);
    cudaMalloc(&b, static_cast<size_t>(k) * n * 2);
    cudaMalloc(&c, static_cast<size_t>(m) * n * 4);
    cudaMemset(a, 0, static_cast<size_t>(m) * k * 2);
    cudaMemset(b, 0, static_cast<size_t>(k) * n * 2);
    cublasHandle_t h;
    cublasCreate(&h);
    float one = 1.0f, zero = 0.0f;
    double t0 = cpu_seconds();
    cublasGemmEx(h, CUBLAS_OP_T, CUBLAS_OP_N, m, n, k, &one, a, CUDA_R_16F, k, b, CUDA_R_16F, k, &zero, c, CUDA_R_32F,
                 m, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT);
    double s = cpu_seconds() - t0;
    printf("cublasGemmEx F16 x F16 -> F32, m=%d n=%d k=%d: %.1f ms (%.2f GFLOP/s)\n", m, n, k, s * 1e3,
           2.0 * m * n * k / s * 1e-9);
    cublasDestroy(h);
    cudaFree(a);
    cudaFree(b);
    cudaFree(c);
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

    CUDA_LAUNCH(add_one, n / threads, threads, 0, 0, dx, n);
    double t_add = cpu_seconds();
    CUDA_LAUNCH(add_one, n / threads, threads, 0, 0, dx, n);
    t_add = cpu_seconds() - t_add;
    printf("element-wise add, one float per thread, %d blocks x %d threads: %.2f ms (%.1f ns per thread)\n",
           n / threads, threads, t_add * 1e3, t_add * 1e9 / n);

    const int rounds = 1000, blocks = 64;
    double t0 = cpu_seconds();
    CUDA_LAUNCH(barriers_only, blocks, threads, 0, 0, rounds);
    double switches = static_cast<double>(blocks) * threads * rounds;
    printf("__syncthreads: %.1f ns per thread per barrier (one fiber switch each)\n",
           (cpu_seconds() - t0) * 1e9 / switches);
    time_gemm(576, 512, 576);
    time_gemm(1536, 512, 576);
    if (cudaGetLastError() != cudaSuccess)
        return 1;
    cudaFree(dx);
    cudaFree(dout);
    return 0;
}
