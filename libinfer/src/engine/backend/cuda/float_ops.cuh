/* float_ops.cuh - single-precision operations that give the same bits in a kernel, in the
 * emulator and in host C code, so that the kernels can reproduce the CPU backend's floats.
 *
 * The CPU build uses -ffp-contract=off: a * b + c is two roundings. nvcc fuses such expressions
 * into one FMA by default (--fmad=true) and could be asked for approximate division and square
 * root (--use_fast_math); the _rn intrinsics are never fused or approximated, whatever the flags.
 * Host compilers (the emulator, the C tests) get the plain operators.
 *
 * This header and the other *_math.cuh / float_convert.cuh headers are valid C11 as well as CUDA
 * C++, so that the host-side tests (tests/cuda/) can run the very functions the kernels call. */
#ifndef INF_CUDA_FLOAT_OPS_CUH
#define INF_CUDA_FLOAT_OPS_CUH

#include <math.h>
#include <stdint.h>
#include <string.h>

/* Marks a function callable from kernels and from host code. */
#if defined(__CUDACC__) || defined(INF_CUDA_EMULATION)
#include "cuda_compat.cuh"
#define INF_CUDA_HD __host__ __device__
#else
#define INF_CUDA_HD
#endif

static inline INF_CUDA_HD float cuda_mul(float a, float b)
{
#ifdef __CUDA_ARCH__
    return __fmul_rn(a, b);
#else
    return a * b;
#endif
}

static inline INF_CUDA_HD float cuda_add(float a, float b)
{
#ifdef __CUDA_ARCH__
    return __fadd_rn(a, b);
#else
    return a + b;
#endif
}

static inline INF_CUDA_HD float cuda_sub(float a, float b)
{
#ifdef __CUDA_ARCH__
    return __fsub_rn(a, b);
#else
    return a - b;
#endif
}

static inline INF_CUDA_HD float cuda_div(float a, float b)
{
#ifdef __CUDA_ARCH__
    return __fdiv_rn(a, b);
#else
    return a / b;
#endif
}

static inline INF_CUDA_HD float cuda_sqrt(float a)
{
#ifdef __CUDA_ARCH__
    return __fsqrt_rn(a);
#else
    return sqrtf(a);
#endif
}

static inline INF_CUDA_HD uint32_t cuda_float_bits(float f)
{
    uint32_t u;
    memcpy(&u, &f, sizeof u);
    return u;
}

static inline INF_CUDA_HD float cuda_float_from_bits(uint32_t u)
{
    float f;
    memcpy(&f, &u, sizeof f);
    return f;
}

#endif
