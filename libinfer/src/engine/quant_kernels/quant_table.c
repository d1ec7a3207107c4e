/* quant_table.c - one kernel table per SIMD level, indexed by tensor type, and the checked
 * public entry points that dispatch through the table of the active level. */
#include "kquant_quantize.h"
#include "quant_internal.h"
#include "quant_iqblocks.h"
#include "quant_kblocks.h"

#define KERNELS(type, to, from) [GGTK_TENSOR_##type] = {to, from, NULL}
/* A type with both directions at `level`. */
#define LEVEL_ROW(type, prefix, level)                                                      \
    KERNELS(type, inf_##prefix##_to_float_##level, inf_##prefix##_from_float_##level)
/* A type read but not written: a dequantizer at `level`, no quantizer. */
#define DEQUANT_ROW(type, prefix, level) KERNELS(type, inf_##prefix##_to_float_##level, NULL)
/* A type with an importance-weighted quantizer (scalar, the same at every level). */
#define WEIGHTED_ROW(type, prefix, to, from)                                                \
    [GGTK_TENSOR_##type] = {to, from, inf_##prefix##_from_float_imatrix}
#define LEGACY_ROW(type, prefix, level)                                                     \
    WEIGHTED_ROW(type, prefix, inf_##prefix##_to_float_##level, inf_##prefix##_from_float_##level)

/* A K-quant: its dequantizer at level `to`, its quantizers with the sub-block search `search`
 * (scalar, or avx2: 8 searches at a time, same bytes). */
#define KQUANT_ROW(type, prefix, to, search)                                                \
    [GGTK_TENSOR_##type] = {inf_##prefix##_to_float_##to, inf_##prefix##_from_float_##search, \
                            KQUANT_IMATRIX_##search(prefix)}
#define KQUANT_IMATRIX_scalar(prefix) inf_##prefix##_from_float_imatrix
#define KQUANT_IMATRIX_avx2(prefix) inf_##prefix##_from_float_imatrix_avx2
/* The K rows of a level: Q3_K's reference search is scalar everywhere (its weighted search
 * follows `search`); Q8_K's quantizer is AVX2 code where `search` is. */
#define KQUANT_ROWS(level, search)                                                          \
    KQUANT_ROW(Q2_K, q2_k, level, search),                                                  \
    [GGTK_TENSOR_Q3_K] = {inf_q3_k_to_float_##level, inf_q3_k_from_float_scalar,              \
                          KQUANT_IMATRIX_##search(q3_k)},                                   \
    KQUANT_ROW(Q4_K, q4_k, level, search), KQUANT_ROW(Q5_K, q5_k, level, search),           \
    KQUANT_ROW(Q6_K, q6_k, level, search),                                                  \
    KERNELS(Q8_K, inf_q8_k_to_float_##level, inf_q8_k_from_float_##search)

/* Types with only a scalar dequantizer (no SIMD version written yet), the same kernel at every
 * level. */
#define DEQUANT_SCALAR_ROWS                                                                 \
    DEQUANT_ROW(IQ1_S, iq1_s, scalar),     DEQUANT_ROW(IQ1_M, iq1_m, scalar),               \
    DEQUANT_ROW(IQ2_XXS, iq2_xxs, scalar), DEQUANT_ROW(IQ2_XS, iq2_xs, scalar),             \
    DEQUANT_ROW(IQ2_S, iq2_s, scalar),     DEQUANT_ROW(IQ3_XXS, iq3_xxs, scalar),           \
    DEQUANT_ROW(IQ3_S, iq3_s, scalar),     DEQUANT_ROW(IQ4_NL, iq4_nl, scalar),             \
    DEQUANT_ROW(IQ4_XS, iq4_xs, scalar),                                                    \
    DEQUANT_ROW(TQ1_0, tq1_0, scalar),     DEQUANT_ROW(TQ2_0, tq2_0, scalar),               \
    DEQUANT_ROW(MXFP4, mxfp4, scalar),     DEQUANT_ROW(NVFP4, nvfp4, scalar),               \
    DEQUANT_ROW(Q1_0, q1_0, scalar),       DEQUANT_ROW(Q2_0, q2_0, scalar)

/* One table per level; every supported type has a kernel at every level. */
#define LEVEL_TABLE(level, ksearch)                                                         \
    {                                                                                       \
        KERNELS(F32, inf_f32_to_float_copy, inf_f32_from_float_copy),                       \
        LEVEL_ROW(F16, f16, level),   LEVEL_ROW(BF16, bf16, level),                         \
        LEGACY_ROW(Q4_0, q4_0, level), LEGACY_ROW(Q4_1, q4_1, level),                       \
        LEGACY_ROW(Q5_0, q5_0, level), LEGACY_ROW(Q5_1, q5_1, level),                       \
        LEVEL_ROW(Q8_0, q8_0, level), LEVEL_ROW(Q8_1, q8_1, level),                         \
        KQUANT_ROWS(level, ksearch),                                                        \
        DEQUANT_SCALAR_ROWS,                                                                \
    }

static const inf_quant_kernels scalar_kernels[GGTK_TENSOR_TYPE_COUNT] = LEVEL_TABLE(scalar, scalar);
#if defined(__x86_64__)
static const inf_quant_kernels avx2_kernels[GGTK_TENSOR_TYPE_COUNT] = LEVEL_TABLE(avx2, avx2);
static const inf_quant_kernels avx512_kernels[GGTK_TENSOR_TYPE_COUNT] = LEVEL_TABLE(avx512, avx2);
#endif

#if defined(__ARM_NEON) && defined(__aarch64__)
/* NEON kernels exist for F16, BF16, Q4_0, Q8_0 and the Q4_K/Q6_K dequantizers so far; the other
 * types run their scalar kernels. */
static const inf_quant_kernels neon_kernels[GGTK_TENSOR_TYPE_COUNT] = {
    KERNELS(F32, inf_f32_to_float_copy, inf_f32_from_float_copy),
    LEVEL_ROW(F16, f16, neon),     LEVEL_ROW(BF16, bf16, neon),
    LEGACY_ROW(Q4_0, q4_0, neon),   LEGACY_ROW(Q4_1, q4_1, scalar),
    LEGACY_ROW(Q5_0, q5_0, scalar), LEGACY_ROW(Q5_1, q5_1, scalar),
    LEVEL_ROW(Q8_0, q8_0, neon),   LEVEL_ROW(Q8_1, q8_1, scalar),
    KQUANT_ROW(Q2_K, q2_k, scalar, scalar),
    [GGTK_TENSOR_Q3_K] = {inf_q3_k_to_float_scalar, inf_q3_k_from_float_scalar,
                          inf_q3_k_from_float_imatrix},
    KQUANT_ROW(Q4_K, q4_k, neon, scalar),   KQUANT_ROW(Q5_K, q5_k, scalar, scalar),
    KQUANT_ROW(Q6_K, q6_k, neon, scalar),
    KERNELS(Q8_K, inf_q8_k_to_float_scalar, inf_q8_k_from_float_scalar),
    DEQUANT_SCALAR_ROWS,
};
#endif

static const inf_quant_kernels no_kernels;

static const inf_quant_kernels *const level_tables[INF_SIMD_LEVEL_COUNT] = {
    [INF_SIMD_SCALAR] = scalar_kernels,
#if defined(__x86_64__)
    [INF_SIMD_AVX2] = avx2_kernels,
    [INF_SIMD_AVX512] = avx512_kernels,
#endif
#if defined(__ARM_NEON) && defined(__aarch64__)
    [INF_SIMD_NEON] = neon_kernels,
#endif
};

const inf_quant_kernels *inf_quant_kernels_at(ggtk_tensor_type type, inf_simd_level level)
{
    if ((unsigned)type >= GGTK_TENSOR_TYPE_COUNT)
        return &no_kernels;
    if ((int)level < 0)
        level = INF_SIMD_SCALAR;
    /* A level beyond this CPU, or one not built for this architecture, gives the best one. */
    if ((unsigned)level >= INF_SIMD_LEVEL_COUNT || level > inf_simd_detect() ||
        !level_tables[level])
        level = inf_simd_detect();
    return &level_tables[level][type];
}

const inf_quant_kernels *inf_quant_kernels_get(ggtk_tensor_type type)
{
    return inf_quant_kernels_at(type, inf_simd_active());
}

bool inf_type_can_quantize(ggtk_tensor_type type)
{
    return inf_quant_kernels_at(type, INF_SIMD_SCALAR)->from_float != NULL;
}

bool inf_type_can_dequantize(ggtk_tensor_type type)
{
    return inf_quant_kernels_at(type, INF_SIMD_SCALAR)->to_float != NULL;
}

/* True when n is a whole number of blocks of `type`. */
static bool whole_blocks(ggtk_tensor_type type, int64_t n)
{
    const ggtk_tensor_type_info *info = ggtk_tensor_type_info_get(type);
    return info && n >= 0 && n % info->block_size == 0;
}

bool inf_quantize_row(ggtk_tensor_type type, const float *src, void *dst, int64_t n)
{
    inf_from_float_fn fn = inf_quant_kernels_get(type)->from_float;
    if (!fn || !whole_blocks(type, n))
        return false;
    fn(src, dst, n);
    return true;
}

bool inf_dequantize_row(ggtk_tensor_type type, const void *src, float *dst, int64_t n)
{
    inf_to_float_fn fn = inf_quant_kernels_get(type)->to_float;
    if (!fn || !whole_blocks(type, n))
        return false;
    fn(src, dst, n);
    return true;
}

float inf_fp16_to_fp32(inf_fp16 h)
{
    return quant_fp16_to_fp32(h);
}

inf_fp16 inf_fp32_to_fp16(float f)
{
    return quant_fp32_to_fp16(f);
}

float inf_bf16_to_fp32(inf_bf16 h)
{
    return quant_bf16_to_fp32(h);
}

inf_bf16 inf_fp32_to_bf16(float f)
{
    return quant_fp32_to_bf16(f);
}

void inf_fp16_to_fp32_row(const inf_fp16 *src, float *dst, int64_t n)
{
    inf_quant_kernels_get(GGTK_TENSOR_F16)->to_float(src, dst, n);
}

void inf_fp32_to_fp16_row(const float *src, inf_fp16 *dst, int64_t n)
{
    inf_quant_kernels_get(GGTK_TENSOR_F16)->from_float(src, dst, n);
}

void inf_bf16_to_fp32_row(const inf_bf16 *src, float *dst, int64_t n)
{
    inf_quant_kernels_get(GGTK_TENSOR_BF16)->to_float(src, dst, n);
}

void inf_fp32_to_bf16_row(const float *src, inf_bf16 *dst, int64_t n)
{
    inf_quant_kernels_get(GGTK_TENSOR_BF16)->from_float(src, dst, n);
}
