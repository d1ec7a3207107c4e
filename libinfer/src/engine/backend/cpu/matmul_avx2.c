/* matmul_avx2.c - AVX2 kernels of the matrix product (formats: matmul.h), for CPUs without
 * AVX-512. Tiles: 16 weight rows (two 8-lane vectors) by 4 quantized or 6 float activation rows.
 *
 * Without VNNI the byte dot product is vpmaddubsw (unsigned x signed bytes to saturating 16-bit
 * pair sums) then vpmaddwd by ones. Q4 nibbles are small enough to add eight group results in
 * 16 bits before widening. Q8_0 weights would saturate in the unsigned (q + 128) form, so this
 * level packs them signed and uses |w| * sign(a, w) instead, with no correction term. */
#include <immintrin.h>
#include <stdint.h>
#include <string.h>

#include "matmul.h"

enum { P = 16, GQ = 4, GF = 6 };

static void pack_q_avx2(const mm_weight_format *f, const char *w, size_t row_stride, int rows,
                        int64_t b0, int64_t n_blocks, int p, uint8_t *qs, float *d, float *m)
{
    mm_pack_q_generic(f, w, row_stride, rows, b0, n_blocks, p, qs, d, m);
    if (f->type != GGTK_TENSOR_Q8_0)
        return;
    const size_t n = (size_t)n_blocks * (size_t)p * MM_BLOCK;
    for (size_t i = 0; i < n; i++)
        qs[i] ^= 0x80; /* back to the signed codes */
}

/* Integer dot products of one 4-byte group of 16 weight rows with one activation row. */
static inline __m256i dot_q8(__m256i w, __m256i a)
{
    return _mm256_maddubs_epi16(_mm256_sign_epi8(w, w), _mm256_sign_epi8(a, w));
}

/* One quantized tile for weights with `subs` sub-blocks per block, `affine` or symmetric;
 * `signed_q8` for Q8_0's signed bytes, otherwise `run` groups of 16-bit pair sums are added
 * before widening (run * 2 * max_code * 127 must fit in int16). */
static inline __attribute__((always_inline)) void gemm_q_tile(const uint8_t *qs, const float *d,
                                                              const float *m, const uint8_t *act,
                                                              int64_t n_blocks, int subs, int affine,
                                                              int signed_q8, int run,
                                                              __m256 acc[GQ][2])
{
    const __m256i ones = _mm256_set1_epi16(1);
    const int groups = 8 / subs;
#pragma GCC unroll 8
    for (int j = 0; j < GQ; j++)
        acc[j][0] = acc[j][1] = _mm256_setzero_ps();
    for (int64_t b = 0; b < n_blocks; b++) {
        const uint8_t *wq = qs + (size_t)b * P * MM_BLOCK;
        const uint8_t *aq = act + (size_t)b * mm_act_block_bytes(GQ, subs);
        const float *ad = (const float *)(aq + GQ * MM_BLOCK);
        const int32_t *ac = (const int32_t *)(ad + GQ);
#pragma GCC unroll 2
        for (int s = 0; s < subs; s++) {
            const float *ds = d + (b * subs + s) * P, *ms = m + (b * subs + s) * P;
            const __m256 d0 = _mm256_loadu_ps(ds), d1 = _mm256_loadu_ps(ds + 8);
#pragma GCC unroll 8
            for (int j = 0; j < GQ; j++) {
                __m256i s0 = affine || signed_q8 ? _mm256_setzero_si256() : _mm256_set1_epi32(ac[s * GQ + j]);
                __m256i s1 = s0;
#pragma GCC unroll 8
                for (int g0 = s * groups; g0 < (s + 1) * groups; g0 += run) {
                    __m256i p0 = _mm256_setzero_si256(), p1 = _mm256_setzero_si256();
#pragma GCC unroll 8
                    for (int g = g0; g < g0 + run; g++) {
                        int32_t a4;
                        memcpy(&a4, aq + (g * GQ + j) * 4, 4);
                        const __m256i a = _mm256_set1_epi32(a4);
                        const __m256i w0 = _mm256_loadu_si256((const __m256i *)(wq + g * P * 4));
                        const __m256i w1 = _mm256_loadu_si256((const __m256i *)(wq + g * P * 4 + 32));
                        if (signed_q8) {
                            p0 = _mm256_add_epi32(p0, _mm256_madd_epi16(dot_q8(w0, a), ones));
                            p1 = _mm256_add_epi32(p1, _mm256_madd_epi16(dot_q8(w1, a), ones));
                        } else {
                            p0 = _mm256_add_epi16(p0, _mm256_maddubs_epi16(w0, a));
                            p1 = _mm256_add_epi16(p1, _mm256_maddubs_epi16(w1, a));
                        }
                    }
                    if (!signed_q8) {
                        p0 = _mm256_madd_epi16(p0, ones);
                        p1 = _mm256_madd_epi16(p1, ones);
                    }
                    s0 = _mm256_add_epi32(s0, p0);
                    s1 = _mm256_add_epi32(s1, p1);
                }
                const __m256 da = _mm256_set1_ps(ad[j]);
                acc[j][0] = _mm256_fmadd_ps(_mm256_cvtepi32_ps(s0), _mm256_mul_ps(d0, da), acc[j][0]);
                acc[j][1] = _mm256_fmadd_ps(_mm256_cvtepi32_ps(s1), _mm256_mul_ps(d1, da), acc[j][1]);
                if (affine) {
                    float sa;
                    memcpy(&sa, &ac[s * GQ + j], sizeof sa);
                    const __m256 vs = _mm256_set1_ps(sa);
                    acc[j][0] = _mm256_fmadd_ps(_mm256_loadu_ps(ms), vs, acc[j][0]);
                    acc[j][1] = _mm256_fmadd_ps(_mm256_loadu_ps(ms + 8), vs, acc[j][1]);
                }
            }
        }
    }
}

/* Write (or add) rows j < nr, columns i < m_valid of a tile. */
static void store_tile(const float *tile, int g, int nr, float *dst, size_t dst_stride, int m_valid,
                       mm_store store)
{
    for (int j = 0; j < g && j < nr; j++) {
        float *row = (float *)((char *)dst + (size_t)j * dst_stride);
        const float *src = tile + j * P;
        if (m_valid == P && store != MM_ADD) {
            _mm256_storeu_ps(row, _mm256_loadu_ps(src));
            _mm256_storeu_ps(row + 8, _mm256_loadu_ps(src + 8));
            continue;
        }
        for (int i = 0; i < m_valid; i++)
            row[i] = store == MM_ADD ? row[i] + src[i] : src[i];
    }
}

static void gemm_q_avx2(const mm_weight_format *f, const uint8_t *qs, const float *d,
                        const float *m, const uint8_t *act, int64_t n_blocks, int nr, float *dst,
                        size_t dst_stride, int m_valid, mm_store store)
{
    __m256 acc[GQ][2];
    /* One specialisation per (sub-blocks, affine, form, 16-bit run) the formats use. */
    const int run = f->max_code <= 15 ? 8 : f->max_code <= 31 ? 4 : 2;
    if (f->type == GGTK_TENSOR_Q8_0)
        gemm_q_tile(qs, d, m, act, n_blocks, 1, 0, 1, 1, acc);
    else if (f->subs == 1 && run == 8)
        f->affine ? gemm_q_tile(qs, d, m, act, n_blocks, 1, 1, 0, 8, acc)
                  : gemm_q_tile(qs, d, m, act, n_blocks, 1, 0, 0, 8, acc);
    else if (f->subs == 1)
        f->affine ? gemm_q_tile(qs, d, m, act, n_blocks, 1, 1, 0, 4, acc)
                  : gemm_q_tile(qs, d, m, act, n_blocks, 1, 0, 0, 4, acc);
    else if (run == 2)
        gemm_q_tile(qs, d, m, act, n_blocks, 2, 0, 0, 2, acc);
    else
        f->affine ? gemm_q_tile(qs, d, m, act, n_blocks, 2, 1, 0, 4, acc)
                  : gemm_q_tile(qs, d, m, act, n_blocks, 2, 0, 0, 4, acc);
    float tile[GQ * P];
#pragma GCC unroll 8
    for (int j = 0; j < GQ; j++) {
        _mm256_storeu_ps(tile + j * P, acc[j][0]);
        _mm256_storeu_ps(tile + j * P + 8, acc[j][1]);
    }
    store_tile(tile, GQ, nr, dst, dst_stride, m_valid, store);
}

static void gemm_f_avx2(const float *panel, const float *act, int64_t K, int nr, float *dst,
                        size_t dst_stride, int m_valid, mm_store store)
{
    __m256 acc[GF][2];
#pragma GCC unroll 8
    for (int j = 0; j < GF; j++)
        acc[j][0] = acc[j][1] = _mm256_setzero_ps();
    for (int64_t k = 0; k < K; k++) {
        const __m256 w0 = _mm256_loadu_ps(panel + k * P), w1 = _mm256_loadu_ps(panel + k * P + 8);
#pragma GCC unroll 8
        for (int j = 0; j < GF; j++) {
            const __m256 a = _mm256_broadcast_ss(act + k * GF + j);
            acc[j][0] = _mm256_fmadd_ps(w0, a, acc[j][0]);
            acc[j][1] = _mm256_fmadd_ps(w1, a, acc[j][1]);
        }
    }
    float tile[GF * P];
#pragma GCC unroll 8
    for (int j = 0; j < GF; j++) {
        _mm256_storeu_ps(tile + j * P, acc[j][0]);
        _mm256_storeu_ps(tile + j * P + 8, acc[j][1]);
    }
    store_tile(tile, GF, nr, dst, dst_stride, m_valid, store);
}

const mm_kernels mm_kernels_avx2 = {
    .name = "avx2",
    .panel_rows = P,
    .q_group = GQ,
    .f_group = GF,
    .q_chunk_blocks = 48, /* 27 KiB of panel */
    .f_chunk = 1280,      /* 80 KiB of panel */
    .pack_q = pack_q_avx2,
    .gemm_q = gemm_q_avx2,
    .pack_f = mm_pack_f_generic,
    .pack_act_f = mm_pack_act_f_generic,
    .gemm_f = gemm_f_avx2,
};
