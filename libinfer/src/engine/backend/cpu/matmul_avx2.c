/* matmul_avx2.c - AVX2 kernels of the matrix product (formats: matmul.h), for CPUs without
 * AVX-512. Tiles: 16 weight rows (two 8-lane vectors) by 2 or 3 quantized activation rows (of a
 * group of 6; Q8_0 all 6) or by 6 float activation rows, so that a tile's live values fit 16 ymm
 * registers.
 *
 * Without VNNI the byte dot product is vpmaddubsw (unsigned x signed bytes to saturating 16-bit
 * pair sums) then vpmaddwd by ones. With activation codes in [-127, 127], a pair sum is at most
 * 2 * 127 * max_code, so 4-bit codes add eight group results in 16 bits before widening, 5-bit
 * codes four and Q6_K's 6-bit codes two. Q8_0 weights would saturate in the unsigned (q + 128)
 * form, so this level widens Q8_0's codes, weights and activations, to 16 bits
 * (mm_kernels.wide_q8_0) and multiplies them with vpmaddwd alone: one multiply per 16 products
 * into exact 32-bit pair sums, as many as vpmaddubsw and vpmaddwd gave together, with no sign
 * transfer per product and no correction per block (about 10% fewer vector operations than
 * multiplying |w| by the activation with the weight's sign XORed in, and four fewer live
 * registers). The integer sums are exact, so the results equal the other levels' bit for bit. */
#include <immintrin.h>
#include <stdint.h>
#include <string.h>

#include "matmul.h"
#include "engine/quant_kernels/kquant_quantize.h"
#include "engine/quant_kernels/quant_avx2.h"
#include "engine/quant_kernels/quant_internal.h"
#include "engine/quant_kernels/quant_kblocks.h"

enum { P = 16, GQ = 6, GF = 6 };

/* ----------------------------------------------------------------------------------------------
 * Packing: each row's 32 codes of a block are expanded in one register, and eight rows at a time
 * are transposed by 4-byte groups into the panel layout.
 * -------------------------------------------------------------------------------------------- */

/* Byte e (0..31) of the result: `value` where bit e of `bits` is set, else 0. */
static inline __m256i bits_to_bytes(uint32_t bits, uint8_t value)
{
    const __m256i pick = _mm256_setr_epi8(0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1, 1, 1,
                                          2, 2, 2, 2, 2, 2, 2, 2, 3, 3, 3, 3, 3, 3, 3, 3);
    const __m256i bit = _mm256_set1_epi64x((long long)0x8040201008040201ULL);
    const __m256i v = _mm256_and_si256(_mm256_shuffle_epi8(_mm256_set1_epi32((int)bits), pick), bit);
    return _mm256_and_si256(_mm256_cmpeq_epi8(v, bit), _mm256_set1_epi8((char)value));
}

/* The low `mask` bits of each byte of 32 bytes at p shifted right by `shift` (shift + bits of
 * mask <= 8, so 16-bit shifts never mix neighbouring bytes into the kept bits). */
static inline __m256i field(const uint8_t *p, int shift, uint8_t mask)
{
    const __m256i v = _mm256_loadu_si256((const __m256i *)p);
    return _mm256_and_si256(_mm256_srl_epi16(v, _mm_cvtsi32_si128(shift)), _mm256_set1_epi8((char)mask));
}

/* 16 bytes of nibbles: low nibbles are elements 0..15, high nibbles 16..31. */
static inline __m256i nibbles(const uint8_t *qs)
{
    const __m128i v = _mm_loadu_si128((const __m128i *)qs), low = _mm_set1_epi8(0x0F);
    return _mm256_set_m128i(_mm_and_si128(_mm_srli_epi16(v, 4), low), _mm_and_si128(v, low));
}

static inline uint32_t load_u32(const uint8_t *p)
{
    uint32_t v;
    memcpy(&v, p, sizeof v);
    return v;
}

/* The 32 unsigned codes of block b of a row (as mm_codes_fn). */
static inline __m256i block_codes(const mm_weight_format *f, const char *row, int64_t b)
{
    const int j = (int)(b % (QUANT_KBLOCK / MM_BLOCK));
    const int64_t sb = b / (QUANT_KBLOCK / MM_BLOCK);
    switch (f->type) {
    case GGTK_TENSOR_Q8_0: {
        const __m256i v = _mm256_loadu_si256((const __m256i *)((const block_q8_0 *)row + b)->qs);
        return _mm256_xor_si256(v, _mm256_set1_epi8((char)0x80));
    }
    case GGTK_TENSOR_Q4_0:
        return nibbles(((const block_q4_0 *)row + b)->qs);
    case GGTK_TENSOR_Q4_1:
        return nibbles(((const block_q4_1 *)row + b)->qs);
    case GGTK_TENSOR_Q5_0: {
        const block_q5_0 *blk = (const block_q5_0 *)row + b;
        return _mm256_or_si256(nibbles(blk->qs), bits_to_bytes(load_u32(blk->qh), 16));
    }
    case GGTK_TENSOR_Q5_1: {
        const block_q5_1 *blk = (const block_q5_1 *)row + b;
        return _mm256_or_si256(nibbles(blk->qs), bits_to_bytes(load_u32(blk->qh), 16));
    }
    case GGTK_TENSOR_Q4_K:
        return field(((const block_q4_K *)row + sb)->qs + 32 * (j / 2), 4 * (j % 2), 0x0F);
    case GGTK_TENSOR_Q5_K: {
        const block_q5_K *blk = (const block_q5_K *)row + sb;
        return _mm256_or_si256(field(blk->qs + 32 * (j / 2), 4 * (j % 2), 0x0F),
                               _mm256_slli_epi16(field(blk->qh, j, 1), 4));
    }
    case GGTK_TENSOR_Q6_K: {
        const block_q6_K *blk = (const block_q6_K *)row + sb;
        const int h = j / 4, s = j % 4;
        return _mm256_or_si256(field(blk->ql + 64 * h + 32 * (s % 2), 4 * (s / 2), 0x0F),
                               _mm256_slli_epi16(field(blk->qh + 32 * h, 2 * s, 3), 4));
    }
    case GGTK_TENSOR_Q3_K: {
        const block_q3_K *blk = (const block_q3_K *)row + sb;
        return _mm256_or_si256(field(blk->qs + 32 * (j / 4), 2 * (j % 4), 3),
                               _mm256_slli_epi16(field(blk->hmask, j, 1), 2));
    }
    case GGTK_TENSOR_Q2_K:
        return field(((const block_q2_K *)row + sb)->qs + 32 * (j / 4), 2 * (j % 4), 3);
    default: {
        uint8_t u[MM_BLOCK];
        f->codes(row, b, u);
        return _mm256_loadu_si256((const __m256i *)u);
    }
    }
}

/* Transpose eight rows' codes r[0..7] (4-byte groups g = 0..7 in each) in place into groups:
 * r[g] becomes group g of the 8 rows (row i's 4 bytes at 4i). */
static inline void transpose_groups(__m256i r[8])
{
    __m256i t[8], s[8];
    for (int i = 0; i < 4; i++) {
        t[2 * i] = _mm256_unpacklo_epi32(r[2 * i], r[2 * i + 1]);
        t[2 * i + 1] = _mm256_unpackhi_epi32(r[2 * i], r[2 * i + 1]);
    }
    for (int i = 0; i < 2; i++) {
        s[4 * i] = _mm256_unpacklo_epi64(t[4 * i], t[4 * i + 2]);
        s[4 * i + 1] = _mm256_unpackhi_epi64(t[4 * i], t[4 * i + 2]);
        s[4 * i + 2] = _mm256_unpacklo_epi64(t[4 * i + 1], t[4 * i + 3]);
        s[4 * i + 3] = _mm256_unpackhi_epi64(t[4 * i + 1], t[4 * i + 3]);
    }
    /* s[c] (rows 0..3) and s[4 + c] (rows 4..7) hold groups c and c + 4 in their two halves. */
    for (int c = 0; c < 4; c++) {
        r[c + 4] = _mm256_permute2x128_si256(s[c], s[4 + c], 0x31);
        r[c] = _mm256_permute2x128_si256(s[c], s[4 + c], 0x20);
    }
}

/* Store groups r[0..7] of 8 rows at out + g * p * 4. */
static inline void store_groups(const __m256i r[8], uint8_t *out, int p)
{
    for (int g = 0; g < 8; g++)
        _mm256_storeu_si256((__m256i *)(out + (size_t)g * p * 4), r[g]);
}

/* Ask for blocks [b, b + n_blocks) of each row into L2: the driver packs a panel's chunks in
 * order, multiplying every activation group in between, and a chunk's rows are too short (at
 * most MM_Q_CHUNK_BLOCKS blocks) for the hardware prefetchers to get ahead of them, so without
 * this each chunk starts with a cache miss on every line. Past the end of the matrix a prefetch
 * is harmless (it never faults). */
static void prefetch_next_chunk(const mm_weight_format *f, const char *w, size_t row_stride,
                                int rows, int64_t b, int64_t n_blocks)
{
    const ggtk_tensor_type_info *info = ggtk_tensor_type_info_get(f->type);
    const size_t begin = (size_t)b * MM_BLOCK / info->block_size * info->block_bytes;
    const size_t end = (size_t)(b + n_blocks) * MM_BLOCK / info->block_size * info->block_bytes;
    for (int i = 0; i < rows; i++)
        for (size_t at = begin; at < end; at += 64)
            _mm_prefetch(w + (size_t)i * row_stride + at, _MM_HINT_T1);
}

void mm_pack_q_x86(const mm_weight_format *f, const char *w, size_t row_stride, int rows,
                   int64_t b0, int64_t n_blocks, int p, uint8_t *qs, float *d, float *m)
{
    const int subs = f->subs;
    prefetch_next_chunk(f, w, row_stride, rows, b0 + n_blocks, n_blocks);
    /* Eight rows at a time, each read front to back: eight streams the prefetchers follow. */
    for (int i0 = 0; i0 < p; i0 += 8) {
        for (int64_t b = 0; b < n_blocks; b++) {
            uint8_t *out = qs + (size_t)b * (size_t)p * MM_BLOCK;
            __m256i r[8];
            for (int i = 0; i < 8; i++) {
                const char *row = w + (size_t)(i0 + i) * row_stride;
                float scale[2] = {0.0f, 0.0f}, min[2] = {0.0f, 0.0f};
                r[i] = _mm256_setzero_si256();
                if (i0 + i < rows) {
                    r[i] = block_codes(f, row, b0 + b);
                    f->scales(row, b0 + b, scale, min);
                }
                for (int s = 0; s < subs; s++) {
                    d[(b * subs + s) * p + i0 + i] = scale[s];
                    m[(b * subs + s) * p + i0 + i] = min[s];
                }
            }
            transpose_groups(r);
            store_groups(r, out + (size_t)i0 * 4, p);
        }
    }
}

/* Wide Q8_0 panels: for each block, 16 pairs gh = 2g + h (codes 4g + 2h, 4g + 2h + 1) of
 * [16 rows][2 int16], so that one vector holds a code pair of 8 rows as vpmaddwd pairs them; then
 * the eight rows' fp16 scales converted at once (F16C, exact). The minimum slots are unused. */
static void pack_q8_0_wide(const mm_weight_format *f, const char *w, size_t row_stride, int rows,
                           int64_t b0, int64_t n_blocks, int p, uint8_t *qs, float *d)
{
    /* within each 128-bit lane of a group (4 rows x 4 codes): every row's first pair, then every
     * row's second pair */
    const __m256i pairs = _mm256_setr_epi8(0, 1, 4, 5, 8, 9, 12, 13, 2, 3, 6, 7, 10, 11, 14, 15,
                                           0, 1, 4, 5, 8, 9, 12, 13, 2, 3, 6, 7, 10, 11, 14, 15);
    prefetch_next_chunk(f, w, row_stride, rows, b0 + n_blocks, n_blocks);
    for (int i0 = 0; i0 < p; i0 += 8) {
        for (int64_t b = 0; b < n_blocks; b++) {
            __m256i r[8];
            uint16_t half[8];
            for (int i = 0; i < 8; i++) {
                r[i] = _mm256_setzero_si256();
                half[i] = 0;
                if (i0 + i < rows) {
                    const block_q8_0 *blk = (const block_q8_0 *)(w + (size_t)(i0 + i) * row_stride) + b0 + b;
                    r[i] = _mm256_loadu_si256((const __m256i *)blk->qs);
                    memcpy(&half[i], &blk->d, sizeof half[i]);
                }
            }
            _mm256_storeu_ps(d + b * p + i0, _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)half)));
            transpose_groups(r);
            int16_t *out = (int16_t *)(qs + (size_t)b * p * MM_BLOCK * 2) + 2 * i0;
            for (int g = 0; g < 8; g++) {
                /* rows 0..7's first pairs in the low half, their second pairs in the high half */
                const __m256i x = _mm256_permute4x64_epi64(_mm256_shuffle_epi8(r[g], pairs), 0xD8);
                _mm256_storeu_si256((__m256i *)(out + 2 * g * p * 2),
                                    _mm256_cvtepi8_epi16(_mm256_castsi256_si128(x)));
                _mm256_storeu_si256((__m256i *)(out + (2 * g + 1) * p * 2),
                                    _mm256_cvtepi8_epi16(_mm256_extracti128_si256(x, 1)));
            }
        }
    }
}

static void pack_q_avx2(const mm_weight_format *f, const char *w, size_t row_stride, int rows,
                        int64_t b0, int64_t n_blocks, int p, uint8_t *qs, float *d, float *m)
{
    if (f->type == GGTK_TENSOR_Q8_0)
        pack_q8_0_wide(f, w, row_stride, rows, b0, n_blocks, p, qs, d);
    else
        mm_pack_q_x86(f, w, row_stride, rows, b0, n_blocks, p, qs, d, m);
}

/* ----------------------------------------------------------------------------------------------
 * Float packing: F32/F16 weight panels and activation groups by 8 x 8 register transposes (the
 * portable packers convert and scatter one element at a time, a noticeable share of attention).
 * -------------------------------------------------------------------------------------------- */

/* Transpose the 8 x 8 block of floats in r[0..7] (rows) into columns, in place. */
static inline void transpose_8x8(__m256 r[8])
{
    __m256 t[8], u[8];
#pragma GCC unroll 4
    for (int i = 0; i < 4; i++) {
        t[2 * i] = _mm256_unpacklo_ps(r[2 * i], r[2 * i + 1]);
        t[2 * i + 1] = _mm256_unpackhi_ps(r[2 * i], r[2 * i + 1]);
    }
#pragma GCC unroll 2
    for (int i = 0; i < 2; i++) {
        u[4 * i] = _mm256_shuffle_ps(t[4 * i], t[4 * i + 2], 0x44);
        u[4 * i + 1] = _mm256_shuffle_ps(t[4 * i], t[4 * i + 2], 0xEE);
        u[4 * i + 2] = _mm256_shuffle_ps(t[4 * i + 1], t[4 * i + 3], 0x44);
        u[4 * i + 3] = _mm256_shuffle_ps(t[4 * i + 1], t[4 * i + 3], 0xEE);
    }
    /* u[c] (rows 0..3) and u[4 + c] (rows 4..7) hold columns c and c + 4 in their two halves. */
#pragma GCC unroll 4
    for (int c = 0; c < 4; c++) {
        r[c] = _mm256_permute2f128_ps(u[c], u[4 + c], 0x20);
        r[c + 4] = _mm256_permute2f128_ps(u[c], u[4 + c], 0x31);
    }
}

/* 8 consecutive F32 or F16 values at `at`, as floats (F16C converts exactly, NaNs quieted as the
 * portable conversion does). */
static inline __m256 load_8(ggtk_tensor_type type, const char *at)
{
    if (type == GGTK_TENSOR_F32)
        return _mm256_loadu_ps((const float *)at);
    return _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)at));
}

static void pack_f_avx2(ggtk_tensor_type type, const char *w, size_t nb0, size_t nb1, int rows,
                        int64_t K, int p, float *panel)
{
    const size_t esize = type == GGTK_TENSOR_F32 ? 4 : 2;
    if (p != P || rows != P || type == GGTK_TENSOR_BF16 || (nb0 != esize && nb1 != esize)) {
        mm_pack_f_generic(type, w, nb0, nb1, rows, K, p, panel);
        return;
    }
    if (nb1 == esize) { /* a transposed view (the V cache): each k's 16 rows are side by side */
        for (int64_t k = 0; k < K; k++)
            for (int h = 0; h < 2; h++)
                _mm256_storeu_ps(panel + k * P + 8 * h, load_8(type, w + (size_t)k * nb0 + 8 * h * esize));
        return;
    }
    int64_t k = 0;
    for (; k + 8 <= K; k += 8) {
        for (int h = 0; h < 2; h++) {
            __m256 r[8];
#pragma GCC unroll 8
            for (int i = 0; i < 8; i++)
                r[i] = load_8(type, w + (size_t)(8 * h + i) * nb1 + (size_t)k * esize);
            transpose_8x8(r);
#pragma GCC unroll 8
            for (int c = 0; c < 8; c++)
                _mm256_storeu_ps(panel + (k + c) * P + 8 * h, r[c]);
        }
    }
    for (; k < K; k++)
        for (int i = 0; i < P; i++)
            panel[k * P + i] = quant_load_float(type, w + (size_t)k * nb0 + (size_t)i * nb1);
}

/* Activation rows to [k][GF] by 8 x 8 transposes (rows past GF, and NULL rows, are zeros). */
static void pack_act_f_avx2(const float *const *rows, int g, int64_t K, float *group)
{
    if (g != GF) {
        mm_pack_act_f_generic(rows, g, K, group);
        return;
    }
    int64_t k = 0;
    for (; k + 8 <= K; k += 8) {
        __m256 r[8];
#pragma GCC unroll 8
        for (int j = 0; j < 8; j++)
            r[j] = j < GF && rows[j] ? _mm256_loadu_ps(rows[j] + k) : _mm256_setzero_ps();
        transpose_8x8(r);
#pragma GCC unroll 8
        for (int c = 0; c < 8; c++) { /* the first GF = 6 values of column c */
            float *out = group + (k + c) * GF;
            _mm_storeu_ps(out, _mm256_castps256_ps128(r[c]));
            _mm_storel_pi((__m64 *)(out + 4), _mm256_extractf128_ps(r[c], 1));
        }
    }
    for (; k < K; k++)
        for (int j = 0; j < GF; j++)
            group[k * GF + j] = rows[j] ? rows[j][k] : 0.0f;
}

/* ----------------------------------------------------------------------------------------------
 * The quantized tile: 16 weight rows (two vectors of 8 rows x 4 bytes) by A activation rows of
 * the group (A = 2 or 3), sized so that everything live fits the 16 ymm registers: 2A float
 * accumulators, 2A integer sums (16-bit pair sums, and 32-bit sums where a sub-block needs
 * more than one 16-bit run), the two weight vectors of a 4-byte group and one broadcast
 * activation word. Weights are loaded once per group and serve the A rows; the group of GQ rows
 * is covered by GQ / A such tiles (only those holding rows < nr run, so one activation row costs
 * one tile).
 * -------------------------------------------------------------------------------------------- */

enum { A_MAX = 3 };

/* Compiler barriers. Without them GCC turns every activation address of the unrolled block into
 * its own induction variable (more than the integer registers) and re-associates the chains of
 * 16- and 32-bit additions into trees (more live vectors than ymm registers): both spill to the stack in
 * the inner loop. */
static inline void hide_pointer(const uint8_t **p)
{
    __asm__("" : "+r"(*p));
}

static inline void keep_in_register(__m256i *v)
{
    __asm__("" : "+x"(*v));
}

/* How a format is multiplied: sub-blocks per block, affine or symmetric, and groups added in 16
 * bits before widening. */
typedef struct q_shape {
    int subs, affine, run;
} q_shape;

/* The exact integer dot products of one sub-block s of block `wq`/`aq` for A activation rows:
 * sum[j][v] for the rows of weight vector v. Symmetric unsigned codes start at the activation's
 * correction word. (aq points 4 * j0 bytes into the packed activation block, so the codes, the
 * scales and the sums of rows j0 .. j0 + A - 1 are at their row-0 offsets.) */
static inline __attribute__((always_inline)) void sub_block_sums(const uint8_t *wq, const uint8_t *aq,
                                                                 const int32_t *ac, int s, q_shape sh,
                                                                 int A, __m256i sum[A_MAX][2])
{
    const __m256i ones = _mm256_set1_epi16(1);
    const int gps = 8 / sh.subs;
#pragma GCC unroll 8
    for (int g0 = s * gps; g0 < (s + 1) * gps; g0 += sh.run) {
        __m256i part[A_MAX][2];
#pragma GCC unroll 8
        for (int g = g0; g < g0 + sh.run; g++) {
            const __m256i w0 = _mm256_loadu_si256((const __m256i *)(wq + g * P * 4));
            const __m256i w1 = _mm256_loadu_si256((const __m256i *)(wq + g * P * 4 + 32));
#pragma GCC unroll 4
            for (int j = 0; j < A; j++) {
                int32_t a4;
                memcpy(&a4, aq + (g * GQ + j) * 4, 4);
                const __m256i a = _mm256_set1_epi32(a4);
                const __m256i x0 = _mm256_maddubs_epi16(w0, a);
                const __m256i x1 = _mm256_maddubs_epi16(w1, a);
                part[j][0] = g == g0 ? x0 : _mm256_add_epi16(part[j][0], x0);
                part[j][1] = g == g0 ? x1 : _mm256_add_epi16(part[j][1], x1);
                keep_in_register(&part[j][0]);
                keep_in_register(&part[j][1]);
            }
        }
#pragma GCC unroll 4
        for (int j = 0; j < A; j++) {
#pragma GCC unroll 2
            for (int v = 0; v < 2; v++) {
                const __m256i wide = _mm256_madd_epi16(part[j][v], ones);
                if (g0 > s * gps)
                    sum[j][v] = _mm256_add_epi32(sum[j][v], wide);
                else if (sh.affine)
                    sum[j][v] = wide;
                else
                    sum[j][v] = _mm256_add_epi32(wide, _mm256_set1_epi32(ac[s * GQ + j]));
                keep_in_register(&sum[j][v]);
            }
        }
    }
}

/* One tile over n_blocks blocks: per sub-block, acc = fma(isum, d * d_a, acc), then for affine
 * weights acc = fma(m, s_a, acc), in the order every level uses. */
static inline __attribute__((always_inline)) void gemm_q_tile(const uint8_t *qs, const float *d,
                                                              const float *m, const uint8_t *act,
                                                              int64_t n_blocks, q_shape sh, int j0,
                                                              int A, __m256 acc[A_MAX][2])
{
#pragma GCC unroll 4
    for (int j = 0; j < A; j++)
        acc[j][0] = acc[j][1] = _mm256_setzero_ps();
    for (int64_t b = 0; b < n_blocks; b++) {
        const uint8_t *wq = qs + (size_t)b * P * MM_BLOCK;
        const uint8_t *aq = act + (size_t)b * mm_act_block_bytes(GQ, sh.subs, 1) + 4 * j0;
        hide_pointer(&aq);
        const float *ad = (const float *)(aq + GQ * MM_BLOCK);
        const int32_t *ac = (const int32_t *)(ad + GQ);
#pragma GCC unroll 2
        for (int s = 0; s < sh.subs; s++) {
            const float *ds = d + (b * sh.subs + s) * P, *ms = m + (b * sh.subs + s) * P;
            __m256i sum[A_MAX][2];
            sub_block_sums(wq, aq, ac, s, sh, A, sum);
#pragma GCC unroll 4
            for (int j = 0; j < A; j++) {
                const __m256 da = _mm256_set1_ps(ad[j]);
#pragma GCC unroll 2
                for (int v = 0; v < 2; v++)
                    acc[j][v] = _mm256_fmadd_ps(_mm256_cvtepi32_ps(sum[j][v]),
                                                _mm256_mul_ps(_mm256_loadu_ps(ds + 8 * v), da), acc[j][v]);
                if (sh.affine) {
                    float sa;
                    memcpy(&sa, &ac[s * GQ + j], sizeof sa);
                    const __m256 vs = _mm256_set1_ps(sa);
#pragma GCC unroll 2
                    for (int v = 0; v < 2; v++)
                        acc[j][v] = _mm256_fmadd_ps(_mm256_loadu_ps(ms + 8 * v), vs, acc[j][v]);
                }
            }
        }
    }
}

/* Write (add, or stream past the caches) rows j < nr, columns i < m_valid of a tile of g rows of P
 * floats. */
static void store_tile(const float *tile, int g, int nr, float *dst, size_t dst_stride, int m_valid,
                       mm_store store)
{
    for (int j = 0; j < g && j < nr; j++) {
        float *row = (float *)((char *)dst + (size_t)j * dst_stride);
        const float *src = tile + j * P;
        if (m_valid == P) {
            __m256 v0 = _mm256_loadu_ps(src), v1 = _mm256_loadu_ps(src + 8);
            if (store == MM_STREAM && ((uintptr_t)row & 31) == 0) {
                _mm256_stream_ps(row, v0);
                _mm256_stream_ps(row + 8, v1);
                continue;
            }
            if (store == MM_ADD) {
                v0 = _mm256_add_ps(_mm256_loadu_ps(row), v0);
                v1 = _mm256_add_ps(_mm256_loadu_ps(row + 8), v1);
            }
            _mm256_storeu_ps(row, v0);
            _mm256_storeu_ps(row + 8, v1);
            continue;
        }
        for (int i = 0; i < m_valid; i++)
            row[i] = store == MM_ADD ? row[i] + src[i] : src[i];
    }
}

/* All tiles of A rows of a group that hold rows < nr. */
static inline __attribute__((always_inline)) void gemm_q_group(const uint8_t *qs, const float *d,
                                                               const float *m, const uint8_t *act,
                                                               int64_t n_blocks, q_shape sh, int A,
                                                               int nr, float *dst, size_t dst_stride,
                                                               int m_valid, mm_store store)
{
    for (int j0 = 0; j0 < GQ && j0 < nr; j0 += A) {
        __m256 acc[A_MAX][2];
        gemm_q_tile(qs, d, m, act, n_blocks, sh, j0, A, acc);
        float tile[A_MAX * P];
#pragma GCC unroll 4
        for (int j = 0; j < A; j++) {
            _mm256_storeu_ps(tile + j * P, acc[j][0]);
            _mm256_storeu_ps(tile + j * P + 8, acc[j][1]);
        }
        store_tile(tile, A, nr - j0, (float *)((char *)dst + (size_t)j0 * dst_stride), dst_stride,
                   m_valid, store);
    }
}

/* ----------------------------------------------------------------------------------------------
 * Wide Q8_0: a tile of 16 weight rows by A activation rows (A = 6, the whole group, or 3 when
 * the group holds at most 3 rows). Per code pair, the two weight vectors serve the A rows, one
 * vpmaddwd and one vpaddd per vector and row; the 2A 32-bit block sums, the two weight vectors,
 * the activation pair and a product fill the 16 ymm registers exactly, so the float accumulators
 * live in a small array (L1), touched once per block.
 * -------------------------------------------------------------------------------------------- */

static inline __attribute__((always_inline)) void gemm_q8_0_tile(const uint8_t *qs, const float *d,
                                                                 const uint8_t *act, int64_t n_blocks,
                                                                 int A, float acc[GQ][P])
{
    enum { PAIR_BYTES = 4 }; /* two int16 codes */
#pragma GCC unroll 12
    for (int e = 0; e < GQ * P; e += 8) /* not memset: for 384 bytes GCC emits rep stos, slow to start */
        _mm256_storeu_ps(&acc[0][0] + e, _mm256_setzero_ps());
    for (int64_t b = 0; b < n_blocks; b++) {
        const uint8_t *wq = qs + (size_t)b * P * MM_BLOCK * 2;
        const uint8_t *aq = act + (size_t)b * mm_act_block_bytes(GQ, 1, 2);
        hide_pointer(&aq);
        const float *ad = (const float *)(aq + GQ * MM_BLOCK * 2);
        __m256i sum[GQ][2];
#pragma GCC unroll 16
        for (int gh = 0; gh < MM_BLOCK / 2; gh++) {
            /* pair h of 4-code group g: at [g][j][h] in the activations (matmul.h) */
            const int g = gh / 2, h = gh % 2;
            const __m256i w0 = _mm256_loadu_si256((const __m256i *)(wq + gh * P * PAIR_BYTES));
            const __m256i w1 = _mm256_loadu_si256((const __m256i *)(wq + gh * P * PAIR_BYTES + 32));
#pragma GCC unroll 6
            for (int j = 0; j < A; j++) {
                int32_t pair;
                memcpy(&pair, aq + ((g * GQ + j) * 2 + h) * PAIR_BYTES, sizeof pair);
                const __m256i a = _mm256_set1_epi32(pair);
                const __m256i x0 = _mm256_madd_epi16(w0, a), x1 = _mm256_madd_epi16(w1, a);
                sum[j][0] = gh == 0 ? x0 : _mm256_add_epi32(sum[j][0], x0);
                sum[j][1] = gh == 0 ? x1 : _mm256_add_epi32(sum[j][1], x1);
                keep_in_register(&sum[j][0]);
                keep_in_register(&sum[j][1]);
            }
        }
#pragma GCC unroll 6
        for (int j = 0; j < A; j++) {
            const __m256 da = _mm256_set1_ps(ad[j]);
#pragma GCC unroll 2
            for (int v = 0; v < 2; v++) {
                const __m256 scale = _mm256_mul_ps(_mm256_loadu_ps(d + b * P + 8 * v), da);
                _mm256_storeu_ps(acc[j] + 8 * v, _mm256_fmadd_ps(_mm256_cvtepi32_ps(sum[j][v]), scale,
                                                                 _mm256_loadu_ps(acc[j] + 8 * v)));
            }
        }
    }
}

static void gemm_q8_0_avx2(const uint8_t *qs, const float *d, const uint8_t *act, int64_t n_blocks,
                           int nr, float *dst, size_t dst_stride, int m_valid, mm_store store)
{
    float acc[GQ][P];
    if (nr > GQ / 2)
        gemm_q8_0_tile(qs, d, act, n_blocks, GQ, acc);
    else
        gemm_q8_0_tile(qs, d, act, n_blocks, GQ / 2, acc);
    store_tile(&acc[0][0], GQ, nr, dst, dst_stride, m_valid, store);
}

/* One specialisation per shape the formats use. A 16-bit run covers as many groups as the
 * largest code allows without saturating: run * 2 * max_code * 127 <= 32767 (8 groups for
 * 4-bit codes, 4 for 5-bit, 2 for Q6_K's 6-bit ones). Shapes that keep 32-bit sums beside 16-bit
 * runs (5- and 6-bit codes) take 2 rows per tile, the others 3. */
static void gemm_q_avx2(const mm_weight_format *f, const uint8_t *qs, const float *d,
                        const float *m, const uint8_t *act, int64_t n_blocks, int nr, float *dst,
                        size_t dst_stride, int m_valid, mm_store store)
{
    const int gps = 8 / f->subs;
    const int run = f->max_code <= 15 ? 8 : f->max_code <= 31 ? 4 : 2;
#define Q_GROUP(subs, affine, run, A)                                                                \
    gemm_q_group(qs, d, m, act, n_blocks, (q_shape){subs, affine, run}, A, nr, dst, dst_stride, \
                 m_valid, store)
    if (f->type == GGTK_TENSOR_Q8_0)
        gemm_q8_0_avx2(qs, d, act, n_blocks, nr, dst, dst_stride, m_valid, store);
    else if (f->subs == 1 && run == 8)
        f->affine ? Q_GROUP(1, 1, 8, 3) : Q_GROUP(1, 0, 8, 3);
    else if (f->subs == 1)
        f->affine ? Q_GROUP(1, 1, 4, 2) : Q_GROUP(1, 0, 4, 2);
    else if (run >= gps)
        f->affine ? Q_GROUP(2, 1, 4, 3) : Q_GROUP(2, 0, 4, 3);
    else /* Q6_K */
        Q_GROUP(2, 0, 2, 2);
#undef Q_GROUP
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
    .pack_q = pack_q_avx2,
    .gemm_q = gemm_q_avx2,
    .pack_f = pack_f_avx2,
    .pack_act_f = pack_act_f_avx2,
    .gemm_f = gemm_f_avx2,
    .wide_q8_0 = true,
};
