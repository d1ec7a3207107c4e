/* cuda_compat.cuh - the one header every CUDA source of the backend includes first.
 *
 * The backend is compiled two ways:
 *  - by nvcc (make CUDA=1): the real CUDA runtime, cuBLAS and device code;
 *  - by the host C++ compiler with INF_CUDA_EMULATION defined (make CUDA_EMU=1): the same sources
 *    against emulator/cuda_emulator.h, which runs kernels on the CPU (a thread block's threads are
 *    fibers that meet at __syncthreads and warp shuffles) and implements the runtime and cuBLAS
 *    calls the backend uses on host memory. Every kernel is therefore run and tested on machines
 *    without a GPU.
 *
 * So that both compile, device code keeps to this subset:
 *  - launches go through CUDA_LAUNCH(kernel, grid, block, shared_bytes, stream, args...), never
 *    the triple-chevron syntax;
 *  - static shared memory is declared `__shared__ T name[N];` inside the kernel; dynamic shared
 *    memory through CUDA_DYNAMIC_SHARED(T, name);
 *  - thread indices from threadIdx/blockIdx/blockDim/gridDim, warpSize is 32; synchronisation by
 *    __syncthreads() and the *_sync warp shuffles; __dp4a, atomicAdd on float/int, the __half and
 *    __nv_bfloat16 conversions, and libm maths (expf, tanhf, ...);
 *  - no tensor-core MMA, cooperative groups or inline PTX outside an `#ifndef INF_CUDA_EMULATION`
 *    branch that has a portable twin.
 */
#ifndef INF_CUDA_COMPAT_CUH
#define INF_CUDA_COMPAT_CUH

#ifdef INF_CUDA_EMULATION
#include "emulator/cuda_emulator.h"
#else
#include <cublas_v2.h>
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#define CUDA_LAUNCH(kernel, grid, block, shared_bytes, stream, ...) \
    kernel<<<(grid), (block), (shared_bytes), (stream)>>>(__VA_ARGS__)
#define CUDA_DYNAMIC_SHARED(type, name) extern __shared__ type name[]
#endif

#endif
