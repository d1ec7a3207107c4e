/* quant_iqblocks.h - block layouts of the dequantize-only types: the codebook types (IQ1_S ..
 * IQ4_XS), the ternary TQ1_0/TQ2_0, the FP4 types MXFP4/NVFP4 and the 1- and 2-bit Q1_0/Q2_0.
 * The layouts are the file format; a test checks their sizes against libgguf's type table.
 * Multi-byte fields are little-endian and, like every block here, may be unaligned: kernels read
 * them through memcpy. Private to libinfer. */
#ifndef INF_QUANT_IQBLOCKS_H
#define INF_QUANT_IQBLOCKS_H

#include <stdint.h>

#include <ggtk/inf_quant.h>

#include "quant_kblocks.h"

/* Elements per block of IQ4_NL and MXFP4 (the other types here use QUANT_KBLOCK unless noted). */
#define QUANT_IQ_SMALL_BLOCK 32
/* Elements per block of NVFP4, Q1_0 and Q2_0. */
#define QUANT_NVFP4_BLOCK 64
#define QUANT_Q1_0_BLOCK 128
#define QUANT_Q2_0_BLOCK 64

/* 8 bytes per 32 elements: 4 grid indices (one byte per group of 8 elements), then a uint32 of
 * 4 x 7 sign bits and a 4-bit scale s in bits 28-31. x = d * (0.5 + s) * 0.25 * grid * sign. */
typedef struct block_iq2_xxs {
    inf_fp16 d;
    uint16_t qs[QUANT_KBLOCK / 8];
} block_iq2_xxs;

/* qs[g]: 9-bit grid index and 7 sign bits of group g; two 4-bit scales per 32 elements. */
typedef struct block_iq2_xs {
    inf_fp16 d;
    uint16_t qs[QUANT_KBLOCK / 8];
    uint8_t scales[QUANT_KBLOCK / 32];
} block_iq2_xs;

/* qs[0..31]: low 8 bits of each group's 10-bit grid index, qs[32..63]: 8 sign bits per group;
 * qh: the two high index bits of 4 groups; two 4-bit scales per 32 elements. */
typedef struct block_iq2_s {
    inf_fp16 d;
    uint8_t qs[QUANT_KBLOCK / 4];
    uint8_t qh[QUANT_KBLOCK / 32];
    uint8_t scales[QUANT_KBLOCK / 32];
} block_iq2_s;

/* qs[0..63]: one 4-element grid index per byte; then per 32 elements a uint32 of 4 x 7 sign bits
 * and a 4-bit scale in the top bits. x = d * (0.5 + s) * 0.5 * grid * sign. */
typedef struct block_iq3_xxs {
    inf_fp16 d;
    uint8_t qs[3 * QUANT_KBLOCK / 8];
} block_iq3_xxs;

/* qs: low 8 bits of 9-bit 4-element grid indices, qh: their ninth bits, signs: one bit per
 * element, scales: a 4-bit odd multiplier (1 + 2 s) per 32 elements. */
typedef struct block_iq3_s {
    inf_fp16 d;
    uint8_t qs[QUANT_KBLOCK / 4];
    uint8_t qh[QUANT_KBLOCK / 32];
    uint8_t signs[QUANT_KBLOCK / 8];
    uint8_t scales[QUANT_KBLOCK / 64];
} block_iq3_s;

/* qs: low 8 bits of 11-bit grid indices, one per 8 elements; qh[i] (32 elements): three 3-bit
 * high index parts, a 3-bit scale (bits 12-14) and the sign of the shift delta (bit 15). */
typedef struct block_iq1_s {
    inf_fp16 d;
    uint8_t qs[QUANT_KBLOCK / 8];
    uint16_t qh[QUANT_KBLOCK / 32];
} block_iq1_s;

/* As IQ1_S with a 3-bit scale per 16 elements and a delta sign per 8; the fp16 super-block scale
 * is split into the top nibbles of the four uint16 words of `scales`. */
typedef struct block_iq1_m {
    uint8_t qs[QUANT_KBLOCK / 8];
    uint8_t qh[QUANT_KBLOCK / 16];
    uint8_t scales[QUANT_KBLOCK / 32];
} block_iq1_m;

/* Like Q4_0 with the codes mapped through quant_kvalues_iq4nl. */
typedef struct block_iq4_nl {
    inf_fp16 d;
    uint8_t qs[QUANT_IQ_SMALL_BLOCK / 2];
} block_iq4_nl;

/* IQ4_NL codes with a 6-bit scale (minus 32) per 32 elements: low 4 bits in scales_l, high 2
 * bits in scales_h. */
typedef struct block_iq4_xs {
    inf_fp16 d;
    uint16_t scales_h;
    uint8_t scales_l[QUANT_KBLOCK / 64];
    uint8_t qs[QUANT_KBLOCK / 2];
} block_iq4_xs;

/* Ternary, x = d * (t - 1), t in {0, 1, 2}: qs packs 5 trits per byte, qh 4, as the leading
 * base-3 digits of a fixed-point fraction (digit n of byte q is (uint8_t)(q * 3^n) * 3 >> 8). */
typedef struct block_tq1_0 {
    uint8_t qs[(QUANT_KBLOCK - 4 * QUANT_KBLOCK / 64) / 5];
    uint8_t qh[QUANT_KBLOCK / 64];
    inf_fp16 d;
} block_tq1_0;

/* Ternary in 2-bit fields, x = d * (q - 1). */
typedef struct block_tq2_0 {
    uint8_t qs[QUANT_KBLOCK / 4];
    inf_fp16 d;
} block_tq2_0;

/* FP4 codes with a power-of-two scale stored as an E8M0 exponent byte. */
typedef struct block_mxfp4 {
    uint8_t e;
    uint8_t qs[QUANT_IQ_SMALL_BLOCK / 2];
} block_mxfp4;

/* FP4 codes with one unsigned E4M3 scale per 16 elements. */
typedef struct block_nvfp4 {
    uint8_t d[QUANT_NVFP4_BLOCK / 16];
    uint8_t qs[QUANT_NVFP4_BLOCK / 2];
} block_nvfp4;

/* One bit per element: x = +d when set, -d when clear. */
typedef struct block_q1_0 {
    inf_fp16 d;
    uint8_t qs[QUANT_Q1_0_BLOCK / 8];
} block_q1_0;

/* Two bits per element, x = (q - 1) * d. */
typedef struct block_q2_0 {
    inf_fp16 d;
    uint8_t qs[QUANT_Q2_0_BLOCK / 4];
} block_q2_0;

_Static_assert(sizeof(block_iq2_xxs) == 66, "IQ2_XXS block is 66 bytes");
_Static_assert(sizeof(block_iq2_xs) == 74, "IQ2_XS block is 74 bytes");
_Static_assert(sizeof(block_iq2_s) == 82, "IQ2_S block is 82 bytes");
_Static_assert(sizeof(block_iq3_xxs) == 98, "IQ3_XXS block is 98 bytes");
_Static_assert(sizeof(block_iq3_s) == 110, "IQ3_S block is 110 bytes");
_Static_assert(sizeof(block_iq1_s) == 50, "IQ1_S block is 50 bytes");
_Static_assert(sizeof(block_iq1_m) == 56, "IQ1_M block is 56 bytes");
_Static_assert(sizeof(block_iq4_nl) == 18, "IQ4_NL block is 18 bytes");
_Static_assert(sizeof(block_iq4_xs) == 136, "IQ4_XS block is 136 bytes");
_Static_assert(sizeof(block_tq1_0) == 54, "TQ1_0 block is 54 bytes");
_Static_assert(sizeof(block_tq2_0) == 66, "TQ2_0 block is 66 bytes");
_Static_assert(sizeof(block_mxfp4) == 17, "MXFP4 block is 17 bytes");
_Static_assert(sizeof(block_nvfp4) == 36, "NVFP4 block is 36 bytes");
_Static_assert(sizeof(block_q1_0) == 18, "Q1_0 block is 18 bytes");
_Static_assert(sizeof(block_q2_0) == 18, "Q2_0 block is 18 bytes");

/* The little-endian uint16 / uint32 at p (any alignment). */
static inline uint16_t quant_load_u16(const void *p)
{
    const uint8_t *b = (const uint8_t *)p;
    return (uint16_t)(b[0] | (b[1] << 8));
}

static inline uint32_t quant_load_u32(const void *p)
{
    const uint8_t *b = (const uint8_t *)p;
    return (uint32_t)b[0] | (uint32_t)b[1] << 8 | (uint32_t)b[2] << 16 | (uint32_t)b[3] << 24;
}

/* Dequantizers of these types: scalar only, the same kernel at every SIMD level. */
void inf_iq2_xxs_to_float_scalar(const void *src, float *dst, int64_t n);
void inf_iq2_xs_to_float_scalar(const void *src, float *dst, int64_t n);
void inf_iq2_s_to_float_scalar(const void *src, float *dst, int64_t n);
void inf_iq3_xxs_to_float_scalar(const void *src, float *dst, int64_t n);
void inf_iq3_s_to_float_scalar(const void *src, float *dst, int64_t n);
void inf_iq1_s_to_float_scalar(const void *src, float *dst, int64_t n);
void inf_iq1_m_to_float_scalar(const void *src, float *dst, int64_t n);
void inf_iq4_nl_to_float_scalar(const void *src, float *dst, int64_t n);
void inf_iq4_xs_to_float_scalar(const void *src, float *dst, int64_t n);
void inf_tq1_0_to_float_scalar(const void *src, float *dst, int64_t n);
void inf_tq2_0_to_float_scalar(const void *src, float *dst, int64_t n);
void inf_mxfp4_to_float_scalar(const void *src, float *dst, int64_t n);
void inf_nvfp4_to_float_scalar(const void *src, float *dst, int64_t n);
void inf_q1_0_to_float_scalar(const void *src, float *dst, int64_t n);
void inf_q2_0_to_float_scalar(const void *src, float *dst, int64_t n);

#endif
