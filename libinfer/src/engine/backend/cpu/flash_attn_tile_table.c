/* flash_attn_tile_table.c - picks the FLASH_ATTN tile loops of the active SIMD level. */
#include "flash_attn_tile.h"
#include <ggtk/inf_simd.h>

const cpu_fa_kernels *cpu_fa_get(void)
{
#if defined(__x86_64__)
    switch (inf_simd_active()) {
    case INF_SIMD_AVX512:
        return &cpu_fa_avx512;
    case INF_SIMD_AVX2:
        return &cpu_fa_avx2;
    default:
        break;
    }
#endif
    return &cpu_fa_scalar;
}
