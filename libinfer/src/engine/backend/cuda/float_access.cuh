/* float_access.cuh - loading and storing one element of an F32, F16 or BF16 tensor in a kernel,
 * converting through float with the CPU's conversions (float_convert.cuh), as the CPU's
 * quant_load_float() and store_float() (cpu/op_copy.c) do. `at` must be aligned to the type. */
#ifndef INF_CUDA_FLOAT_ACCESS_CUH
#define INF_CUDA_FLOAT_ACCESS_CUH

#include "cuda_compat.cuh"
#include "float_convert.cuh"

#include <ggtk/gguf.h>

static inline __device__ float cuda_load_float(int type, const char *at)
{
    if (type == GGTK_TENSOR_F32)
        return *(const float *)at;
    const uint16_t h = *(const uint16_t *)at;
    return type == GGTK_TENSOR_F16 ? cuda_fp16_to_fp32(h) : cuda_bf16_to_fp32(h);
}

static inline __device__ void cuda_store_float(int type, char *at, float v)
{
    if (type == GGTK_TENSOR_F32)
        *(float *)at = v;
    else
        *(uint16_t *)at = type == GGTK_TENSOR_F16 ? cuda_fp32_to_fp16(v) : cuda_fp32_to_bf16(v);
}

#endif
