/* flash_attn_tile.h - the two inner loops of FLASH_ATTN on the CPU (op_flash_attn.c), one
 * version per SIMD level behind a table as for vec.h. Each is plain C compiled with the level's
 * flags (flash_attn_tile_body.h): every result element is a sum in one fixed order (over the head
 * for a score, over the keys for an output), vectorised across elements and never fused
 * (-ffp-contract=off), so every level gives the same bits. */
#ifndef INF_CPU_FLASH_ATTN_TILE_H
#define INF_CPU_FLASH_ATTN_TILE_H

#include <stdint.h>

/* Keys per tile (the width of a score row) and head elements per accumulator block. */
enum { FA_KEYS = 64, FA_HEAD_BLOCK = 32 };

typedef struct cpu_fa_kernels {
    /* The scores of two queries (q1 may be q0) against a tile of keys stored transposed:
     * scores_i[j] = sum over d < head, in order, of q_i[d] * k_tile[d * FA_KEYS + j], j < FA_KEYS.
     * Two at a time so that each key element loaded serves both. */
    void (*scores)(const float *q0, const float *q1, const float *k_tile, int64_t head,
                   float *scores0, float *scores1);
    /* out[d] += sum over j < n, in order, of p[j] * v_tile[j * head + d], d < head. */
    void (*accumulate)(const float *p, int64_t n, const float *v_tile, int64_t head, float *out);
} cpu_fa_kernels;

/* Kernels of the active SIMD level. Static storage. */
const cpu_fa_kernels *cpu_fa_get(void);

extern const cpu_fa_kernels cpu_fa_scalar;
#if defined(__x86_64__)
extern const cpu_fa_kernels cpu_fa_avx2;
extern const cpu_fa_kernels cpu_fa_avx512;
#endif

#endif
