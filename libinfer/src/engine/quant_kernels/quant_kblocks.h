/* quant_kblocks.h - block layouts of the K-quant types (super-blocks of 256 elements) and of
 * Q8_K, the 8-bit form activations take when they meet K-quant weights. The layouts are the file
 * format; a test checks their sizes against libgguf's type table. Private to libinfer. */
#ifndef INF_QUANT_KBLOCKS_H
#define INF_QUANT_KBLOCKS_H

#include <stdint.h>

#include <ggtk/inf_quant.h>

/* Elements per super-block of every K type. */
#define QUANT_KBLOCK 256
/* Bytes of the packed 6-bit scales and mins of Q4_K and Q5_K (and the 6-bit scales of Q3_K). */
#define QUANT_KSCALE_BYTES 12

/* x = d * (scales[i] & 15) * q - dmin * (scales[i] >> 4), 16 sub-blocks of 16, q 2-bit:
 * qs[32 * h + j] holds, in bit pairs 2s, element 128 * h + 32 * s + j. */
typedef struct block_q2_K {
    uint8_t scales[QUANT_KBLOCK / 16];
    uint8_t qs[QUANT_KBLOCK / 4];
    inf_fp16 d;
    inf_fp16 dmin;
} block_q2_K;

/* x = d * (s - 32) * (q - 4 * !hbit), 16 sub-blocks of 16 with 6-bit scales s packed in
 * `scales`; q's low 2 bits as in Q2_K, its high bit in hmask (bit k of hmask[j] for element
 * 32 * k + j). */
typedef struct block_q3_K {
    uint8_t hmask[QUANT_KBLOCK / 8];
    uint8_t qs[QUANT_KBLOCK / 4];
    uint8_t scales[QUANT_KSCALE_BYTES];
    inf_fp16 d;
} block_q3_K;

/* x = d * sc * q - dmin * m, 8 sub-blocks of 32 with 6-bit sc and m packed in `scales`, q 4-bit:
 * qs[32 * p + j] low nibble element 64 * p + j, high nibble element 64 * p + 32 + j. */
typedef struct block_q4_K {
    inf_fp16 d;
    inf_fp16 dmin;
    uint8_t scales[QUANT_KSCALE_BYTES];
    uint8_t qs[QUANT_KBLOCK / 2];
} block_q4_K;

/* As Q4_K with 5-bit q: the fifth bit of element 32 * k + j is bit k of qh[j]. */
typedef struct block_q5_K {
    inf_fp16 d;
    inf_fp16 dmin;
    uint8_t scales[QUANT_KSCALE_BYTES];
    uint8_t qh[QUANT_KBLOCK / 8];
    uint8_t qs[QUANT_KBLOCK / 2];
} block_q5_K;

/* x = d * scales[i] * (q - 32), 16 sub-blocks of 16 with int8 scales, q 6-bit: low 4 bits in ql,
 * high 2 bits in qh (layout in halves of 128 elements, as ggml's dequantize_row_q6_K). */
typedef struct block_q6_K {
    uint8_t ql[QUANT_KBLOCK / 2];
    uint8_t qh[QUANT_KBLOCK / 4];
    int8_t scales[QUANT_KBLOCK / 16];
    inf_fp16 d;
} block_q6_K;

/* x = d * q; bsums[i] = sum of q over elements 16 i .. 16 i + 15. d is a float, not fp16. */
typedef struct block_q8_K {
    float d;
    int8_t qs[QUANT_KBLOCK];
    int16_t bsums[QUANT_KBLOCK / 16];
} block_q8_K;

_Static_assert(sizeof(block_q2_K) == 84, "Q2_K block is 84 bytes");
_Static_assert(sizeof(block_q3_K) == 110, "Q3_K block is 110 bytes");
_Static_assert(sizeof(block_q4_K) == 144, "Q4_K block is 144 bytes");
_Static_assert(sizeof(block_q5_K) == 176, "Q5_K block is 176 bytes");
_Static_assert(sizeof(block_q6_K) == 210, "Q6_K block is 210 bytes");
_Static_assert(sizeof(block_q8_K) == 292, "Q8_K block is 292 bytes");

/* The 6-bit scale and min of sub-block j (0..7) of a Q4_K/Q5_K `scales` array: sub-blocks 0..3
 * in the low 6 bits of bytes j and j + 4, 4..7 split between the low/high nibbles of byte j + 4
 * and the top 2 bits of bytes j - 4 and j. */
static inline void quant_kscale_min(const uint8_t *scales, int j, uint8_t *sc, uint8_t *m)
{
    if (j < 4) {
        *sc = scales[j] & 63;
        *m = scales[j + 4] & 63;
    } else {
        *sc = (uint8_t)((scales[j + 4] & 0x0F) | ((scales[j - 4] >> 6) << 4));
        *m = (uint8_t)((scales[j + 4] >> 4) | ((scales[j] >> 6) << 4));
    }
}

/* The 6-bit scale (0..63, stored with an offset of 32) of sub-block s (0..15) of a Q3_K `scales`
 * array: the low nibble of byte s (s < 8) or the high nibble of byte s - 8, and two high bits
 * from byte 8 + s % 4 at bit 2 * (s / 4). */
static inline int quant_q3_kscale(const uint8_t scales[QUANT_KSCALE_BYTES], int s)
{
    const int low = s < 8 ? scales[s] & 0x0F : scales[s - 8] >> 4;
    const int high = (scales[8 + s % 4] >> (2 * (s / 4))) & 3;
    return low | (high << 4);
}

/* K-quant dequantizers, named <type>_to_float_<level>; n is a multiple of QUANT_KBLOCK. On arm64
 * only Q4_K and Q6_K have NEON kernels; quant_table.c uses the scalar ones for the others. */
#define QUANT_DECLARE_K_TO_FLOAT(level)                                                     \
    void inf_q2_K_to_float_##level(const void *src, float *dst, int64_t n);                 \
    void inf_q3_K_to_float_##level(const void *src, float *dst, int64_t n);                 \
    void inf_q4_K_to_float_##level(const void *src, float *dst, int64_t n);                 \
    void inf_q5_K_to_float_##level(const void *src, float *dst, int64_t n);                 \
    void inf_q6_K_to_float_##level(const void *src, float *dst, int64_t n);                 \
    void inf_q8_K_to_float_##level(const void *src, float *dst, int64_t n);

QUANT_DECLARE_K_TO_FLOAT(scalar)
#if defined(__x86_64__)
QUANT_DECLARE_K_TO_FLOAT(avx2)
QUANT_DECLARE_K_TO_FLOAT(avx512)
#endif
#if defined(__ARM_NEON) && defined(__aarch64__)
void inf_q4_K_to_float_neon(const void *src, float *dst, int64_t n);
void inf_q6_K_to_float_neon(const void *src, float *dst, int64_t n);
#endif

#endif
