/* flash_attn_tile_body.h - the loops of flash_attn_tile.h, included once per SIMD level by
 * flash_attn_tile_<level>.c, which defines FA_TABLE (the table's name) first. The accumulators
 * are fixed-size arrays the compiler keeps in vector registers. */
#include <string.h>

#include "flash_attn_tile.h"

static void fa_scores(const float *q0, const float *q1, const float *k_tile, int64_t head,
                      float *scores0, float *scores1)
{
    float acc0[FA_KEYS] = {0}, acc1[FA_KEYS] = {0};
    for (int64_t d = 0; d < head; d++) {
        const float q0d = q0[d], q1d = q1[d];
        const float *kd = k_tile + d * FA_KEYS;
#pragma omp simd
        for (int j = 0; j < FA_KEYS; j++) {
            acc0[j] += q0d * kd[j];
            acc1[j] += q1d * kd[j];
        }
    }
    memcpy(scores0, acc0, sizeof acc0);
    memcpy(scores1, acc1, sizeof acc1);
}

static void fa_accumulate(const float *p, int64_t n, const float *v_tile, int64_t head,
                          float *out)
{
    int64_t d0 = 0;
    for (; d0 + FA_HEAD_BLOCK <= head; d0 += FA_HEAD_BLOCK) {
        float acc[FA_HEAD_BLOCK];
        memcpy(acc, out + d0, sizeof acc);
        for (int64_t j = 0; j < n; j++) {
            const float pj = p[j];
            const float *v = v_tile + j * head + d0;
#pragma omp simd
            for (int c = 0; c < FA_HEAD_BLOCK; c++)
                acc[c] += pj * v[c];
        }
        memcpy(out + d0, acc, sizeof acc);
    }
    for (; d0 < head; d0++) { /* heads that are not a multiple of the block */
        float acc = out[d0];
        for (int64_t j = 0; j < n; j++)
            acc += p[j] * v_tile[j * head + d0];
        out[d0] = acc;
    }
}

const cpu_fa_kernels FA_TABLE = {fa_scores, fa_accumulate};
