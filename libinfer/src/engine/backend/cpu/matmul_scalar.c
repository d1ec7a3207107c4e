/* matmul_scalar.c - portable kernels of the matrix product: the reference the SIMD levels are
 * tested against. They follow the same packed formats and the same order of float operations per
 * sub-block (an exact integer dot product, then fused multiply-adds by the scales, see matmul.h). */
#include "matmul.h"
#include "engine/quant_kernels/kquant_quantize.h"

#include <math.h>
#include <string.h>

enum { SCALAR_P = 8, SCALAR_GQ = 4, SCALAR_GF = 4 };

/* Write (or add) rows j < nr, columns i < m_valid of a tile with `p` columns per row. */
static void store_tile(const float *acc, int p, int nr, float *dst, size_t dst_stride, int m_valid,
                       mm_store store)
{
    for (int j = 0; j < nr; j++) {
        float *row = (float *)((char *)dst + (size_t)j * dst_stride);
        for (int i = 0; i < m_valid; i++)
            row[i] = store == MM_ADD ? row[i] + acc[j * p + i] : acc[j * p + i];
    }
}

static void gemm_q_scalar(const mm_weight_format *f, const uint8_t *qs, const float *d,
                          const float *m, const uint8_t *act, int64_t n_blocks, int nr, float *dst,
                          size_t dst_stride, int m_valid, mm_store store)
{
    const int P = SCALAR_P, G = SCALAR_GQ, subs = f->subs, groups = MM_BLOCK / 4 / subs;
    float acc[SCALAR_GQ][SCALAR_P] = {{0}};
    for (int64_t b = 0; b < n_blocks; b++) {
        const uint8_t *wq = qs + (size_t)b * P * MM_BLOCK;
        const uint8_t *aq = act + (size_t)b * mm_act_block_bytes(G, subs, 1);
        const float *ad = (const float *)(aq + (size_t)G * MM_BLOCK);
        const char *ac = (const char *)(ad + G);
        for (int s = 0; s < subs; s++) {
            const float *ds = d + (b * subs + s) * P, *ms = m + (b * subs + s) * P;
            for (int j = 0; j < G; j++) {
                int32_t start = 0;
                float sum_a = 0.0f;
                memcpy(f->affine ? (void *)&sum_a : (void *)&start, ac + 4 * ((size_t)s * G + j), 4);
                for (int i = 0; i < P; i++) {
                    int32_t sum = start;
                    for (int g = s * groups; g < (s + 1) * groups; g++) {
                        for (int t = 0; t < 4; t++)
                            sum += (int32_t)wq[(g * P + i) * 4 + t] * (int8_t)aq[(g * G + j) * 4 + t];
                    }
                    /* The SIMD levels' order of float operations, so that they agree bit for bit. */
                    acc[j][i] = fmaf((float)sum, ds[i] * ad[j], acc[j][i]);
                    if (f->affine)
                        acc[j][i] = fmaf(ms[i], sum_a, acc[j][i]);
                }
            }
        }
    }
    store_tile(acc[0], P, nr, dst, dst_stride, m_valid, store);
}

static void gemm_f_scalar(const float *panel, const float *act, int64_t K, int nr, float *dst,
                          size_t dst_stride, int m_valid, mm_store store)
{
    const int P = SCALAR_P, G = SCALAR_GF;
    float acc[SCALAR_GF][SCALAR_P] = {{0}};
    for (int64_t k = 0; k < K; k++) {
        for (int j = 0; j < G; j++) {
            for (int i = 0; i < P; i++)
                acc[j][i] = fmaf(panel[k * P + i], act[k * G + j], acc[j][i]); /* as the SIMD levels */
        }
    }
    store_tile(acc[0], P, nr, dst, dst_stride, m_valid, store);
}

const mm_kernels mm_kernels_scalar = {
    .name = "scalar",
    .panel_rows = SCALAR_P,
    .q_group = SCALAR_GQ,
    .f_group = SCALAR_GF,
    .pack_q = mm_pack_q_generic,
    .gemm_q = gemm_q_scalar,
    .pack_f = mm_pack_f_generic,
    .pack_act_f = mm_pack_act_f_generic,
    .gemm_f = gemm_f_scalar,
};
