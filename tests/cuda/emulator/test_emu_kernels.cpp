/* test_emu_kernels.cpp - kernels written in the device subset of cuda_compat.cuh give what the
 * device gives when run by the emulator: block barriers and shared memory, each warp shuffle,
 * dynamic shared memory, atomics, __dp4a, thread indices of 2-D/3-D launches. */
#include "emu_test.h"

#include <cstdint>
#include <vector>

namespace {

constexpr int reduce_threads = 256;

/* Each block sums a grid-stride slice of x into out[blockIdx.x] by a tree in shared memory. */
__global__ void block_sum(const float *__restrict__ x, float *out, int n)
{
    __shared__ float partial[reduce_threads];
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

TEST(test_emulator_block_reduction_with_syncthreads)
{
    const int n = 100000, blocks = 37;
    std::vector<float> x(n);
    for (int i = 0; i < n; i++)
        x[i] = static_cast<float>(i % 17) - 8.0f; /* small integers: every order sums exactly */
    float *dx = device_copy(x.data(), n);
    float *dout = nullptr;
    CHECK(dx && cudaMalloc(reinterpret_cast<void **>(&dout), blocks * sizeof(float)) == cudaSuccess);
    CUDA_LAUNCH(block_sum, blocks, reduce_threads, 0, 0, dx, dout, n);
    CHECK(cudaGetLastError() == cudaSuccess);
    std::vector<float> out(blocks);
    CHECK(cudaMemcpy(out.data(), dout, blocks * sizeof(float), cudaMemcpyDeviceToHost) == cudaSuccess);
    for (int b = 0; b < blocks; b++) {
        float want = 0.0f;
        for (int i = b * reduce_threads; i < n; i += blocks * reduce_threads)
            for (int t = 0; t < reduce_threads && i + t < n; t++)
                want += x[i + t];
        CHECK_MSG(out[b] == want, "block %d: %g, want %g", b, out[b], want);
    }
    cudaFree(dx);
    cudaFree(dout);
}

/* The four shuffles on a warp of values: xor butterfly, down-tree, up-scan, broadcast with a
 * segment width. out has 4 rows of blockDim.x. */
__global__ void warp_shuffles(const int *x, int *out)
{
    int lane = threadIdx.x % warpSize;
    int v = x[threadIdx.x];
    int butterfly = v;
    for (int offset = 16; offset > 0; offset /= 2)
        butterfly += __shfl_xor_sync(0xffffffffu, butterfly, offset);
    int down = v;
    for (int offset = 16; offset > 0; offset /= 2)
        down += __shfl_down_sync(0xffffffffu, down, offset);
    int scan = v;
    for (int offset = 1; offset < 32; offset *= 2) {
        int up = __shfl_up_sync(0xffffffffu, scan, offset);
        if (lane >= offset)
            scan += up;
    }
    int broadcast = __shfl_sync(0xffffffffu, v, 3, 8); /* lane 3 of each group of 8 */
    out[threadIdx.x] = butterfly;
    out[blockDim.x + threadIdx.x] = down;
    out[2 * blockDim.x + threadIdx.x] = scan;
    out[3 * blockDim.x + threadIdx.x] = broadcast;
}

TEST(test_emulator_warp_shuffles_xor_down_up_and_broadcast)
{
    const int threads = 64;
    std::vector<int> x(threads);
    for (int i = 0; i < threads; i++)
        x[i] = (i * 7919) % 101 - 50;
    int *dx = device_copy(x.data(), threads);
    int *dout = nullptr;
    CHECK(dx && cudaMalloc(reinterpret_cast<void **>(&dout), 4 * threads * sizeof(int)) == cudaSuccess);
    CUDA_LAUNCH(warp_shuffles, 1, threads, 0, 0, dx, dout);
    CHECK(cudaGetLastError() == cudaSuccess);
    std::vector<int> out(4 * threads);
    CHECK(cudaMemcpy(out.data(), dout, out.size() * sizeof(int), cudaMemcpyDeviceToHost) == cudaSuccess);
    for (int w = 0; w < threads / 32; w++) {
        int sum = 0;
        for (int l = 0; l < 32; l++)
            sum += x[w * 32 + l];
        int prefix = 0;
        for (int l = 0; l < 32; l++) {
            int t = w * 32 + l;
            prefix += x[t];
            CHECK_MSG(out[t] == sum, "xor lane %d: %d, want %d", t, out[t], sum);
            CHECK_MSG(out[2 * threads + t] == prefix, "up-scan lane %d: %d, want %d", t, out[2 * threads + t], prefix);
            CHECK_MSG(out[3 * threads + t] == x[w * 32 + (l & ~7) + 3], "broadcast lane %d", t);
        }
        /* Lane 0 of a down-tree holds the warp's sum; lane l sums its lanes l.. within reach. */
        CHECK_MSG(out[threads + w * 32] == sum, "down lane 0 of warp %d: %d, want %d", w, out[threads + w * 32], sum);
    }
    cudaFree(dx);
    cudaFree(dout);
}

/* Float shuffles (the usual warp_reduce of a row) and a partial last warp: a block of 48 threads
 * has a warp of 16 lanes, which reduces with width 16. */
__global__ void warp_sum_float(const float *x, float *out)
{
    float v = x[threadIdx.x];
    int width = blockDim.x - (threadIdx.x & ~31u) >= 32 ? 32 : 16;
    for (int offset = width / 2; offset > 0; offset /= 2)
        v += __shfl_xor_sync(0xffffffffu, v, offset, width);
    out[threadIdx.x] = v;
}

TEST(test_emulator_float_shuffles_and_partial_warp)
{
    const int threads = 48;
    std::vector<float> x(threads);
    for (int i = 0; i < threads; i++)
        x[i] = 0.25f * static_cast<float>(i);
    float *dx = device_copy(x.data(), threads);
    float *dout = nullptr;
    CHECK(dx && cudaMalloc(reinterpret_cast<void **>(&dout), threads * sizeof(float)) == cudaSuccess);
    CUDA_LAUNCH(warp_sum_float, 1, threads, 0, 0, dx, dout);
    CHECK(cudaGetLastError() == cudaSuccess);
    std::vector<float> out(threads);
    CHECK(cudaMemcpy(out.data(), dout, threads * sizeof(float), cudaMemcpyDeviceToHost) == cudaSuccess);
    float full = 0.0f, part = 0.0f;
    for (int i = 0; i < 32; i++)
        full += x[i];
    for (int i = 32; i < 48; i++)
        part += x[i];
    for (int i = 0; i < threads; i++)
        CHECK_MSG(out[i] == (i < 32 ? full : part), "lane %d: %g", i, out[i]);
    cudaFree(dx);
    cudaFree(dout);
}

__global__ void warp_votes(const int *pred, unsigned int *out)
{
    int p = pred[threadIdx.x];
    unsigned int ballot = __ballot_sync(0xffffffffu, p);
    int all = __all_sync(0xffffffffu, p);
    int any = __any_sync(0xffffffffu, p);
    if (threadIdx.x % 32 == 0) {
        unsigned int w = threadIdx.x / 32;
        out[3 * w] = ballot;
        out[3 * w + 1] = static_cast<unsigned int>(all);
        out[3 * w + 2] = static_cast<unsigned int>(any);
    }
}

TEST(test_emulator_ballot_all_any)
{
    std::vector<int> pred(96, 0);
    for (int i = 0; i < 32; i++)
        pred[i] = i % 3 == 0; /* warp 0: mixed */
    for (int i = 32; i < 64; i++)
        pred[i] = 5; /* warp 1: all */
    int *dp = device_copy(pred.data(), pred.size());
    unsigned int *dout = nullptr;
    CHECK(dp && cudaMalloc(reinterpret_cast<void **>(&dout), 9 * sizeof(unsigned int)) == cudaSuccess);
    CUDA_LAUNCH(warp_votes, 1, 96, 0, 0, dp, dout);
    unsigned int out[9];
    CHECK(cudaMemcpy(out, dout, sizeof out, cudaMemcpyDeviceToHost) == cudaSuccess);
    unsigned int mixed = 0;
    for (int i = 0; i < 32; i += 3)
        mixed |= 1u << i;
    CHECK_MSG(out[0] == mixed && out[1] == 0 && out[2] == 1, "warp 0: %x %u %u", out[0], out[1], out[2]);
    CHECK_MSG(out[3] == 0xffffffffu && out[4] == 1 && out[5] == 1, "warp 1: %x %u %u", out[3], out[4], out[5]);
    CHECK_MSG(out[6] == 0 && out[7] == 0 && out[8] == 0, "warp 2: %x %u %u", out[6], out[7], out[8]);
    cudaFree(dp);
    cudaFree(dout);
}

/* Each block reverses its slice through dynamic shared memory sized by the launch. */
__global__ void reverse_in_shared(const float *x, float *y)
{
    CUDA_DYNAMIC_SHARED(float, tile);
    int base = blockIdx.x * blockDim.x;
    tile[threadIdx.x] = x[base + threadIdx.x];
    __syncthreads();
    y[base + threadIdx.x] = tile[blockDim.x - 1 - threadIdx.x];
}

TEST(test_emulator_dynamic_shared_memory)
{
    const int threads = 200, blocks = 5, n = threads * blocks;
    std::vector<float> x(n);
    for (int i = 0; i < n; i++)
        x[i] = static_cast<float>(i);
    float *dx = device_copy(x.data(), n), *dy = nullptr;
    CHECK(dx && cudaMalloc(reinterpret_cast<void **>(&dy), n * sizeof(float)) == cudaSuccess);
    CUDA_LAUNCH(reverse_in_shared, blocks, threads, threads * sizeof(float), 0, dx, dy);
    CHECK(cudaGetLastError() == cudaSuccess);
    std::vector<float> y(n);
    CHECK(cudaMemcpy(y.data(), dy, n * sizeof(float), cudaMemcpyDeviceToHost) == cudaSuccess);
    for (int b = 0; b < blocks; b++)
        for (int t = 0; t < threads; t++)
            CHECK_MSG(y[b * threads + t] == x[b * threads + threads - 1 - t], "block %d thread %d", b, t);
    cudaFree(dx);
    cudaFree(dy);
}

__global__ void histogram_and_max(const int *x, int n, int *bins, float *total, int *largest, unsigned int *count)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        atomicAdd(&bins[x[i] % 8], 1);
        atomicAdd(total, 0.5f * static_cast<float>(x[i]));
        atomicMax(largest, x[i]);
        atomicAdd(count, 1u);
    }
}

TEST(test_emulator_atomics)
{
    const int n = 1000;
    std::vector<int> x(n);
    for (int i = 0; i < n; i++)
        x[i] = (i * 37) % 501;
    int *dx = device_copy(x.data(), n);
    int zeros[10] = {0};
    int *dbins = device_copy(zeros, 8), *dlargest = device_copy(zeros, 1);
    float fzero = 0.0f;
    float *dtotal = device_copy(&fzero, 1);
    unsigned int uzero = 0;
    unsigned int *dcount = device_copy(&uzero, 1);
    CHECK(dx && dbins && dlargest && dtotal && dcount);
    CUDA_LAUNCH(histogram_and_max, (n + 127) / 128, 128, 0, 0, dx, n, dbins, dtotal, dlargest, dcount);
    int bins[8], largest;
    float total;
    unsigned int count;
    cudaMemcpy(bins, dbins, sizeof bins, cudaMemcpyDeviceToHost);
    cudaMemcpy(&largest, dlargest, sizeof largest, cudaMemcpyDeviceToHost);
    cudaMemcpy(&total, dtotal, sizeof total, cudaMemcpyDeviceToHost);
    cudaMemcpy(&count, dcount, sizeof count, cudaMemcpyDeviceToHost);
    int want_bins[8] = {0}, want_largest = 0;
    float want_total = 0.0f;
    for (int i = 0; i < n; i++) {
        want_bins[x[i] % 8]++;
        want_total += 0.5f * static_cast<float>(x[i]);
        want_largest = x[i] > want_largest ? x[i] : want_largest;
    }
    for (int b = 0; b < 8; b++)
        CHECK_MSG(bins[b] == want_bins[b], "bin %d: %d, want %d", b, bins[b], want_bins[b]);
    CHECK_MSG(largest == want_largest && total == want_total && count == n, "max %d total %g count %u", largest,
              total, count);
}

__global__ void dot4(const int *a, const int *b, int *out_signed, unsigned int *out_unsigned, int n)
{
    int i = threadIdx.x;
    if (i < n) {
        out_signed[i] = __dp4a(a[i], b[i], 1000);
        out_unsigned[i] = __dp4a(static_cast<unsigned int>(a[i]), static_cast<unsigned int>(b[i]), 7u);
    }
}

TEST(test_emulator_dp4a_signed_and_unsigned)
{
    const int a[4] = {static_cast<int>(0x80808080u), 0x7f01ff02, 0x01020304, -1};
    const int b[4] = {static_cast<int>(0x80808080u), 0x7f7f7f7f, static_cast<int>(0xfffefdfcu), -1};
    int *da = device_copy(a, 4), *db = device_copy(b, 4), *ds = nullptr;
    unsigned int *du = nullptr;
    CHECK(da && db && cudaMalloc(reinterpret_cast<void **>(&ds), 16) == cudaSuccess &&
          cudaMalloc(reinterpret_cast<void **>(&du), 16) == cudaSuccess);
    CUDA_LAUNCH(dot4, 1, 32, 0, 0, da, db, ds, du, 4);
    int s[4];
    unsigned int u[4];
    cudaMemcpy(s, ds, sizeof s, cudaMemcpyDeviceToHost);
    cudaMemcpy(u, du, sizeof u, cudaMemcpyDeviceToHost);
    /* Signed: (-128)^2 * 4 = 65536; 127*127 + 1*127 - 1*127 + 2*127 = 16383; bytes from the
     * low one, a = 4,3,2,1 and b = -4,-3,-2,-1: -16-9-4-1 = -30; (-1)(-1)*4 = 4. */
    const int want_s[4] = {65536 + 1000, 16383 + 1000, -30 + 1000, 4 + 1000};
    /* Unsigned: 128^2*4; 127*127+1*127+255*127+2*127; 4*252+3*253+2*254+1*255; 255^2*4. */
    const unsigned int want_u[4] = {65536 + 7, 16129 + 127 + 32385 + 254 + 7, 1008 + 759 + 508 + 255 + 7,
                                    260100 + 7};
    for (int i = 0; i < 4; i++)
        CHECK_MSG(s[i] == want_s[i] && u[i] == want_u[i], "case %d: %d %u, want %d %u", i, s[i], u[i], want_s[i],
                  want_u[i]);
}

/* Every thread of a 3-D grid of 3-D blocks writes its coordinates where they say it should. */
__global__ void write_coordinates(unsigned int *out)
{
    unsigned int bx = blockIdx.x + gridDim.x * (blockIdx.y + gridDim.y * blockIdx.z);
    unsigned int tx = threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z);
    unsigned int id = bx * blockDim.x * blockDim.y * blockDim.z + tx;
    out[id] = (blockIdx.z << 24) | (blockIdx.y << 20) | (blockIdx.x << 16) | (threadIdx.z << 8) |
              (threadIdx.y << 4) | threadIdx.x;
}

TEST(test_emulator_thread_indices_of_3d_launches)
{
    dim3 grid(3, 2, 2), block(5, 4, 3);
    const unsigned int n = 3 * 2 * 2 * 5 * 4 * 3;
    unsigned int *dout = nullptr;
    CHECK(cudaMalloc(reinterpret_cast<void **>(&dout), n * sizeof(unsigned int)) == cudaSuccess);
    CUDA_LAUNCH(write_coordinates, grid, block, 0, 0, dout);
    CHECK(cudaGetLastError() == cudaSuccess);
    std::vector<unsigned int> out(n);
    cudaMemcpy(out.data(), dout, n * sizeof(unsigned int), cudaMemcpyDeviceToHost);
    unsigned int id = 0;
    for (unsigned int bz = 0; bz < 2; bz++)
        for (unsigned int by = 0; by < 2; by++)
            for (unsigned int bx = 0; bx < 3; bx++)
                for (unsigned int tz = 0; tz < 3; tz++)
                    for (unsigned int ty = 0; ty < 4; ty++)
                        for (unsigned int tx = 0; tx < 5; tx++, id++) {
                            unsigned int want = (bz << 24) | (by << 20) | (bx << 16) | (tz << 8) | (ty << 4) | tx;
                            CHECK_MSG(out[id] == want, "thread %u: %x, want %x", id, out[id], want);
                        }
}

struct scale_params {
    float factor;
    int64_t n;
};

/* Parameters arrive converted to the kernel's types (int -> int64_t) and by value (a struct). */
__global__ void scale_by_struct(float *x, scale_params p, int64_t offset)
{
    int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x + offset;
    if (i < p.n)
        x[i] *= p.factor;
}

TEST(test_emulator_kernel_parameters_convert_and_block_sizes_change)
{
    std::vector<float> x(3000, 2.0f);
    float *dx = device_copy(x.data(), x.size());
    CHECK(dx);
    scale_params p{1.5f, 3000};
    /* Different block sizes in a row reuse the fibers of the previous launches. */
    CUDA_LAUNCH(scale_by_struct, 3, 1024, 0, 0, dx, p, 0);
    CUDA_LAUNCH(scale_by_struct, 94, 32, 0, 0, dx, p, 0);
    CUDA_LAUNCH(scale_by_struct, 1, 1000, 0, 0, dx, p, 2000);
    CHECK(cudaGetLastError() == cudaSuccess);
    cudaMemcpy(x.data(), dx, x.size() * sizeof(float), cudaMemcpyDeviceToHost);
    for (size_t i = 0; i < x.size(); i++) {
        float want = i >= 2000 ? 2.0f * 1.5f * 1.5f * 1.5f : 2.0f * 1.5f * 1.5f;
        CHECK_MSG(x[i] == want, "x[%zu] = %g, want %g", i, x[i], want);
    }
    cudaFree(dx);
}

} // namespace
