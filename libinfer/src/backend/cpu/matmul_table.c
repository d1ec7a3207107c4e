/* matmul_table.c - picks the matrix-product kernels of the active SIMD level. */
#include "backend/cpu/matmul.h"
#include "inf_cpu.h"

const mm_kernels *mm_kernels_get(void)
{
    return &mm_kernels_scalar;
}
