/* matmul_avx512.c - AVX-512 kernels of the matrix product (formats: matmul.h).
 *
 * Tiles: 32 weight rows (two 16-lane vectors) by 6 quantized or 12 float activation rows.
 * Quantized: per block of 32, vpdpbusd accumulates each (weight row, activation row) dot product
 * in a 32-bit lane starting from the activation's correction value; then one convert and one
 * multiply-add by the two scales moves it into a float accumulator. The 4-byte activation groups
 * are broadcast straight from memory. Float: one FMA per weight vector per activation element.
 * Panels are packed with gathers (weights rows are far apart, the panel wants them side by
 * side). */
#include <immintrin.h>
#include <stdint.h>
#include <string.h>

#include "matmul.h"
#include "engine/quant_kernels/quant_internal.h"

enum { P = 32, GQ = 6, GF = 12 };

/* ----------------------------------------------------------------------------------------------
 * Packing
 * -------------------------------------------------------------------------------------------- */

static __mmask16 row_mask(int rows, int half)
{
    int n = rows - 16 * half;
    return n >= 16 ? (__mmask16)0xFFFF : n <= 0 ? (__mmask16)0 : (__mmask16)((1u << n) - 1);
}

/* Q8_0, Q4_0 and Q4_1 panels are gathered 16 rows at a time; the other types use the AVX2
 * packer. */
static void pack_q_avx512(const mm_weight_format *f, const char *w, size_t row_stride, int rows,
                          int64_t b0, int64_t n_blocks, int p, uint8_t *qs, float *d, float *m)
{
    const ggtk_tensor_type type = f->type;
    if (p != P || (uint64_t)row_stride * P > INT32_MAX ||
        (type != GGTK_TENSOR_Q8_0 && type != GGTK_TENSOR_Q4_0 && type != GGTK_TENSOR_Q4_1)) {
        mm_pack_q_x86(f, w, row_stride, rows, b0, n_blocks, p, qs, d, m);
        return;
    }
    const size_t bytes = type == GGTK_TENSOR_Q8_0   ? sizeof(block_q8_0)
                         : type == GGTK_TENSOR_Q4_0 ? sizeof(block_q4_0)
                                                    : sizeof(block_q4_1);
    const int qs_offset = type == GGTK_TENSOR_Q4_1 ? 4 : 2;
    const __m512i lane = _mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15);
    const __m512i low_nibbles = _mm512_set1_epi8(0x0F), flip = _mm512_set1_epi8((char)0x80);
    for (int half = 0; half < 2; half++) {
        const __mmask16 mask = row_mask(rows, half);
        const __m512i offsets = _mm512_mullo_epi32(_mm512_add_epi32(lane, _mm512_set1_epi32(16 * half)),
                                                   _mm512_set1_epi32((int)row_stride));
        for (int64_t b = 0; b < n_blocks; b++) {
            const char *block = w + (size_t)(b0 + b) * bytes;
            uint8_t *out = qs + (size_t)b * P * MM_BLOCK + (size_t)half * 64;
            const __m512i head = _mm512_mask_i32gather_epi32(_mm512_setzero_si512(), mask, offsets, block, 1);
            _mm512_storeu_ps(d + b * P + 16 * half, _mm512_cvtph_ps(_mm512_cvtepi32_epi16(head)));
            if (type == GGTK_TENSOR_Q4_1)
                _mm512_storeu_ps(m + b * P + 16 * half,
                                 _mm512_cvtph_ps(_mm512_cvtepi32_epi16(_mm512_srli_epi32(head, 16))));
            if (type == GGTK_TENSOR_Q8_0) {
                for (int g = 0; g < 8; g++) {
                    __m512i v = _mm512_mask_i32gather_epi32(_mm512_setzero_si512(), mask, offsets,
                                                            block + qs_offset + 4 * g, 1);
                    v = _mm512_mask_xor_epi32(v, mask, v, flip);
                    _mm512_storeu_si512(out + g * P * 4, v);
                }
                continue;
            }
            for (int g = 0; g < 4; g++) {
                const __m512i v = _mm512_mask_i32gather_epi32(_mm512_setzero_si512(), mask, offsets,
                                                              block + qs_offset + 4 * g, 1);
                _mm512_storeu_si512(out + g * P * 4, _mm512_and_si512(v, low_nibbles));
                _mm512_storeu_si512(out + (g + 4) * P * 4,
                                    _mm512_and_si512(_mm512_srli_epi16(v, 4), low_nibbles));
            }
        }
    }
}

/* 16 consecutive floats of `type` at `at` (masked), widened to F32. */
static __m512 load_16(ggtk_tensor_type type, const char *at, __mmask16 mask)
{
    if (type == GGTK_TENSOR_F32)
        return _mm512_maskz_loadu_ps(mask, at);
    const __m256i h = _mm256_maskz_loadu_epi16(mask, at);
    if (type == GGTK_TENSOR_F16)
        return _mm512_cvtph_ps(h);
    return _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_cvtepu16_epi32(h), 16));
}

/* Widen 16 gathered 32-bit words whose low (or high) halves are F16/BF16 values. */
static __m512 widen_halves(ggtk_tensor_type type, __m512i words, int high)
{
    const __m512i bits = high ? _mm512_srli_epi32(words, 16) : _mm512_and_si512(words, _mm512_set1_epi32(0xFFFF));
    if (type == GGTK_TENSOR_F16)
        return _mm512_cvtph_ps(_mm512_cvtepi32_epi16(bits));
    return _mm512_castsi512_ps(_mm512_slli_epi32(bits, 16));
}

static void pack_f_avx512(ggtk_tensor_type type, const char *w, size_t nb0, size_t nb1, int rows,
                          int64_t K, int p, float *panel)
{
    const size_t esize = type == GGTK_TENSOR_F32 ? 4 : 2;
    if (p != P) {
        mm_pack_f_generic(type, w, nb0, nb1, rows, K, p, panel);
        return;
    }
    if (nb1 == esize) { /* a transposed view: each k's 32 rows are side by side */
        for (int64_t k = 0; k < K; k++)
            for (int half = 0; half < 2; half++)
                _mm512_storeu_ps(panel + k * P + 16 * half,
                                 load_16(type, w + (size_t)k * nb0 + (size_t)(16 * half) * esize,
                                         row_mask(rows, half)));
        return;
    }
    if (nb0 != esize || (uint64_t)nb1 * P > INT32_MAX) {
        mm_pack_f_generic(type, w, nb0, nb1, rows, K, p, panel);
        return;
    }
    const __m512i lane = _mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15);
    for (int half = 0; half < 2; half++) {
        const __mmask16 mask = row_mask(rows, half);
        const __m512i offsets = _mm512_mullo_epi32(_mm512_add_epi32(lane, _mm512_set1_epi32(16 * half)),
                                                   _mm512_set1_epi32((int)nb1));
        float *out = panel + 16 * half;
        int64_t k = 0;
        if (esize == 4) {
            for (; k < K; k++)
                _mm512_storeu_ps(out + k * P, _mm512_mask_i32gather_ps(_mm512_setzero_ps(), mask, offsets,
                                                                       w + k * 4, 1));
            continue;
        }
        /* Two 16-bit elements per gathered word: k and k + 1 of each row. */
        for (; k + 1 < K; k += 2) {
            const __m512i words = _mm512_mask_i32gather_epi32(_mm512_setzero_si512(), mask, offsets,
                                                              w + k * 2, 1);
            _mm512_storeu_ps(out + k * P, widen_halves(type, words, 0));
            _mm512_storeu_ps(out + (k + 1) * P, widen_halves(type, words, 1));
        }
        for (; k < K; k++) {
            float column[16] = {0};
            for (int i = 0; i < 16 && 16 * half + i < rows; i++) {
                uint16_t h;
                memcpy(&h, w + (size_t)(16 * half + i) * nb1 + (size_t)k * 2, 2);
                column[i] = type == GGTK_TENSOR_F16 ? inf_fp16_to_fp32(h) : inf_bf16_to_fp32(h);
            }
            _mm512_storeu_ps(out + k * P, _mm512_loadu_ps(column));
        }
    }
}

/* Transpose a 16 x 16 block of floats held in r[0..15] (rows) into columns, in place. */
static inline void transpose_16x16(__m512 r[16])
{
    __m512 t[16];
#pragma GCC unroll 8
    for (int i = 0; i < 8; i++) {
        t[2 * i] = _mm512_unpacklo_ps(r[2 * i], r[2 * i + 1]);
        t[2 * i + 1] = _mm512_unpackhi_ps(r[2 * i], r[2 * i + 1]);
    }
#pragma GCC unroll 4
    for (int i = 0; i < 4; i++) {
        r[4 * i] = _mm512_shuffle_ps(t[4 * i], t[4 * i + 2], 0x44);
        r[4 * i + 1] = _mm512_shuffle_ps(t[4 * i], t[4 * i + 2], 0xEE);
        r[4 * i + 2] = _mm512_shuffle_ps(t[4 * i + 1], t[4 * i + 3], 0x44);
        r[4 * i + 3] = _mm512_shuffle_ps(t[4 * i + 1], t[4 * i + 3], 0xEE);
    }
    /* r[4i + c] now holds, per 128-bit lane L, elements 4L..4L+3 of column c of rows 4i..4i+3. */
#pragma GCC unroll 4
    for (int c = 0; c < 4; c++) {
        const __m512 a = _mm512_shuffle_f32x4(r[c], r[4 + c], 0x88);
        const __m512 b = _mm512_shuffle_f32x4(r[c], r[4 + c], 0xDD);
        const __m512 e = _mm512_shuffle_f32x4(r[8 + c], r[12 + c], 0x88);
        const __m512 f = _mm512_shuffle_f32x4(r[8 + c], r[12 + c], 0xDD);
        t[c] = _mm512_shuffle_f32x4(a, e, 0x88);      /* column c      */
        t[4 + c] = _mm512_shuffle_f32x4(b, f, 0x88);  /* column c + 4  */
        t[8 + c] = _mm512_shuffle_f32x4(a, e, 0xDD);  /* column c + 8  */
        t[12 + c] = _mm512_shuffle_f32x4(b, f, 0xDD); /* column c + 12 */
    }
#pragma GCC unroll 16
    for (int i = 0; i < 16; i++)
        r[i] = t[i];
}

/* Activation rows to [k][GF] by 16 x 16 register transposes (rows past GF are zeros). */
static void pack_act_f_avx512(const float *const *rows, int g, int64_t K, float *group)
{
    if (g != GF) {
        mm_pack_act_f_generic(rows, g, K, group);
        return;
    }
    for (int64_t k = 0; k < K; k += 16) {
        const int64_t n = K - k < 16 ? K - k : 16;
        const __mmask16 mask = (__mmask16)((1u << n) - 1);
        __m512 r[16];
#pragma GCC unroll 16
        for (int j = 0; j < 16; j++)
            r[j] = j < GF && rows[j] ? _mm512_maskz_loadu_ps(mask, rows[j] + k) : _mm512_setzero_ps();
        transpose_16x16(r);
        for (int64_t c = 0; c < n; c++)
            _mm512_mask_storeu_ps(group + (k + c) * GF, (__mmask16)((1u << GF) - 1), r[c]);
    }
}

/* ----------------------------------------------------------------------------------------------
 * Products
 * -------------------------------------------------------------------------------------------- */

/* Store the 32 x G accumulator tile (row j of the group is dst row j), masked to nr x m_valid. */
static inline void store_tile(__m512 acc[][2], int g, int nr, float *dst, size_t dst_stride,
                              int m_valid, mm_store store)
{
    const __mmask16 m0 = row_mask(m_valid, 0), m1 = row_mask(m_valid, 1);
#pragma GCC unroll 16
    for (int j = 0; j < g && j < nr; j++) {
        float *row = (float *)((char *)dst + (size_t)j * dst_stride);
        __m512 v0 = acc[j][0], v1 = acc[j][1];
        if (store == MM_STREAM && m_valid == P && ((uintptr_t)row & 63) == 0) {
            _mm512_stream_ps(row, v0);
            _mm512_stream_ps(row + 16, v1);
            continue;
        }
        if (store == MM_ADD) {
            v0 = _mm512_add_ps(v0, _mm512_maskz_loadu_ps(m0, row));
            v1 = _mm512_add_ps(v1, _mm512_maskz_loadu_ps(m1, row + 16));
        }
        _mm512_mask_storeu_ps(row, m0, v0);
        _mm512_mask_storeu_ps(row + 16, m1, v1);
    }
}

/* One quantized tile for weights with `subs` sub-blocks per block, `affine` or symmetric. */
static inline __attribute__((always_inline)) void gemm_q_tile(const uint8_t *qs, const float *d,
                                                              const float *m, const uint8_t *act,
                                                              int64_t n_blocks, int subs, int affine,
                                                              __m512 acc[GQ][2])
{
    const int groups = 8 / subs;
#pragma GCC unroll 16
    for (int j = 0; j < GQ; j++)
        acc[j][0] = acc[j][1] = _mm512_setzero_ps();
    for (int64_t b = 0; b < n_blocks; b++) {
        const uint8_t *wq = qs + (size_t)b * P * MM_BLOCK;
        const uint8_t *aq = act + (size_t)b * mm_act_block_bytes(GQ, subs, 1);
        const float *ad = (const float *)(aq + GQ * MM_BLOCK);
        const int32_t *ac = (const int32_t *)(ad + GQ);
#pragma GCC unroll 2
        for (int s = 0; s < subs; s++) {
            __m512i sum[GQ][2];
#pragma GCC unroll 16
            for (int j = 0; j < GQ; j++)
                sum[j][0] = sum[j][1] = affine ? _mm512_setzero_si512() : _mm512_set1_epi32(ac[s * GQ + j]);
#pragma GCC unroll 8
            for (int g = s * groups; g < (s + 1) * groups; g++) {
                const __m512i w0 = _mm512_loadu_si512(wq + g * P * 4);
                const __m512i w1 = _mm512_loadu_si512(wq + g * P * 4 + 64);
#pragma GCC unroll 16
                for (int j = 0; j < GQ; j++) {
                    int32_t a4;
                    memcpy(&a4, aq + (g * GQ + j) * 4, 4);
                    const __m512i a = _mm512_set1_epi32(a4);
                    sum[j][0] = _mm512_dpbusd_epi32(sum[j][0], w0, a);
                    sum[j][1] = _mm512_dpbusd_epi32(sum[j][1], w1, a);
                }
            }
            const float *ds = d + (b * subs + s) * P;
            const __m512 d0 = _mm512_loadu_ps(ds), d1 = _mm512_loadu_ps(ds + 16);
#pragma GCC unroll 16
            for (int j = 0; j < GQ; j++) {
                const __m512 da = _mm512_set1_ps(ad[j]);
                acc[j][0] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(sum[j][0]), _mm512_mul_ps(d0, da), acc[j][0]);
                acc[j][1] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(sum[j][1]), _mm512_mul_ps(d1, da), acc[j][1]);
            }
            if (affine) {
                const float *ms = m + (b * subs + s) * P;
                const __m512 m0 = _mm512_loadu_ps(ms), m1 = _mm512_loadu_ps(ms + 16);
#pragma GCC unroll 16
                for (int j = 0; j < GQ; j++) {
                    float sa;
                    memcpy(&sa, &ac[s * GQ + j], sizeof sa);
                    const __m512 vs = _mm512_set1_ps(sa);
                    acc[j][0] = _mm512_fmadd_ps(m0, vs, acc[j][0]);
                    acc[j][1] = _mm512_fmadd_ps(m1, vs, acc[j][1]);
                }
            }
        }
    }
}

static void gemm_q_avx512(const mm_weight_format *f, const uint8_t *qs, const float *d,
                          const float *m, const uint8_t *act, int64_t n_blocks, int nr, float *dst,
                          size_t dst_stride, int m_valid, mm_store store)
{
    __m512 acc[GQ][2];
    if (f->subs == 1 && f->affine)
        gemm_q_tile(qs, d, m, act, n_blocks, 1, 1, acc);
    else if (f->subs == 1)
        gemm_q_tile(qs, d, m, act, n_blocks, 1, 0, acc);
    else if (f->affine)
        gemm_q_tile(qs, d, m, act, n_blocks, 2, 1, acc);
    else
        gemm_q_tile(qs, d, m, act, n_blocks, 2, 0, acc);
    store_tile(acc, GQ, nr, dst, dst_stride, m_valid, store);
}

static void gemm_f_avx512(const float *panel, const float *act, int64_t K, int nr, float *dst,
                          size_t dst_stride, int m_valid, mm_store store)
{
    __m512 acc[GF][2];
    #pragma GCC unroll 16
    for (int j = 0; j < GF; j++)
        acc[j][0] = acc[j][1] = _mm512_setzero_ps();
    for (int64_t k = 0; k < K; k++) {
        const __m512 w0 = _mm512_loadu_ps(panel + k * P), w1 = _mm512_loadu_ps(panel + k * P + 16);
        #pragma GCC unroll 16
        for (int j = 0; j < GF; j++) {
            const __m512 a = _mm512_set1_ps(act[k * GF + j]);
            acc[j][0] = _mm512_fmadd_ps(w0, a, acc[j][0]);
            acc[j][1] = _mm512_fmadd_ps(w1, a, acc[j][1]);
        }
    }
    store_tile(acc, GF, nr, dst, dst_stride, m_valid, store);
}

const mm_kernels mm_kernels_avx512 = {
    .name = "avx512",
    .panel_rows = P,
    .q_group = GQ,
    .f_group = GF,
    .pack_q = pack_q_avx512,
    .gemm_q = gemm_q_avx512,
    .pack_f = pack_f_avx512,
    .pack_act_f = pack_act_f_avx512,
    .gemm_f = gemm_f_avx512,
};
