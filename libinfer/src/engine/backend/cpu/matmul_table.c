/* matmul_table.c - picks the matrix-product kernels of the active SIMD level. */
#include "matmul.h"
#include <ggtk/inf_simd.h>

const mm_kernels *mm_kernels_get(void)
{
#if defined(__x86_64__)
    switch (inf_simd_active()) {
    case INF_SIMD_AVX512:
        /* The AVX-512 quantized kernels are built on VNNI's vpdpbusd. */
        if (inf_cpu_features_get()->avx512vnni)
            return &mm_kernels_avx512;
        return &mm_kernels_avx2;
    case INF_SIMD_AVX2:
        return &mm_kernels_avx2;
    default:
        break;
    }
#endif
#if defined(__ARM_NEON) && defined(__aarch64__)
    if (inf_simd_active() == INF_SIMD_NEON)
        return &mm_kernels_neon;
#endif
    return &mm_kernels_scalar;
}
