/* vec_table.c - picks the row kernels of the active SIMD level. */
#include "vec.h"
#include <ggtk/inf_simd.h>

const cpu_vec_kernels *cpu_vec_get(void)
{
#if defined(__x86_64__)
    switch (inf_simd_active()) {
    case INF_SIMD_AVX512:
        return &cpu_vec_avx512;
    case INF_SIMD_AVX2:
        return &cpu_vec_avx2;
    default:
        break;
    }
#endif
    return &cpu_vec_scalar;
}
