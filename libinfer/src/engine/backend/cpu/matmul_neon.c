/* matmul_neon.c - arm64 Advanced SIMD kernels of the matrix product (formats: matmul.h). Tiles:
 * 8 weight rows (two vectors of 4 rows) by the 4 activation rows of a quantized group, or by 8
 * float activation rows.
 *
 * The packed activation group keeps group g's 4-byte words of its 4 rows in 16 bytes, so one load
 * holds a word of every row and the row is picked by lane. With the dot-product extension
 * (__ARM_FEATURE_DOTPROD, Armv8.4 and most Armv8.2 cores) `sdot` adds four byte products of a
 * weight row and an activation word into a 32-bit lane; without it `smull` forms 16-bit products
 * and `sadalp` adds their pairs into 32-bit lanes (two per row, paired up at the end of a
 * sub-block). Both are signed by signed: the codes of every type but Q8_0 are below 64, so they
 * are valid signed bytes as they are, and this level packs Q8_0's codes back to the signed
 * weights (no correction term). The integer sums are exact, and the float work per sub-block is
 * the other levels' (acc = fma(isum, d * d_a, acc), then fma(m, s, acc)), so the results equal
 * theirs bit for bit. */
#if defined(__ARM_NEON) && defined(__aarch64__)
#include <arm_neon.h>
#include <string.h>

#include "matmul.h"

enum { P = 8, GQ = 4, GF = 8 };

/* The portable packer, with Q8_0's offset codes turned back into signed weights. */
static void pack_q_neon(const mm_weight_format *f, const char *w, size_t row_stride, int rows,
                        int64_t b0, int64_t n_blocks, int p, uint8_t *qs, float *d, float *m)
{
    mm_pack_q_generic(f, w, row_stride, rows, b0, n_blocks, p, qs, d, m);
    if (f->type != GGTK_TENSOR_Q8_0)
        return;
    const uint8x16_t sign = vdupq_n_u8(0x80);
    for (size_t i = 0; i < (size_t)n_blocks * (size_t)p * MM_BLOCK; i += 16)
        vst1q_u8(qs + i, veorq_u8(vld1q_u8(qs + i), sign));
}

/* Adds the dot products of group word `lane` of `a` with weight rows `w` (4 rows x 4 bytes) into
 * `sum`: with sdot one 32-bit lane per row; otherwise two per row (lo: rows 0-1, hi: rows 2-3). */
#if defined(__ARM_FEATURE_DOTPROD)
typedef struct row_sums {
    int32x4_t v;
} row_sums;

#define DOT_GROUP(sum, w, a, lane) ((sum).v = vdotq_laneq_s32((sum).v, (w), (a), (lane)))

static inline row_sums row_sums_start(int32_t start)
{
    return (row_sums){vdupq_n_s32(start)};
}

static inline int32x4_t row_sums_total(row_sums s)
{
    return s.v;
}
#else
typedef struct row_sums {
    int32x4_t lo, hi;
    int32_t start;
} row_sums;

#define DOT_GROUP(sum, w, a, lane)                                                              \
    do {                                                                                        \
        const int8x16_t word_ = vreinterpretq_s8_s32(vdupq_laneq_s32(vreinterpretq_s32_s8(a), (lane))); \
        (sum).lo = vpadalq_s16((sum).lo, vmull_s8(vget_low_s8(w), vget_low_s8(word_)));          \
        (sum).hi = vpadalq_s16((sum).hi, vmull_high_s8((w), word_));                            \
    } while (0)

static inline row_sums row_sums_start(int32_t start)
{
    return (row_sums){vdupq_n_s32(0), vdupq_n_s32(0), start};
}

static inline int32x4_t row_sums_total(row_sums s)
{
    return vaddq_s32(vpaddq_s32(s.lo, s.hi), vdupq_n_s32(s.start));
}
#endif

/* The tile over n_blocks blocks for weights with `subs` sub-blocks per block, `affine` or
 * symmetric (`signed_q8`: Q8_0's signed form, no correction). */
static inline __attribute__((always_inline)) void gemm_q_tile(const uint8_t *qs, const float *d,
                                                              const float *m, const uint8_t *act,
                                                              int64_t n_blocks, int subs, int affine,
                                                              int signed_q8, float32x4_t acc[GQ][2])
{
    const int gps = 8 / subs;
    for (int j = 0; j < GQ; j++)
        acc[j][0] = acc[j][1] = vdupq_n_f32(0.0f);
    for (int64_t b = 0; b < n_blocks; b++) {
        const int8_t *wq = (const int8_t *)qs + (size_t)b * P * MM_BLOCK;
        const uint8_t *aq = act + (size_t)b * mm_act_block_bytes(GQ, subs, 1);
        const float *ad = (const float *)(aq + GQ * MM_BLOCK);
        const int32_t *ac = (const int32_t *)(ad + GQ);
        for (int s = 0; s < subs; s++) {
            const float *ds = d + (b * subs + s) * P, *ms = m + (b * subs + s) * P;
            row_sums sum[GQ][2];
            for (int j = 0; j < GQ; j++)
                sum[j][0] = sum[j][1] = row_sums_start(affine || signed_q8 ? 0 : ac[s * GQ + j]);
            for (int g = s * gps; g < (s + 1) * gps; g++) {
                const int8x16_t a = vld1q_s8((const int8_t *)aq + g * GQ * 4);
                for (int r = 0; r < 2; r++) {
                    const int8x16_t w = vld1q_s8(wq + (g * P + 4 * r) * 4);
                    DOT_GROUP(sum[0][r], w, a, 0);
                    DOT_GROUP(sum[1][r], w, a, 1);
                    DOT_GROUP(sum[2][r], w, a, 2);
                    DOT_GROUP(sum[3][r], w, a, 3);
                }
            }
            for (int j = 0; j < GQ; j++) {
                const float32x4_t da = vdupq_n_f32(ad[j]);
                for (int r = 0; r < 2; r++)
                    acc[j][r] = vfmaq_f32(acc[j][r], vcvtq_f32_s32(row_sums_total(sum[j][r])),
                                          vmulq_f32(vld1q_f32(ds + 4 * r), da));
                if (affine) {
                    float sa;
                    memcpy(&sa, &ac[s * GQ + j], sizeof sa);
                    for (int r = 0; r < 2; r++)
                        acc[j][r] = vfmaq_f32(acc[j][r], vld1q_f32(ms + 4 * r), vdupq_n_f32(sa));
                }
            }
        }
    }
}

/* Write (or add) rows j < nr, columns i < m_valid of a tile of g rows of P floats. */
static void store_tile(const float *tile, int g, int nr, float *dst, size_t dst_stride, int m_valid,
                       mm_store store)
{
    for (int j = 0; j < g && j < nr; j++) {
        float *row = (float *)((char *)dst + (size_t)j * dst_stride);
        const float *src = tile + j * P;
        if (m_valid == P) {
            for (int i = 0; i < P; i += 4) {
                float32x4_t v = vld1q_f32(src + i);
                vst1q_f32(row + i, store == MM_ADD ? vaddq_f32(vld1q_f32(row + i), v) : v);
            }
            continue;
        }
        for (int i = 0; i < m_valid; i++)
            row[i] = store == MM_ADD ? row[i] + src[i] : src[i];
    }
}

static void gemm_q_neon(const mm_weight_format *f, const uint8_t *qs, const float *d,
                        const float *m, const uint8_t *act, int64_t n_blocks, int nr, float *dst,
                        size_t dst_stride, int m_valid, mm_store store)
{
    float32x4_t acc[GQ][2];
    /* One specialisation per (sub-blocks, affine, signed) the formats use. */
    if (f->type == GGTK_TENSOR_Q8_0)
        gemm_q_tile(qs, d, m, act, n_blocks, 1, 0, 1, acc);
    else if (f->subs == 1)
        f->affine ? gemm_q_tile(qs, d, m, act, n_blocks, 1, 1, 0, acc)
                  : gemm_q_tile(qs, d, m, act, n_blocks, 1, 0, 0, acc);
    else
        f->affine ? gemm_q_tile(qs, d, m, act, n_blocks, 2, 1, 0, acc)
                  : gemm_q_tile(qs, d, m, act, n_blocks, 2, 0, 0, acc);
    float tile[GQ * P];
    for (int j = 0; j < GQ; j++) {
        vst1q_f32(tile + j * P, acc[j][0]);
        vst1q_f32(tile + j * P + 4, acc[j][1]);
    }
    store_tile(tile, GQ, nr, dst, dst_stride, m_valid, store);
}

/* Float tile: one fused multiply-add per weight vector per activation element, the activation
 * picked by lane from the two vectors holding the group's 8 values of element k. */
static void gemm_f_neon(const float *panel, const float *act, int64_t K, int nr, float *dst,
                        size_t dst_stride, int m_valid, mm_store store)
{
    float32x4_t acc[GF][2];
    for (int j = 0; j < GF; j++)
        acc[j][0] = acc[j][1] = vdupq_n_f32(0.0f);
    for (int64_t k = 0; k < K; k++) {
        const float32x4_t w0 = vld1q_f32(panel + k * P), w1 = vld1q_f32(panel + k * P + 4);
        const float32x4_t a0 = vld1q_f32(act + k * GF), a1 = vld1q_f32(act + k * GF + 4);
#define FMA_ROW(j, a, lane)                                          \
    acc[j][0] = vfmaq_laneq_f32(acc[j][0], w0, (a), (lane));         \
    acc[j][1] = vfmaq_laneq_f32(acc[j][1], w1, (a), (lane))
        FMA_ROW(0, a0, 0);
        FMA_ROW(1, a0, 1);
        FMA_ROW(2, a0, 2);
        FMA_ROW(3, a0, 3);
        FMA_ROW(4, a1, 0);
        FMA_ROW(5, a1, 1);
        FMA_ROW(6, a1, 2);
        FMA_ROW(7, a1, 3);
#undef FMA_ROW
    }
    float tile[GF * P];
    for (int j = 0; j < GF; j++) {
        vst1q_f32(tile + j * P, acc[j][0]);
        vst1q_f32(tile + j * P + 4, acc[j][1]);
    }
    store_tile(tile, GF, nr, dst, dst_stride, m_valid, store);
}

const mm_kernels mm_kernels_neon = {
    .name = "neon",
    .panel_rows = P,
    .q_group = GQ,
    .f_group = GF,
    .pack_q = pack_q_neon,
    .gemm_q = gemm_q_neon,
    .pack_f = mm_pack_f_generic,
    .pack_act_f = mm_pack_act_f_generic,
    .gemm_f = gemm_f_neon,
};
#else
/* ISO C forbids an empty translation unit; this file has code only on arm64. */
typedef int matmul_neon_unused;
#endif
