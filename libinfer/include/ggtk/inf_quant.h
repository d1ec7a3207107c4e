/* inf_quant.h - convert rows of tensor data between float32 and the GGUF storage types.
 *
 * Both directions: F32, F16, BF16, the block types Q4_0, Q4_1, Q5_0, Q5_1, Q8_0, Q8_1, and the
 * K-quants Q2_K, Q3_K, Q4_K, Q5_K, Q6_K with Q8_K (the form activations take for K-quant
 * products). Dequantize only (types a file written elsewhere may hold): the codebook types IQ1_S,
 * IQ1_M, IQ2_XXS, IQ2_XS, IQ2_S, IQ3_XXS, IQ3_S, IQ4_NL, IQ4_XS; the ternary TQ1_0 and TQ2_0; the
 * FP4 types MXFP4 and NVFP4; Q1_0 and Q2_0. Every tensor type of the GGUF format is readable
 * except the plain integer types I8..I64 and F64.
 *
 * Quantizing is byte-for-byte what ggml writes: without an importance matrix what its
 * reference quantizers (quantize_row_*_ref) write, which is what llama-quantize writes without
 * --imatrix; with one (inf_quantize_rows_imatrix) what ggml_quantize_chunk writes with it, except
 * in the blocks where ggml's weighted search yields a non-finite scale (see there). The K-quant
 * searches repeat ggml's float operations in ggml's order with no fused multiply-add, so the
 * bytes are also the same on every CPU and compiler (llama.cpp's own differ where a compiler
 * contracts them into FMA).
 * Dequantizing is exactly (bit for bit) the float ggml's dequantize_row_* computes, in its order
 * of operations, for every type.
 *
 * Block geometry (elements per block, bytes per block) comes only from libgguf's type table,
 * ggtk_tensor_type_info_get(). Block layouts, all little-endian, d/m/s stored as IEEE fp16:
 *   Q4_0 {d; qs[16]}          x = d * (q - 8),  q 4-bit; qs[j] low nibble = element j,
 *                                               high nibble = element j + 16
 *   Q4_1 {d; m; qs[16]}       x = d * q + m
 *   Q5_0 {d; qh[4]; qs[16]}   x = d * (q - 16), q 5-bit; bit 4 of element j is bit j of qh
 *   Q5_1 {d; m; qh[4]; qs[16]} x = d * q + m
 *   Q8_0 {d; qs[32] int8}     x = d * q
 *   Q8_1 {d; s; qs[32] int8}  x = d * q, s = d * sum(q) (used for activations by matmul)
 * K-quants, super-blocks of 256 elements with quantized sub-block scales (sc) and mins (m):
 *   Q2_K {sc[16]; qs[64]; d; dmin}      x = d * sc * q - dmin * m, q 2-bit, 4-bit sc and m
 *                                        packed in one byte per sub-block of 16
 *   Q3_K {hmask[32]; qs[64]; sc[12]; d} x = d * (sc - 32) * q, q in -4..3 (2 bits in qs, the
 *                                        third in hmask), 6-bit sc per sub-block of 16
 *   Q4_K {d; dmin; sc[12]; qs[128]}     x = d * sc * q - dmin * m, q 4-bit, 6-bit sc and m per
 *                                        sub-block of 32 packed in 12 bytes
 *   Q5_K {d; dmin; sc[12]; qh[32]; qs[128]}  as Q4_K with q 5-bit (fifth bits in qh)
 *   Q6_K {ql[128]; qh[64]; sc[16] int8; d}   x = d * sc * (q - 32), q 6-bit, sub-blocks of 16
 *   Q8_K {d float32; qs[256] int8; bsums[16] int16}  x = d * q (activations for K products)
 * The others (layouts in libinfer/src/engine/quant_kernels/quant_iqblocks.h):
 *   IQ2_XXS, IQ2_XS, IQ2_S, IQ3_XXS, IQ3_S, IQ1_S, IQ1_M (256 elements): each group of 8 (IQ3:
 *     4) elements is a point of a fixed codebook (ggml's grids) with sign bits, times a 3- or
 *     4-bit sub-block scale; IQ1 points are in {-1, 0, 1} shifted by +-1/8
 *   IQ4_NL {d; qs[16]} (32), IQ4_XS (256, 6-bit scale per 32): 4-bit codes mapped through a
 *     fixed table of 16 non-uniform levels
 *   TQ1_0 (trits packed 5 per byte), TQ2_0 (2 bits each), 256 elements: x = d * (t - 1)
 *   MXFP4 {e; qs[16]}: 32 FP4 (E2M1) codes times the power of two 2^(e - 127)
 *   NVFP4 {d[4]; qs[32]}: 64 FP4 codes, an unsigned E4M3 scale per 16
 *   Q1_0 {d; qs[16]}: 128 elements, x = +d or -d; Q2_0 {d; qs[16]}: 64 elements, x = d * (q - 1)
 *
 * Every kernel exists as portable scalar C (the reference) and, on x86-64, AVX2 and AVX-512
 * versions (on arm64, NEON for some types) that produce identical bytes/floats. Dequantizers:
 * the K-quants have AVX2 and AVX-512 versions (NEON: Q4_K and Q6_K); the dequantize-only types
 * use their scalar kernel at every level. Quantizers: the K-quant searches run 8 sub-blocks at
 * a time, one per AVX2 lane, with the scalar operations (Q2_K, Q4_K, Q5_K, Q6_K, and Q3_K with
 * an imatrix), Q8_K has an AVX2 version; Q3_K's reference search and the weighted legacy
 * quantizers are the scalar code at every level. The version used follows inf_simd_active()
 * (see inf_simd.h) at the moment of each call.
 *
 * Non-finite inputs: F16/BF16 conversions follow ggml (a NaN stays a quiet NaN of the same
 * sign, +-Inf stays +-Inf). A quantized block holding any NaN or +-Inf becomes the NaN block
 * (see inf_quantize_row), at every SIMD level (for the K types, the super-block of 256); ggml
 * leaves such blocks to float-to-integer casts or NaN scales whose sign depends on the CPU, so
 * there is no reference to match.
 *
 * Errors: see <ggtk/error.h>. Nothing here allocates or touches a file: the only failures are
 * a type without kernels or a count that is not whole blocks, both checkable beforehand
 * (inf_type_can_quantize(), ggtk_tensor_type_info_get()), so the checked entry points below
 * answer with false (or -1) instead of a ggtk_error.
 *
 * Thread-safety: every function is reentrant; distinct output buffers may be written from many
 * threads at once.
 */
#ifndef INF_QUANT_H
#define INF_QUANT_H

#include <stdbool.h>
#include <stdint.h>

#include <ggtk/gguf.h>
#include <ggtk/inf_simd.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Raw bit patterns of IEEE half precision and bfloat16 values as stored in GGUF files. */
typedef uint16_t inf_fp16;
typedef uint16_t inf_bf16;

/* ---------------------------------------------------------------------------------------------
 * Scalar conversions (always the portable code; use the row converters for bulk data)
 * ------------------------------------------------------------------------------------------- */

/* Exact widening; NaN stays NaN (quiet bit set, payload kept), denormals are kept. */
GGTK_API float inf_fp16_to_fp32(inf_fp16 h);
/* Round to nearest, ties to even; overflow gives +-Inf, values below half the smallest denormal
 * give +-0, NaN gives a quiet NaN (0x7E00 with the input's sign), as ggml does. */
GGTK_API inf_fp16 inf_fp32_to_fp16(float f);
/* Exact widening (bits shifted up by 16). */
GGTK_API float inf_bf16_to_fp32(inf_bf16 h);
/* Round to nearest, ties to even, denormals kept (not flushed); NaN keeps its upper 16 bits
 * with the quiet bit forced, as ggml does. */
GGTK_API inf_bf16 inf_fp32_to_bf16(float f);

/* ---------------------------------------------------------------------------------------------
 * Kernel table
 * ------------------------------------------------------------------------------------------- */

/* Dequantize `n` elements (a multiple of the type's block size) from `src` to `dst`. */
typedef void (*inf_to_float_fn)(const void *src, float *dst, int64_t n);
/* Quantize `n` elements (a multiple of the type's block size) from `src` to `dst`. */
typedef void (*inf_from_float_fn)(const float *src, void *dst, int64_t n);

/* Quantize one row of `n` elements (a multiple of the type's block size) from `src` to `dst`
 * with importance weights imatrix[0..n) (one per column, as llama-imatrix computes them), as
 * ggml_quantize_chunk does for one row. Returns the number of blocks that fell back to the
 * unweighted search (see inf_quantize_rows_imatrix). */
typedef int64_t (*inf_from_float_imatrix_fn)(const float *src, void *dst, int64_t n,
                                             const float *imatrix);

/* The kernels of one tensor type at one SIMD level; a NULL member means unsupported (a NULL
 * from_float_imatrix: the type has no weighted quantizer and ignores an imatrix, as ggml's Q8_0
 * and float types do). Kernels check nothing: n must be a non-negative multiple of the block
 * size, buffers must not overlap, and no alignment is required. */
typedef struct inf_quant_kernels {
    inf_to_float_fn to_float;
    inf_from_float_fn from_float;
    inf_from_float_imatrix_fn from_float_imatrix;
} inf_quant_kernels;

/* Kernels of `type` for the active SIMD level. Never NULL: an unknown or unsupported type gets
 * a row whose members are NULL. Static storage; look it up again after inf_simd_force(). */
GGTK_API const inf_quant_kernels *inf_quant_kernels_get(ggtk_tensor_type type);

/* Kernels of `type` at an explicit level (clamped to what this build and CPU have). For tests
 * and benchmarks that compare levels; never NULL, as above. */
GGTK_API const inf_quant_kernels *inf_quant_kernels_at(ggtk_tensor_type type, inf_simd_level level);

/* True when inf_quantize_row() supports `type` (F32, F16, BF16, Q4_0, Q4_1, Q5_0, Q5_1, Q8_0,
 * Q8_1, Q2_K, Q3_K, Q4_K, Q5_K, Q6_K, Q8_K). */
GGTK_API bool inf_type_can_quantize(ggtk_tensor_type type);
/* True when inf_dequantize_row() supports `type`: the types above and every dequantize-only type
 * listed at the top of this header (all GGUF tensor types but I8, I16, I32, I64 and F64). */
GGTK_API bool inf_type_can_dequantize(ggtk_tensor_type type);

/* ---------------------------------------------------------------------------------------------
 * Checked entry points
 * ------------------------------------------------------------------------------------------- */

/* Quantize `n` floats into `dst` (ggtk_tensor_type_bytes(type, n) bytes). Returns false and
 * writes nothing when the type is unsupported, n is negative or not a multiple of its block
 * size.
 * A block (32 inputs; 256 for the K types) holding any NaN or +-Inf has no finite scale that
 * represents it and is written as the NaN block: every fp16 scale field (d, and m, s or dmin)
 * is the quiet NaN 0x7E00 and every other byte is 0 (Q8_K: its float d is the quiet NaN
 * 0x7FC00000). It dequantizes to NaN in all 32 elements, so a NaN or Inf
 * activation turns a quantized dot product into NaN instead of vanishing. Finite blocks, huge
 * ones included, follow ggml's formulas (a scale beyond fp16's range is stored as +-Inf). The
 * file quantizer (inf_quantize_file.h) refuses non-finite input with an error instead. */
GGTK_API bool inf_quantize_row(ggtk_tensor_type type, const float *src, void *dst, int64_t n);

/* Quantize nrows rows of n_per_row floats into contiguous quantized rows, as ggml's
 * ggml_quantize_chunk(type, src, dst, 0, nrows, n_per_row, imatrix) does: with imatrix NULL,
 * or for a type without a weighted quantizer (F32, F16, BF16, Q8_0, Q8_1, Q8_K), the reference
 * quantizer (inf_quantize_row's bytes); otherwise Q2_K..Q6_K and Q4_0, Q4_1, Q5_0, Q5_1 search
 * each block's scales weighted by imatrix[0..n_per_row) (the same weights for every row).
 * NaN safety: with finite input, ggml's weighted search yields a NaN or infinite scale in some
 * blocks (imatrix entries that are NaN, a row whose mean square overflows float, values near
 * the edge of fp16's range; see docs/quantization.md). Such a
 * block is quantized by the reference search instead and counted; every other block is byte
 * for byte ggml's. Non-finite input blocks become the NaN block (see inf_quantize_row), not
 * counted. Returns the number of fallback blocks, or -1 (nothing written) when the type has no
 * quantizer, a count is negative, n_per_row is not a whole number of blocks or
 * nrows * n_per_row overflows. Single-threaded; rows are independent, so callers may split
 * them among threads. */
GGTK_API int64_t inf_quantize_rows_imatrix(ggtk_tensor_type type, const float *src, void *dst,
                                           int64_t nrows, int64_t n_per_row,
                                           const float *imatrix);

/* Dequantize `n` elements of `type` from `src` into `n` floats. Returns false and writes
 * nothing when the type is unsupported, n is negative or not a multiple of its block size. */
GGTK_API bool inf_dequantize_row(ggtk_tensor_type type, const void *src, float *dst, int64_t n);

/* Quantize a contiguous nrows x ncols float matrix into contiguous quantized rows, splitting the
 * blocks among `nthreads` OpenMP threads (<= 0: OpenMP's default). Output bytes do not depend on
 * the thread count. Returns false and writes nothing when the type is unsupported, a count is
 * negative, ncols is not a multiple of the block size or nrows*ncols overflows. */
GGTK_API bool inf_quantize_rows(ggtk_tensor_type type, const float *src, void *dst, int64_t nrows,
                       int64_t ncols, int nthreads);

/* Dequantize a contiguous nrows x ncols matrix of `type`; as inf_quantize_rows(). */
GGTK_API bool inf_dequantize_rows(ggtk_tensor_type type, const void *src, float *dst, int64_t nrows,
                         int64_t ncols, int nthreads);

/* Row converters between fp32 and fp16/bf16 at the active SIMD level (same bits as the scalar
 * conversions above). Any n >= 0; buffers must not overlap. */
GGTK_API void inf_fp16_to_fp32_row(const inf_fp16 *src, float *dst, int64_t n);
GGTK_API void inf_fp32_to_fp16_row(const float *src, inf_fp16 *dst, int64_t n);
GGTK_API void inf_bf16_to_fp32_row(const inf_bf16 *src, float *dst, int64_t n);
GGTK_API void inf_fp32_to_bf16_row(const float *src, inf_bf16 *dst, int64_t n);

#ifdef __cplusplus
}
#endif

#endif
