/* block_reduce.cuh - reductions over the threads of a block, for kernels that give a whole block
 * to one row (RMS norm, softmax). A fixed tree in shared memory: the result does not depend on
 * timing, so a row's sum is the same on every run. blockDim.x must be a power of two and
 * `partial` (shared memory, one entry per thread) is free again when the function returns. */
#ifndef INF_CUDA_BLOCK_REDUCE_CUH
#define INF_CUDA_BLOCK_REDUCE_CUH

#include "cuda_compat.cuh"

/* The sum of every thread's v, given to every thread. */
static inline __device__ double cuda_block_sum(double v, double *partial)
{
    const unsigned t = threadIdx.x;
    partial[t] = v;
    __syncthreads();
    for (unsigned half = blockDim.x / 2; half > 0; half /= 2) {
        if (t < half)
            partial[t] += partial[t + half];
        __syncthreads();
    }
    const double total = partial[0];
    __syncthreads();
    return total;
}

/* The largest of every thread's v, given to every thread. No v may be NaN (a row's maximum is
 * taken with `y > max`, which NaN never passes, as on the CPU); then the order does not matter. */
static inline __device__ float cuda_block_max(float v, float *partial)
{
    const unsigned t = threadIdx.x;
    partial[t] = v;
    __syncthreads();
    for (unsigned half = blockDim.x / 2; half > 0; half /= 2) {
        if (t < half && partial[t + half] > partial[t])
            partial[t] = partial[t + half];
        __syncthreads();
    }
    const float largest = partial[0];
    __syncthreads();
    return largest;
}

#endif
