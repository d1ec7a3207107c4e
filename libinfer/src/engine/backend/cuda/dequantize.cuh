/* dequantize.cuh - block decoders shared by the CUDA kernels and their host-side test.
 *
 * Two forms per weight type, both __host__ __device__ and plain C (so tests/cuda/
 * test_cuda_dequant.c, a C file, checks them in every `make test`, GPU or not):
 *  - cuda_dq_<type>(row, i): element i of a row of blocks starting at `row`, as a float. The
 *    operations are the CPU scalar dequantizer's, in its order, so the value is bit for bit what
 *    inf_dequantize_row gives. Used by the get_rows and dequantize-to-F16 kernels, one thread per
 *    element (consecutive threads read the same block: broadcasts, and coalesced writes).
 *  - cuda_q32_<type>(row, b, q, d, m): block b of 32 columns of a quantized row as 32 signed 8-bit
 *    codes (q, 4 per word, element e in byte e % 4 of word e / 4) and per sub-block (1 of 32 or
 *    2 of 16 columns) a scale d and a minimum m, so that element = d * code (symmetric types) or
 *    d * code + m (affine types), again bit for bit the dequantizer's value. These are the CPU
 *    matmul's codes (matmul_formats.c) with the offset of the symmetric types already taken off,
 *    so the integer part of a dot product is one __dp4a per word (mmvq.cu).
 *
 * Device code contracts a * b + c into one fused multiply-add unless told otherwise; the scalar
 * dequantizers round the product first, so every product and sum here goes through cuda_mul /
 * cuda_add (float_ops.cuh), which never contract. Half-precision fields are widened by bit arithmetic, not by the
 * CUDA intrinsics, so that the same code runs in C.
 *
 * Types: F32, F16, BF16, the legacy Q4_0..Q8_0 and the K-quants Q2_K..Q6_K in both forms; IQ4_NL,
 * IQ4_XS, TQ1_0, TQ2_0, MXFP4, NVFP4, Q1_0 and Q2_0 as elements only (their products take the
 * float kernels). The codebook types IQ1_S, IQ1_M, IQ2_XXS, IQ2_XS, IQ2_S, IQ3_XXS and IQ3_S are
 * not decoded: their grids (iq_grids.c) would have to live in __constant__ memory, and
 * cuda_type_decodable() refuses them, so the CPU keeps those nodes. */
#ifndef INF_CUDA_DEQUANTIZE_CUH
#define INF_CUDA_DEQUANTIZE_CUH

#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#if defined(__cplusplus) && !defined(_Static_assert)
/* quant_kblocks.h checks its layouts with C11's spelling. */
#define _Static_assert static_assert
#endif
#include "engine/quant_kernels/quant_internal.h"
#include "engine/quant_kernels/quant_iqblocks.h"
#include "engine/quant_kernels/quant_kblocks.h"

#include "float_convert.cuh"

#define CUDA_HD static inline INF_CUDA_HD

CUDA_HD uint16_t cuda_load_u16(const uint8_t *p)
{
    return (uint16_t)(p[0] | (p[1] << 8));
}

CUDA_HD uint32_t cuda_load_u32(const uint8_t *p)
{
    return (uint32_t)p[0] | ((uint32_t)p[1] << 8) | ((uint32_t)p[2] << 16) | ((uint32_t)p[3] << 24);
}

/* ---- element decoders: float types ---- */

CUDA_HD float cuda_dq_f32(const void *row, int64_t i)
{
    return ((const float *)row)[i];
}

CUDA_HD float cuda_dq_f16(const void *row, int64_t i)
{
    return cuda_fp16_to_fp32(((const uint16_t *)row)[i]);
}

CUDA_HD float cuda_dq_bf16(const void *row, int64_t i)
{
    return cuda_bf16_to_fp32(((const uint16_t *)row)[i]);
}

/* ---- element decoders: legacy blocks of 32 ---- */

/* The 4-bit code of element e of a block's 16 nibble bytes: low nibbles first, then high. */
CUDA_HD int cuda_nibble(const uint8_t *qs, int e)
{
    return e < 16 ? qs[e] & 0x0F : qs[e - 16] >> 4;
}

/* Element e's fifth bit: bit e of the little-endian word qh. */
CUDA_HD int cuda_q5_code(const uint8_t *qs, const uint8_t *qh, int e)
{
    return cuda_nibble(qs, e) | (int)(((cuda_load_u32(qh) >> e) & 1) << 4);
}

CUDA_HD float cuda_dq_q4_0(const void *row, int64_t i)
{
    const block_q4_0 *b = (const block_q4_0 *)row + i / 32;
    return cuda_mul((float)(cuda_nibble(b->qs, (int)(i % 32)) - 8), cuda_fp16_to_fp32(b->d));
}

CUDA_HD float cuda_dq_q4_1(const void *row, int64_t i)
{
    const block_q4_1 *b = (const block_q4_1 *)row + i / 32;
    return cuda_add(cuda_mul((float)cuda_nibble(b->qs, (int)(i % 32)), cuda_fp16_to_fp32(b->d)),
                    cuda_fp16_to_fp32(b->m));
}

CUDA_HD float cuda_dq_q5_0(const void *row, int64_t i)
{
    const block_q5_0 *b = (const block_q5_0 *)row + i / 32;
    return cuda_mul((float)(cuda_q5_code(b->qs, b->qh, (int)(i % 32)) - 16), cuda_fp16_to_fp32(b->d));
}

CUDA_HD float cuda_dq_q5_1(const void *row, int64_t i)
{
    const block_q5_1 *b = (const block_q5_1 *)row + i / 32;
    return cuda_add(cuda_mul((float)cuda_q5_code(b->qs, b->qh, (int)(i % 32)), cuda_fp16_to_fp32(b->d)),
                    cuda_fp16_to_fp32(b->m));
}

CUDA_HD float cuda_dq_q8_0(const void *row, int64_t i)
{
    const block_q8_0 *b = (const block_q8_0 *)row + i / 32;
    return cuda_mul((float)b->qs[i % 32], cuda_fp16_to_fp32(b->d));
}

/* ---- element decoders: K-quants, super-blocks of 256 ---- */

/* The 6-bit scale and minimum of sub-block j (0..7) of a Q4_K/Q5_K scales array. */
CUDA_HD void cuda_kscale_min(const uint8_t *scales, int j, int *sc, int *m)
{
    if (j < 4) {
        *sc = scales[j] & 63;
        *m = scales[j + 4] & 63;
    } else {
        *sc = (scales[j + 4] & 0x0F) | ((scales[j - 4] >> 6) << 4);
        *m = (scales[j + 4] >> 4) | ((scales[j] >> 6) << 4);
    }
}

/* Q3_K's 6-bit scale of sub-block s (0..15), offset 32 removed. */
CUDA_HD int cuda_q3_kscale(const uint8_t *scales, int s)
{
    const int low = (scales[s % 8] >> (4 * (s / 8))) & 0x0F;
    const int high = (scales[8 + s % 4] >> (2 * (s / 4))) & 3;
    return (low | (high << 4)) - 32;
}

/* The 2-bit code of element e (0..255) of a Q2_K/Q3_K super-block: in each half of 128, the
 * element 32 p + l (p 0..3) is bit pair p of qs[32 half + l]. */
CUDA_HD int cuda_two_bit_code(const uint8_t *qs, int e)
{
    const int half = e / 128, p = (e % 128) / 32, l = e % 32;
    return (qs[32 * half + l] >> (2 * p)) & 3;
}

CUDA_HD float cuda_dq_q2_k(const void *row, int64_t i)
{
    const block_q2_K *b = (const block_q2_K *)row + i / 256;
    const int e = (int)(i % 256), sc = b->scales[e / 16];
    const float dl = cuda_mul(cuda_fp16_to_fp32(b->d), (float)(sc & 0x0F));
    const float ml = cuda_mul(cuda_fp16_to_fp32(b->dmin), (float)(sc >> 4));
    return cuda_sub(cuda_mul(dl, (float)cuda_two_bit_code(b->qs, e)), ml);
}

CUDA_HD float cuda_dq_q3_k(const void *row, int64_t i)
{
    const block_q3_K *b = (const block_q3_K *)row + i / 256;
    const int e = (int)(i % 256);
    /* the third bit of element 32 k + l is bit k of hmask[l]; clear means minus 4 */
    const int q = cuda_two_bit_code(b->qs, e) - (((b->hmask[e % 32] >> (e / 32)) & 1) ? 0 : 4);
    const float dl = cuda_mul(cuda_fp16_to_fp32(b->d), (float)cuda_q3_kscale(b->scales, e / 16));
    return cuda_mul(dl, (float)q);
}

/* Q4_K/Q5_K: sub-block j of 32 takes the low (even j) or high nibbles of qs[32 (j / 2) + l]. */
CUDA_HD float cuda_dq_q4_k(const void *row, int64_t i)
{
    const block_q4_K *b = (const block_q4_K *)row + i / 256;
    const int e = (int)(i % 256), j = e / 32;
    int sc, m;
    cuda_kscale_min(b->scales, j, &sc, &m);
    const float dl = cuda_mul(cuda_fp16_to_fp32(b->d), (float)sc);
    const float ml = cuda_mul(cuda_fp16_to_fp32(b->dmin), (float)m);
    const int q = (b->qs[32 * (j / 2) + e % 32] >> (4 * (j % 2))) & 0x0F;
    return cuda_sub(cuda_mul(dl, (float)q), ml);
}

CUDA_HD float cuda_dq_q5_k(const void *row, int64_t i)
{
    const block_q5_K *b = (const block_q5_K *)row + i / 256;
    const int e = (int)(i % 256), j = e / 32;
    int sc, m;
    cuda_kscale_min(b->scales, j, &sc, &m);
    const float dl = cuda_mul(cuda_fp16_to_fp32(b->d), (float)sc);
    const float ml = cuda_mul(cuda_fp16_to_fp32(b->dmin), (float)m);
    const int q = ((b->qs[32 * (j / 2) + e % 32] >> (4 * (j % 2))) & 0x0F) |
                  (((b->qh[e % 32] >> j) & 1) << 4);
    return cuda_sub(cuda_mul(dl, (float)q), ml);
}

/* Q6_K: in half h of 128, element 32 k + l takes nibble k / 2 of ql[64 h + 32 (k % 2) + l] and
 * bit pair k of qh[32 h + l]; x = (d * scale) * (q - 32). */
CUDA_HD float cuda_dq_q6_k(const void *row, int64_t i)
{
    const block_q6_K *b = (const block_q6_K *)row + i / 256;
    const int e = (int)(i % 256), h = e / 128, k = (e % 128) / 32, l = e % 32;
    const int low = (b->ql[64 * h + 32 * (k % 2) + l] >> (4 * (k / 2))) & 0x0F;
    const int q = (low | (((b->qh[32 * h + l] >> (2 * k)) & 3) << 4)) - 32;
    const float dl = cuda_mul(cuda_fp16_to_fp32(b->d), (float)b->scales[e / 16]);
    return cuda_mul(dl, (float)q);
}

/* ---- element decoders: the dequantize-only types without codebook grids ---- */

/* The 16 non-uniform levels of IQ4_NL/IQ4_XS codes (a local table: device code cannot read the
 * host's quant_kvalues_iq4nl). */
CUDA_HD int cuda_iq4_level(int code)
{
    const int8_t levels[16] = {-127, -104, -83, -65, -49, -35, -22, -10, 1, 13, 25, 38, 53, 69, 89, 113};
    return levels[code];
}

/* Twice the E2M1 value of an FP4 code (the FP4 types halve their scales instead). */
CUDA_HD int cuda_fp4_level(int code)
{
    const int8_t levels[16] = {0, 1, 2, 3, 4, 6, 8, 12, 0, -1, -2, -3, -4, -6, -8, -12};
    return levels[code];
}

CUDA_HD float cuda_dq_iq4_nl(const void *row, int64_t i)
{
    const block_iq4_nl *b = (const block_iq4_nl *)row + i / 32;
    return cuda_mul(cuda_fp16_to_fp32(b->d), (float)cuda_iq4_level(cuda_nibble(b->qs, (int)(i % 32))));
}

/* IQ4_XS: sub-block j of 32 has a 6-bit scale (minus 32), low 4 bits in scales_l, high 2 in
 * scales_h; its codes are IQ4_NL's nibbles of qs[16 j ..]. */
CUDA_HD float cuda_dq_iq4_xs(const void *row, int64_t i)
{
    const block_iq4_xs *b = (const block_iq4_xs *)row + i / 256;
    const int e = (int)(i % 256), j = e / 32;
    const int low = (b->scales_l[j / 2] >> (4 * (j % 2))) & 0x0F;
    const int high = (cuda_load_u16((const uint8_t *)&b->scales_h) >> (2 * j)) & 3;
    const float dl = cuda_mul(cuda_fp16_to_fp32(b->d), (float)((low | (high << 4)) - 32));
    return cuda_mul(dl, (float)cuda_iq4_level(cuda_nibble(b->qs + 16 * j, e % 32)));
}

/* Trit n (0 = most significant) of a TQ1_0 byte, a base-3 fraction in 1/256ths. */
CUDA_HD int cuda_tq1_trit(uint8_t byte, int n)
{
    const uint8_t pow3[5] = {1, 3, 9, 27, 81};
    return ((uint8_t)(byte * pow3[n]) * 3) >> 8;
}

/* TQ1_0: elements 0..159 are the 5 trits of qs[0..31], 160..239 those of qs[32..47], 240..255
 * the 4 of qh[0..3], each group digit-major (all bytes' digit 0 first). */
CUDA_HD float cuda_dq_tq1_0(const void *row, int64_t i)
{
    const block_tq1_0 *b = (const block_tq1_0 *)row + i / 256;
    const int e = (int)(i % 256);
    int t;
    if (e < 160)
        t = cuda_tq1_trit(b->qs[e % 32], e / 32);
    else if (e < 240)
        t = cuda_tq1_trit(b->qs[32 + (e - 160) % 16], (e - 160) / 16);
    else
        t = cuda_tq1_trit(b->qh[(e - 240) % 4], (e - 240) / 4);
    return cuda_mul((float)(t - 1), cuda_fp16_to_fp32(b->d));
}

/* TQ2_0: in each 32 bytes (128 elements), element 32 p + m is bit pair p of byte m. */
CUDA_HD float cuda_dq_tq2_0(const void *row, int64_t i)
{
    const block_tq2_0 *b = (const block_tq2_0 *)row + i / 256;
    const int e = (int)(i % 256);
    const int q = (b->qs[32 * (e / 128) + e % 32] >> (2 * ((e % 128) / 32))) & 3;
    return cuda_mul((float)(q - 1), cuda_fp16_to_fp32(b->d));
}

/* MXFP4: half of the E8M0 scale 2^(e - 127) (exponents 0 and 1 give denormals). */
CUDA_HD float cuda_dq_mxfp4(const void *row, int64_t i)
{
    const block_mxfp4 *b = (const block_mxfp4 *)row + i / 32;
    const float half_scale = cuda_float_from_bits(b->e < 2 ? 0x00200000u << b->e : (uint32_t)(b->e - 1) << 23);
    return cuda_mul((float)cuda_fp4_level(cuda_nibble(b->qs, (int)(i % 32))), half_scale);
}

/* Half of an unsigned E4M3 scale; 0x7F (NaN) reads as 0. */
CUDA_HD float cuda_ue4m3_half(uint8_t x)
{
    if (x == 0 || x == 0x7F)
        return 0.0f;
    const int exponent = (x >> 3) & 0x0F, mantissa = x & 7;
    if (exponent == 0)
        return (float)mantissa * 9.765625e-4f; /* 2^-10 */
    return (float)(8 + mantissa) * cuda_float_from_bits((uint32_t)(exponent - 11 + 127) << 23);
}

/* NVFP4: 64 elements, each 16 with their own scale and 8 bytes of nibbles (low ones first). */
CUDA_HD float cuda_dq_nvfp4(const void *row, int64_t i)
{
    const block_nvfp4 *b = (const block_nvfp4 *)row + i / 64;
    const int e = (int)(i % 64), s = e / 16, j = e % 16;
    const int code = j < 8 ? b->qs[8 * s + j] & 0x0F : b->qs[8 * s + j - 8] >> 4;
    return cuda_mul((float)cuda_fp4_level(code), cuda_ue4m3_half(b->d[s]));
}

CUDA_HD float cuda_dq_q1_0(const void *row, int64_t i)
{
    const block_q1_0 *b = (const block_q1_0 *)row + i / 128;
    const int e = (int)(i % 128);
    const float d = cuda_fp16_to_fp32(b->d);
    return (b->qs[e / 8] >> (e % 8)) & 1 ? d : -d;
}

CUDA_HD float cuda_dq_q2_0(const void *row, int64_t i)
{
    const block_q2_0 *b = (const block_q2_0 *)row + i / 64;
    const int e = (int)(i % 64);
    return cuda_mul((float)(((b->qs[e / 4] >> (2 * (e % 4))) & 3) - 1), cuda_fp16_to_fp32(b->d));
}

/* ---- 32-column blocks for the integer dot products ---- */

/* One block of 32 columns: 32 signed codes, 4 to a word, and per sub-block a scale and minimum
 * (m is 0 and unused for symmetric types). */
typedef struct cuda_q32 {
    int32_t q[8];
    float d[2];
    float m[2];
} cuda_q32;

/* The words are built 4 codes at a time from 32-bit loads of the code bytes; these helpers work
 * on the 4 bytes of a word at once. */

/* Each byte minus k, as signed bytes: v's bytes are codes 0..127 and k <= 128, so with the top
 * bit of each byte set first no byte borrows from its neighbour. */
CUDA_HD int32_t cuda_sub_bytes(uint32_t v, uint32_t k)
{
    return (int32_t)(((v | 0x80808080u) - k * 0x01010101u) ^ 0x80808080u);
}

/* Bits 0..3 of `bits` moved to bit `at` of bytes 0..3. */
CUDA_HD uint32_t cuda_spread_bits(uint32_t bits, int at)
{
    return ((bits & 1) | ((bits & 2) << 7) | ((bits & 4) << 14) | ((bits & 8) << 21)) << at;
}

/* Word w (elements 4w .. 4w + 3) of a 32-element block's 16 nibble bytes: low nibbles of bytes
 * 4w.. for w < 4, high nibbles of bytes 4(w - 4).. after. */
CUDA_HD uint32_t cuda_nibble_word(const uint8_t *qs, int w)
{
    return (cuda_load_u32(qs + 4 * (w % 4)) >> (4 * (w / 4))) & 0x0F0F0F0Fu;
}

CUDA_HD void cuda_q32_q4_0(const void *row, int64_t b, cuda_q32 *out)
{
    const block_q4_0 *blk = (const block_q4_0 *)row + b;
    for (int w = 0; w < 8; w++)
        out->q[w] = cuda_sub_bytes(cuda_nibble_word(blk->qs, w), 8);
    out->d[0] = cuda_fp16_to_fp32(blk->d);
    out->m[0] = 0.0f;
}

CUDA_HD void cuda_q32_q4_1(const void *row, int64_t b, cuda_q32 *out)
{
    const block_q4_1 *blk = (const block_q4_1 *)row + b;
    for (int w = 0; w < 8; w++)
        out->q[w] = (int32_t)cuda_nibble_word(blk->qs, w);
    out->d[0] = cuda_fp16_to_fp32(blk->d);
    out->m[0] = cuda_fp16_to_fp32(blk->m);
}

/* Q5_0/Q5_1: the fifth bits of elements 4w .. 4w + 3 are bits 4w .. 4w + 3 of qh. */
CUDA_HD uint32_t cuda_q5_word(const uint8_t *qs, const uint8_t *qh, int w)
{
    return cuda_nibble_word(qs, w) | cuda_spread_bits((cuda_load_u32(qh) >> (4 * w)) & 0x0F, 4);
}

CUDA_HD void cuda_q32_q5_0(const void *row, int64_t b, cuda_q32 *out)
{
    const block_q5_0 *blk = (const block_q5_0 *)row + b;
    for (int w = 0; w < 8; w++)
        out->q[w] = cuda_sub_bytes(cuda_q5_word(blk->qs, blk->qh, w), 16);
    out->d[0] = cuda_fp16_to_fp32(blk->d);
    out->m[0] = 0.0f;
}

CUDA_HD void cuda_q32_q5_1(const void *row, int64_t b, cuda_q32 *out)
{
    const block_q5_1 *blk = (const block_q5_1 *)row + b;
    for (int w = 0; w < 8; w++)
        out->q[w] = (int32_t)cuda_q5_word(blk->qs, blk->qh, w);
    out->d[0] = cuda_fp16_to_fp32(blk->d);
    out->m[0] = cuda_fp16_to_fp32(blk->m);
}

CUDA_HD void cuda_q32_q8_0(const void *row, int64_t b, cuda_q32 *out)
{
    const block_q8_0 *blk = (const block_q8_0 *)row + b;
    for (int w = 0; w < 8; w++)
        out->q[w] = (int32_t)cuda_load_u32((const uint8_t *)blk->qs + 4 * w);
    out->d[0] = cuda_fp16_to_fp32(blk->d);
    out->m[0] = 0.0f;
}

/* The 2-bit codes of word w of block j of a Q2_K/Q3_K super-block: bit pair j % 4 of bytes
 * 32 (j / 4) + 4w ... */
CUDA_HD uint32_t cuda_two_bit_word(const uint8_t *qs, int j, int w)
{
    return (cuda_load_u32(qs + 32 * (j / 4) + 4 * w) >> (2 * (j % 4))) & 0x03030303u;
}

/* Q2_K block j of a super-block: sub-blocks 2j and 2j + 1; x = dl * q - ml is dl * q + (-ml). */
CUDA_HD void cuda_q32_q2_k(const void *row, int64_t b, cuda_q32 *out)
{
    const block_q2_K *blk = (const block_q2_K *)row + b / 8;
    const int j = (int)(b % 8);
    for (int w = 0; w < 8; w++)
        out->q[w] = (int32_t)cuda_two_bit_word(blk->qs, j, w);
    for (int s = 0; s < 2; s++) {
        const int sc = blk->scales[2 * j + s];
        out->d[s] = cuda_mul(cuda_fp16_to_fp32(blk->d), (float)(sc & 0x0F));
        out->m[s] = -cuda_mul(cuda_fp16_to_fp32(blk->dmin), (float)(sc >> 4));
    }
}

/* Q3_K: the third bit of element e of block j is bit j of hmask[e]; q = u - 4 with u the 3 bits. */
CUDA_HD void cuda_q32_q3_k(const void *row, int64_t b, cuda_q32 *out)
{
    const block_q3_K *blk = (const block_q3_K *)row + b / 8;
    const int j = (int)(b % 8);
    for (int w = 0; w < 8; w++) {
        const uint32_t high = (cuda_load_u32(blk->hmask + 4 * w) >> j) & 0x01010101u;
        out->q[w] = cuda_sub_bytes(cuda_two_bit_word(blk->qs, j, w) | (high << 2), 4);
    }
    for (int s = 0; s < 2; s++) {
        out->d[s] = cuda_mul(cuda_fp16_to_fp32(blk->d), (float)cuda_q3_kscale(blk->scales, 2 * j + s));
        out->m[s] = 0.0f;
    }
}

/* Q4_K/Q5_K block j: low (even j) or high nibbles of qs[32 (j / 2) + e]. */
CUDA_HD uint32_t cuda_k_nibble_word(const uint8_t *qs, int j, int w)
{
    return (cuda_load_u32(qs + 32 * (j / 2) + 4 * w) >> (4 * (j % 2))) & 0x0F0F0F0Fu;
}

CUDA_HD void cuda_q32_q4_k(const void *row, int64_t b, cuda_q32 *out)
{
    const block_q4_K *blk = (const block_q4_K *)row + b / 8;
    const int j = (int)(b % 8);
    for (int w = 0; w < 8; w++)
        out->q[w] = (int32_t)cuda_k_nibble_word(blk->qs, j, w);
    int sc, m;
    cuda_kscale_min(blk->scales, j, &sc, &m);
    out->d[0] = cuda_mul(cuda_fp16_to_fp32(blk->d), (float)sc);
    out->m[0] = -cuda_mul(cuda_fp16_to_fp32(blk->dmin), (float)m);
}

CUDA_HD void cuda_q32_q5_k(const void *row, int64_t b, cuda_q32 *out)
{
    const block_q5_K *blk = (const block_q5_K *)row + b / 8;
    const int j = (int)(b % 8);
    for (int w = 0; w < 8; w++) {
        const uint32_t high = (cuda_load_u32(blk->qh + 4 * w) >> j) & 0x01010101u;
        out->q[w] = (int32_t)(cuda_k_nibble_word(blk->qs, j, w) | (high << 4));
    }
    int sc, m;
    cuda_kscale_min(blk->scales, j, &sc, &m);
    out->d[0] = cuda_mul(cuda_fp16_to_fp32(blk->d), (float)sc);
    out->m[0] = -cuda_mul(cuda_fp16_to_fp32(blk->dmin), (float)m);
}

/* Q6_K block j = 4h + k: nibble k / 2 of ql[64 h + 32 (k % 2) + e], bit pair k of qh[32 h + e]. */
CUDA_HD void cuda_q32_q6_k(const void *row, int64_t b, cuda_q32 *out)
{
    const block_q6_K *blk = (const block_q6_K *)row + b / 8;
    const int j = (int)(b % 8), h = j / 4, k = j % 4;
    for (int w = 0; w < 8; w++) {
        const uint32_t low = (cuda_load_u32(blk->ql + 64 * h + 32 * (k % 2) + 4 * w) >> (4 * (k / 2))) & 0x0F0F0F0Fu;
        const uint32_t high = (cuda_load_u32(blk->qh + 32 * h + 4 * w) >> (2 * k)) & 0x03030303u;
        out->q[w] = cuda_sub_bytes(low | (high << 4), 32);
    }
    for (int s = 0; s < 2; s++) {
        out->d[s] = cuda_mul(cuda_fp16_to_fp32(blk->d), (float)blk->scales[2 * j + s]);
        out->m[s] = 0.0f;
    }
}

/* ---- the type table of the kernels ---- */

/* How activations are quantized to meet a weight type in the integer dot product: the CPU
 * matmul's choice per type (matmul_formats.c), so that the integer sums are the CPU's. */
typedef enum cuda_act_kind {
    CUDA_ACT_NONE, /* float weights, or a type the integer path does not take */
    CUDA_ACT_Q8_0, /* fp16 scale per 32 */
    CUDA_ACT_Q8_1, /* fp16 scale and fp16 s = d * sum(codes) per 32 */
    CUDA_ACT_Q8_K, /* float scale per 256 */
} cuda_act_kind;

/* Whether the CUDA kernels decode `type` (a switch rather than a table: device code cannot read
 * a host table, and a switch over a constant folds away in a templated kernel). */
CUDA_HD bool cuda_type_decodable(ggtk_tensor_type type)
{
    switch (type) {
    case GGTK_TENSOR_F32:
    case GGTK_TENSOR_F16:
    case GGTK_TENSOR_BF16:
    case GGTK_TENSOR_Q4_0:
    case GGTK_TENSOR_Q4_1:
    case GGTK_TENSOR_Q5_0:
    case GGTK_TENSOR_Q5_1:
    case GGTK_TENSOR_Q8_0:
    case GGTK_TENSOR_Q2_K:
    case GGTK_TENSOR_Q3_K:
    case GGTK_TENSOR_Q4_K:
    case GGTK_TENSOR_Q5_K:
    case GGTK_TENSOR_Q6_K:
    case GGTK_TENSOR_IQ4_NL:
    case GGTK_TENSOR_IQ4_XS:
    case GGTK_TENSOR_TQ1_0:
    case GGTK_TENSOR_TQ2_0:
    case GGTK_TENSOR_MXFP4:
    case GGTK_TENSOR_NVFP4:
    case GGTK_TENSOR_Q1_0:
    case GGTK_TENSOR_Q2_0:
        return true;
    default:
        return false;
    }
}

/* Element i of a row of `type` (a type cuda_type_decodable() accepts; 0 otherwise). */
CUDA_HD float cuda_dq_element(ggtk_tensor_type type, const void *row, int64_t i)
{
    switch (type) {
    case GGTK_TENSOR_F32:
        return cuda_dq_f32(row, i);
    case GGTK_TENSOR_F16:
        return cuda_dq_f16(row, i);
    case GGTK_TENSOR_BF16:
        return cuda_dq_bf16(row, i);
    case GGTK_TENSOR_Q4_0:
        return cuda_dq_q4_0(row, i);
    case GGTK_TENSOR_Q4_1:
        return cuda_dq_q4_1(row, i);
    case GGTK_TENSOR_Q5_0:
        return cuda_dq_q5_0(row, i);
    case GGTK_TENSOR_Q5_1:
        return cuda_dq_q5_1(row, i);
    case GGTK_TENSOR_Q8_0:
        return cuda_dq_q8_0(row, i);
    case GGTK_TENSOR_Q2_K:
        return cuda_dq_q2_k(row, i);
    case GGTK_TENSOR_Q3_K:
        return cuda_dq_q3_k(row, i);
    case GGTK_TENSOR_Q4_K:
        return cuda_dq_q4_k(row, i);
    case GGTK_TENSOR_Q5_K:
        return cuda_dq_q5_k(row, i);
    case GGTK_TENSOR_Q6_K:
        return cuda_dq_q6_k(row, i);
    case GGTK_TENSOR_IQ4_NL:
        return cuda_dq_iq4_nl(row, i);
    case GGTK_TENSOR_IQ4_XS:
        return cuda_dq_iq4_xs(row, i);
    case GGTK_TENSOR_TQ1_0:
        return cuda_dq_tq1_0(row, i);
    case GGTK_TENSOR_TQ2_0:
        return cuda_dq_tq2_0(row, i);
    case GGTK_TENSOR_MXFP4:
        return cuda_dq_mxfp4(row, i);
    case GGTK_TENSOR_NVFP4:
        return cuda_dq_nvfp4(row, i);
    case GGTK_TENSOR_Q1_0:
        return cuda_dq_q1_0(row, i);
    case GGTK_TENSOR_Q2_0:
        return cuda_dq_q2_0(row, i);
    default:
        return 0.0f;
    }
}

/* Block b of 32 columns of a quantized row (a type with an activation kind; out untouched
 * otherwise). */
CUDA_HD void cuda_q32_block(ggtk_tensor_type type, const void *row, int64_t b, cuda_q32 *out)
{
    switch (type) {
    case GGTK_TENSOR_Q4_0:
        cuda_q32_q4_0(row, b, out);
        break;
    case GGTK_TENSOR_Q4_1:
        cuda_q32_q4_1(row, b, out);
        break;
    case GGTK_TENSOR_Q5_0:
        cuda_q32_q5_0(row, b, out);
        break;
    case GGTK_TENSOR_Q5_1:
        cuda_q32_q5_1(row, b, out);
        break;
    case GGTK_TENSOR_Q8_0:
        cuda_q32_q8_0(row, b, out);
        break;
    case GGTK_TENSOR_Q2_K:
        cuda_q32_q2_k(row, b, out);
        break;
    case GGTK_TENSOR_Q3_K:
        cuda_q32_q3_k(row, b, out);
        break;
    case GGTK_TENSOR_Q4_K:
        cuda_q32_q4_k(row, b, out);
        break;
    case GGTK_TENSOR_Q5_K:
        cuda_q32_q5_k(row, b, out);
        break;
    case GGTK_TENSOR_Q6_K:
        cuda_q32_q6_k(row, b, out);
        break;
    default:
        break;
    }
}

/* The activation format of a weight type's integer dot product (CUDA_ACT_NONE: float path). */
CUDA_HD cuda_act_kind cuda_act_of(ggtk_tensor_type type)
{
    switch (type) {
    case GGTK_TENSOR_Q4_0:
    case GGTK_TENSOR_Q5_0:
    case GGTK_TENSOR_Q8_0:
        return CUDA_ACT_Q8_0;
    case GGTK_TENSOR_Q4_1:
    case GGTK_TENSOR_Q5_1:
        return CUDA_ACT_Q8_1;
    case GGTK_TENSOR_Q2_K:
    case GGTK_TENSOR_Q3_K:
    case GGTK_TENSOR_Q4_K:
    case GGTK_TENSOR_Q5_K:
    case GGTK_TENSOR_Q6_K:
        return CUDA_ACT_Q8_K;
    default:
        return CUDA_ACT_NONE;
    }
}

/* Sub-blocks per block of 32 (2 for the K types with sub-blocks of 16). */
CUDA_HD int cuda_q32_subs(ggtk_tensor_type type)
{
    return type == GGTK_TENSOR_Q2_K || type == GGTK_TENSOR_Q3_K || type == GGTK_TENSOR_Q6_K ? 2 : 1;
}

/* Whether element = d * code + m (otherwise d * code). */
CUDA_HD bool cuda_q32_affine(ggtk_tensor_type type)
{
    return type == GGTK_TENSOR_Q4_1 || type == GGTK_TENSOR_Q5_1 || type == GGTK_TENSOR_Q2_K ||
           type == GGTK_TENSOR_Q4_K || type == GGTK_TENSOR_Q5_K;
}

#endif
