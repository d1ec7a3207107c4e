/* kquant_quantize.h - the quantizers that search for their scales: the K types (reference and
 * importance-weighted), Q8_K, and the importance-weighted forms of Q4_0, Q4_1, Q5_0 and Q5_1.
 * Each type describes its blocks in a search_quant_type; the row drivers in kquant_rows.c apply
 * the rules every one of them shares (non-finite input, the fallback of a weighted block).
 * Private to libinfer. */
#ifndef INF_KQUANT_QUANTIZE_H
#define INF_KQUANT_QUANTIZE_H

#include "kquant_search.h"
#include "quant_internal.h"
#include "quant_kblocks.h"

/* Quantize one block of `x` the way ggml's reference quantizer does. */
typedef void (*search_block_fn)(const float *x, void *block);
/* Quantize one block with importance weights qw (the block's share of the imatrix);
 * row_sigma2 is the mean square of the whole row, which the legacy types weight by (the K types
 * use their super-block's own). */
typedef void (*search_weighted_block_fn)(const float *x, const float *qw, float row_sigma2,
                                         void *block);

/* What the row drivers need to know of a type. */
typedef struct search_quant_type {
    int block_size;
    size_t block_bytes;
    search_block_fn reference;
    search_weighted_block_fn weighted;
    /* Byte offsets of the fp16 scales: d, and dmin/m (or -1 when the type has none). */
    int d_offset, min_offset;
    /* Whether `weighted` wants row_sigma2 (computing it costs a pass over the row). */
    bool uses_row_sigma2;
} search_quant_type;

/* Reference quantization of n elements (whole blocks): a block holding NaN or +-Inf becomes
 * the NaN block (every scale 0x7E00, all else 0), the others t->reference. */
void search_quantize_reference(const search_quant_type *t, const float *src, void *dst, int64_t n);

/* Importance-weighted quantization of one row of n elements with imatrix[0..n). A block whose
 * weighted scales come out NaN or +-Inf (see kquant_rows.c for when ggml's do) is quantized by
 * t->reference instead; returns the number of such blocks. Non-finite input blocks become the
 * NaN block and are not counted. */
int64_t search_quantize_weighted(const search_quant_type *t, const float *src, void *dst, int64_t n,
                                 const float *imatrix);

/* Row kernels of the kernel tables (inf_from_float_fn, inf_from_float_imatrix_fn); one
 * implementation serves every SIMD level. */
void inf_q2_k_from_float_scalar(const float *src, void *dst, int64_t n);
void inf_q3_k_from_float_scalar(const float *src, void *dst, int64_t n);
void inf_q4_k_from_float_scalar(const float *src, void *dst, int64_t n);
void inf_q5_k_from_float_scalar(const float *src, void *dst, int64_t n);
void inf_q6_k_from_float_scalar(const float *src, void *dst, int64_t n);
void inf_q8_k_from_float_scalar(const float *src, void *dst, int64_t n);
#if defined(__x86_64__)
/* The same bytes with AVX2 (q8_k_quantize_avx2.c), at the AVX2 and AVX-512 levels. */
void inf_q8_k_from_float_avx2(const float *src, void *dst, int64_t n);
#endif
int64_t inf_q2_k_from_float_imatrix(const float *src, void *dst, int64_t n, const float *imatrix);
int64_t inf_q3_k_from_float_imatrix(const float *src, void *dst, int64_t n, const float *imatrix);
int64_t inf_q4_k_from_float_imatrix(const float *src, void *dst, int64_t n, const float *imatrix);
int64_t inf_q5_k_from_float_imatrix(const float *src, void *dst, int64_t n, const float *imatrix);
int64_t inf_q6_k_from_float_imatrix(const float *src, void *dst, int64_t n, const float *imatrix);
int64_t inf_q4_0_from_float_imatrix(const float *src, void *dst, int64_t n, const float *imatrix);
int64_t inf_q4_1_from_float_imatrix(const float *src, void *dst, int64_t n, const float *imatrix);
int64_t inf_q5_0_from_float_imatrix(const float *src, void *dst, int64_t n, const float *imatrix);
int64_t inf_q5_1_from_float_imatrix(const float *src, void *dst, int64_t n, const float *imatrix);
/* The K-quant row kernels of the AVX2 and AVX-512 levels (kquant_search_avx2.c does the
 * sub-block searches; Q3_K's only with an imatrix). */
#if defined(__x86_64__)
void inf_q2_k_from_float_avx2(const float *src, void *dst, int64_t n);
int64_t inf_q2_k_from_float_imatrix_avx2(const float *src, void *dst, int64_t n,
                                         const float *imatrix);
int64_t inf_q3_k_from_float_imatrix_avx2(const float *src, void *dst, int64_t n,
                                         const float *imatrix);
void inf_q6_k_from_float_avx2(const float *src, void *dst, int64_t n);
int64_t inf_q6_k_from_float_imatrix_avx2(const float *src, void *dst, int64_t n,
                                         const float *imatrix);
void inf_q4_k_from_float_avx2(const float *src, void *dst, int64_t n);
void inf_q5_k_from_float_avx2(const float *src, void *dst, int64_t n);
int64_t inf_q4_k_from_float_imatrix_avx2(const float *src, void *dst, int64_t n,
                                         const float *imatrix);
int64_t inf_q5_k_from_float_imatrix_avx2(const float *src, void *dst, int64_t n,
                                         const float *imatrix);
#endif

/* The 2-bit codes of a Q2_K/Q3_K super-block: qs[32 * h + j] holds, in bit pairs 2s, element
 * 128 * h + 32 * s + j. */
static inline void kquant_pack_2bit(const uint8_t *L, uint8_t *qs)
{
    for (int h = 0; h < QUANT_KBLOCK; h += 128)
        for (int j = 0; j < 32; j++)
            qs[h / 4 + j] = (uint8_t)(L[h + j] | (L[h + j + 32] << 2) | (L[h + j + 64] << 4) |
                                      (L[h + j + 96] << 6));
}

/* Store the 6-bit scale ls and min lm of sub-block j (0..7) of a Q4_K/Q5_K `scales` array (the
 * inverse of quant_kscale_min; bytes j - 4 and j must already hold sub-block j - 4's). */
static inline void kquant_put_scale_min(uint8_t *scales, int j, uint8_t ls, uint8_t lm)
{
    if (j < 4) {
        scales[j] = ls;
        scales[j + 4] = lm;
    } else {
        scales[j + 4] = (uint8_t)((ls & 0x0F) | ((lm & 0x0F) << 4));
        scales[j - 4] |= (uint8_t)((ls >> 4) << 6);
        scales[j] |= (uint8_t)((lm >> 4) << 6);
    }
}

#endif
