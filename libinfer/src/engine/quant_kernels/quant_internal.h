/* quant_internal.h - block layouts, exact scalar helpers and the per-level kernel functions
 * that quant_table.c puts into the dispatch tables. Private to libinfer/src/quant. */
#ifndef INF_QUANT_INTERNAL_H
#define INF_QUANT_INTERNAL_H

#include <float.h>
#include <math.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <ggtk/inf_quant.h>

/* Elements per block of every type below. The layouts are the file format itself; a test checks
 * them against libgguf's type table (ggtk_tensor_type_info_get), the one source of truth. */
#define QUANT_BLOCK 32

typedef struct block_q4_0 {
    inf_fp16 d;
    uint8_t qs[QUANT_BLOCK / 2];
} block_q4_0;

typedef struct block_q4_1 {
    inf_fp16 d;
    inf_fp16 m;
    uint8_t qs[QUANT_BLOCK / 2];
} block_q4_1;

typedef struct block_q5_0 {
    inf_fp16 d;
    uint8_t qh[4];
    uint8_t qs[QUANT_BLOCK / 2];
} block_q5_0;

typedef struct block_q5_1 {
    inf_fp16 d;
    inf_fp16 m;
    uint8_t qh[4];
    uint8_t qs[QUANT_BLOCK / 2];
} block_q5_1;

typedef struct block_q8_0 {
    inf_fp16 d;
    int8_t qs[QUANT_BLOCK];
} block_q8_0;

typedef struct block_q8_1 {
    inf_fp16 d;
    inf_fp16 s;
    int8_t qs[QUANT_BLOCK];
} block_q8_1;

static inline uint32_t quant_f32_bits(float f)
{
    uint32_t u;
    memcpy(&u, &f, sizeof u);
    return u;
}

static inline float quant_f32_from_bits(uint32_t u)
{
    float f;
    memcpy(&f, &u, sizeof f);
    return f;
}

/* Float to int32 as x86's cvttss2si/cvttps2dq do it: truncate, and INT32_MIN for NaN or out of
 * range. ggml's reference casts float to int8/uint8 (undefined in C when out of range); on x86
 * that compiles to this instruction and keeps the low byte. Spelling it out keeps degenerate
 * blocks (a denormal maximum makes 1/d infinite) identical on every platform and SIMD level. */
static inline int32_t quant_trunc_i32(float v)
{
    return (v > -2147483904.0f && v < 2147483648.0f) ? (int32_t)v : INT32_MIN;
}

/* quant_trunc_i32(roundf(v)) without the libm call: v - trunc(v) is exact below 2^24 and 0
 * above (such floats are integers), so comparing it with 0.5 rounds half away from zero. */
static inline int32_t quant_round_i32(float v)
{
    if (!(v > -2147483904.0f && v < 2147483648.0f))
        return INT32_MIN;
    int32_t i = (int32_t)v;
    float frac = v - (float)i;
    return i + (frac >= 0.5f) - (frac <= -0.5f);
}

/* The low byte of quant_trunc_i32(v), as a float-to-8-bit cast does on x86. */
static inline uint8_t quant_trunc_u8(float v)
{
    return (uint8_t)((uint32_t)quant_trunc_i32(v) & 0xFF);
}

/* Whether every element of a block is finite. A block holding NaN or +-Inf has no scale that
 * represents it: every kernel stores it as quant_nan_block, checked before anything else, so
 * the helpers below and the SIMD kernels only ever see finite blocks. */
static inline bool quant_block_is_finite(const float *x)
{
    bool finite = true;
    for (int j = 0; j < QUANT_BLOCK; j++)
        finite &= fabsf(x[j]) <= FLT_MAX;
    return finite;
}

/* Bits of +Inf. The bits of |x| read as an integer order like the values, and NaN and Inf are
 * the patterns at or above these: a SIMD integer max over |x| bits gives the block's amax and
 * whether the block is finite in one pass, exactly and in any order (a float max would drop or
 * keep a NaN depending on the operand order). */
#define QUANT_INF_BITS 0x7F800000u

/* The quantized block of a non-finite input block (see inf_quantize_row): its first `n_scales`
 * halves (d, then m or s) the quiet NaN 0x7E00 and every code byte 0, so every element
 * dequantizes to NaN and a dot product with it is NaN. */
static inline void quant_nan_block(void *block, size_t block_bytes, int n_scales)
{
    const inf_fp16 nan = 0x7E00;
    memset(block, 0, block_bytes);
    for (int i = 0; i < n_scales; i++)
        memcpy((char *)block + (size_t)i * sizeof nan, &nan, sizeof nan);
}

/* 1/d, or 0 for a zero scale (every code of such a block is then the offset alone). */
static inline float quant_inverse_scale(float d)
{
    return d != 0.0f ? 1.0f / d : 0.0f;
}

/* Largest |x| of a (finite) block. */
static inline float quant_block_amax(const float *x)
{
    float amax = 0.0f;
    for (int j = 0; j < QUANT_BLOCK; j++)
        amax = amax > fabsf(x[j]) ? amax : fabsf(x[j]);
    return amax;
}

/* The element of largest magnitude with its sign: the reference's strict `<` keeps the first of
 * equal magnitudes, and an all-zero block gives +0 (even for -0.0 elements). */
static inline float quant_block_signed_max(const float *x)
{
    float amax = 0.0f, max = 0.0f;
    for (int j = 0; j < QUANT_BLOCK; j++) {
        if (amax < fabsf(x[j])) {
            amax = fabsf(x[j]);
            max = x[j];
        }
    }
    return max;
}

/* Minimum and maximum of a block; strict compares keep the first of equal values, which decides
 * the sign of a zero extreme. */
static inline void quant_block_min_max(const float *x, float *min, float *max)
{
    *min = FLT_MAX;
    *max = -FLT_MAX;
    for (int j = 0; j < QUANT_BLOCK; j++) {
        if (x[j] < *min)
            *min = x[j];
        if (x[j] > *max)
            *max = x[j];
    }
}

/* The reference's code for v: cast to int8_t (through the x86 low byte), then capped at `cap`;
 * only the exact extreme of a block can land one past the cap. */
static inline uint8_t quant_capped_code(float v, int8_t cap)
{
    int8_t q = (int8_t)quant_trunc_u8(v);
    return (uint8_t)(q < cap ? q : cap);
}

/* The reference's Q8 code for v: roundf(v) cast to int8_t (through the x86 low byte). */
static inline int8_t quant_q8_code(float v)
{
    return (int8_t)(uint8_t)((uint32_t)quant_round_i32(v) & 0xFF);
}

/* Store the 5-bit codes of elements j and j + 16 of a Q5 block: their low nibbles share qs[j],
 * their fifth bits go to bits j and j + 16 of *qh. */
static inline void quant_put_q5(uint8_t *qs, uint32_t *qh, int j, uint8_t lo, uint8_t hi)
{
    qs[j] = (uint8_t)((lo & 0x0F) | ((hi & 0x0F) << 4));
    *qh |= (uint32_t)((lo >> 4) & 1) << j;
    *qh |= (uint32_t)((hi >> 4) & 1) << (j + QUANT_BLOCK / 2);
}

/* The 5-bit code of element j (0..31) of a Q5 block. */
static inline int quant_q5_code(const uint8_t *qs, uint32_t qh, int j)
{
    int nibble = j < QUANT_BLOCK / 2 ? qs[j] & 0x0F : qs[j - QUANT_BLOCK / 2] >> 4;
    return nibble | (int)(((qh >> j) & 1) << 4);
}

static inline float quant_fp16_to_fp32(inf_fp16 h)
{
    uint32_t sign = (uint32_t)(h & 0x8000) << 16;
    uint32_t exp = (h >> 10) & 0x1F;
    uint32_t mant = h & 0x3FF;
    if (exp == 0x1F) /* Inf or NaN; a NaN comes back quiet, as the hardware converters do */
        return quant_f32_from_bits(sign | 0x7F800000 | (mant << 13) | (mant ? 0x400000 : 0));
    if (exp != 0)
        return quant_f32_from_bits(sign | ((exp + 112) << 23) | (mant << 13));
    /* zero or denormal: mant * 2^-24 is exact in float */
    float mag = (float)mant * 0x1p-24f;
    return sign ? -mag : mag;
}

static inline inf_fp16 quant_fp32_to_fp16(float f)
{
    uint32_t x = quant_f32_bits(f);
    uint16_t sign = (uint16_t)((x >> 16) & 0x8000);
    uint32_t ax = x & 0x7FFFFFFF;
    if (ax > 0x7F800000) /* NaN */
        return sign | 0x7E00;
    if (ax >= 0x477FF000) /* >= 65520 rounds to Inf */
        return sign | 0x7C00;
    if (ax >= 0x38800000) { /* normal half: drop 13 mantissa bits, ties to even, rebias */
        uint32_t rounded = ax + 0xFFF + ((ax >> 13) & 1);
        return sign | (uint16_t)((rounded - 0x38000000) >> 13);
    }
    if (ax <= 0x33000000) /* <= 2^-25: rounds to zero (2^-25 is a tie, zero is even) */
        return sign;
    /* denormal half: the value in units of 2^-24, rounded to nearest even */
    int shift = 126 - (int)(ax >> 23);
    uint32_t mant = (ax & 0x7FFFFF) | 0x800000;
    uint32_t q = mant >> shift;
    uint32_t rem = mant & ((1u << shift) - 1);
    uint32_t half = 1u << (shift - 1);
    if (rem > half || (rem == half && (q & 1)))
        q++;
    return sign | (uint16_t)q;
}

static inline float quant_bf16_to_fp32(inf_bf16 h)
{
    return quant_f32_from_bits((uint32_t)h << 16);
}

static inline inf_bf16 quant_fp32_to_bf16(float f)
{
    uint32_t x = quant_f32_bits(f);
    if ((x & 0x7FFFFFFF) > 0x7F800000) /* NaN: keep the top half, force quiet */
        return (inf_bf16)((x >> 16) | 0x40);
    return (inf_bf16)((x + 0x7FFF + ((x >> 16) & 1)) >> 16);
}

/* Kernels, named <type>_<direction>_<level>. Each handles n elements, n a multiple of the
 * type's block size (1 for the float types). */
#define QUANT_DECLARE_LEVEL(level)                                                          \
    void inf_f16_to_float_##level(const void *src, float *dst, int64_t n);                  \
    void inf_f16_from_float_##level(const float *src, void *dst, int64_t n);                \
    void inf_bf16_to_float_##level(const void *src, float *dst, int64_t n);                 \
    void inf_bf16_from_float_##level(const float *src, void *dst, int64_t n);               \
    void inf_q4_0_to_float_##level(const void *src, float *dst, int64_t n);                 \
    void inf_q4_0_from_float_##level(const float *src, void *dst, int64_t n);               \
    void inf_q4_1_to_float_##level(const void *src, float *dst, int64_t n);                 \
    void inf_q4_1_from_float_##level(const float *src, void *dst, int64_t n);               \
    void inf_q5_0_to_float_##level(const void *src, float *dst, int64_t n);                 \
    void inf_q5_0_from_float_##level(const float *src, void *dst, int64_t n);               \
    void inf_q5_1_to_float_##level(const void *src, float *dst, int64_t n);                 \
    void inf_q5_1_from_float_##level(const float *src, void *dst, int64_t n);               \
    void inf_q8_0_to_float_##level(const void *src, float *dst, int64_t n);                 \
    void inf_q8_0_from_float_##level(const float *src, void *dst, int64_t n);               \
    void inf_q8_1_to_float_##level(const void *src, float *dst, int64_t n);                 \
    void inf_q8_1_from_float_##level(const float *src, void *dst, int64_t n);

QUANT_DECLARE_LEVEL(scalar)
#if defined(__x86_64__)
/* Built from *_avx2.c / *_avx512.c, which the Makefile compiles only on x86-64. */
QUANT_DECLARE_LEVEL(avx2)
QUANT_DECLARE_LEVEL(avx512)
#endif
#if defined(__ARM_NEON) && defined(__aarch64__)
/* Built from *_neon.c, which compile to nothing elsewhere; the other types' NEON level reuses
 * the scalar kernels (see quant_table.c). */
void inf_f16_to_float_neon(const void *src, float *dst, int64_t n);
void inf_f16_from_float_neon(const float *src, void *dst, int64_t n);
void inf_bf16_to_float_neon(const void *src, float *dst, int64_t n);
void inf_bf16_from_float_neon(const float *src, void *dst, int64_t n);
void inf_q4_0_to_float_neon(const void *src, float *dst, int64_t n);
void inf_q4_0_from_float_neon(const float *src, void *dst, int64_t n);
void inf_q8_0_to_float_neon(const void *src, float *dst, int64_t n);
void inf_q8_0_from_float_neon(const float *src, void *dst, int64_t n);
#endif

void inf_f32_to_float_copy(const void *src, float *dst, int64_t n);
void inf_f32_from_float_copy(const float *src, void *dst, int64_t n);

/* One element of an F32, F16 or BF16 tensor at `at` (any alignment), widened to float: the
 * element reader shared by the copy ops and the generic float matmul packing. */
static inline float quant_load_float(ggtk_tensor_type type, const void *at)
{
    if (type == GGTK_TENSOR_F32) {
        float v;
        memcpy(&v, at, sizeof v);
        return v;
    }
    uint16_t h;
    memcpy(&h, at, sizeof h);
    return type == GGTK_TENSOR_F16 ? inf_fp16_to_fp32(h) : inf_bf16_to_fp32(h);
}

#endif
