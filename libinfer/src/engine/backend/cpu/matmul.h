/* matmul.h - packed data formats and the kernel table of the CPU matrix product.
 *
 * dst[n][m] = dot(row m of the weights W, row n of the activations X). Both operands are packed
 * before the product so the inner loop streams two contiguous arrays:
 *  - W is packed a panel of P rows at a time (P = panel_rows of the kernel level), by the thread
 *    that uses it, and each panel is then applied to every activation row: one weight block read
 *    from memory serves all N rows (cache blocking for batches).
 *  - X is packed once per product, G rows to a group, shared by all threads.
 *
 * Quantized weights (the types with an mm_weight_format below) meet activations quantized to 8
 * bits in blocks of 32. Every such weight type is rewritten, per block of 32 columns, as 32
 * unsigned codes u and, per sub-block of S = 32 or 16 columns, a float scale d and minimum m:
 *   symmetric types  w = d * (u - offset)   (Q8_0, Q4_0, Q5_0, Q6_K, Q3_K)
 *   affine types     w = d * u + m          (Q4_1, Q5_1, Q4_K, Q5_K, Q2_K)
 * where d and m are exact in float (a fp16 scale times a small integer sub-block scale), so
 * d * u + m is bit for bit what the type's dequantizer computes. One unsigned-by-signed byte dot
 * product instruction (vpdpbusd) then gives sum(u * a) over a sub-block exactly; symmetric types
 * start that sum at -offset * sum(a) (an activation-side integer, so the integer part is the
 * exact dot product of the signed codes), affine ones add m * s with s = d_a * sum(a) as a float.
 * Each sub-block's float work is, in this order at every level, acc = fma(isum, d * d_a, acc)
 * and for affine types acc = fma(m, s, acc), and all levels cut the reduction into the same chunks
 * (MM_Q_CHUNK_BLOCKS): every level gives identical bits. (A level may keep its own weight byte form: the packed panel is private
 * to that level's pack and gemm pair; NEON keeps Q8_0 signed, AVX2 widens Q8_0's codes, weights
 * and activations, to 16 bits: see mm_kernels.wide_q8_0.)
 *
 * K types have 256-element super-blocks; Q4_K/Q5_K's 32-element sub-blocks are one block each,
 * Q6_K/Q3_K/Q2_K's 16-element sub-blocks are the two halves of a block (S = 16: two scales,
 * two minimums and two activation sums per block).
 *
 * Activations: every type meets the activation format llama.cpp gives it, so products agree
 * with llama.cpp's up to float summation order. Q8_0, Q4_0, Q5_0 take Q8_0 (fp16 scale per 32);
 * Q4_1, Q5_1 take Q8_1 (fp16 scale and fp16-rounded s per 32); the K types take Q8_K (one float
 * scale per 256-element super-block, K being a multiple of 256 for them), each block of 32
 * carrying its super-block's scale, with s = d_a * sum(a) in float. All are libinfer's own
 * quantizers, byte for byte ggml's (the x86 levels run Q8_K's as vector code of their own, with
 * the same bytes: activation quantization is a noticeable share of a prompt's time). A block
 * or super-block holding NaN or +-Inf gets a NaN scale and zero codes: its output row is NaN.
 *
 * Packed quantized weight panel (a chunk of n_blocks blocks of 32 columns), for each block b:
 *   qs: 8 groups g of [P rows][4 bytes] (bytes 4g..4g+3 of each row's block), P*32 bytes
 *   then, after all blocks: d[n_blocks * subs][P] floats, m[n_blocks * subs][P] floats, where
 *   subs = 32 / S and entry b * subs + s belongs to sub-block s of block b.
 * Packed quantized activation group, for each block b: qs 8 groups of [G rows][4 bytes], then
 *   d[G] floats, then c[subs][G] 32-bit words: for symmetric weights the int32 start value
 *   -offset * sum(a over the sub-block), for affine ones the float s of the sub-block.
 * With 16-bit codes (mm_code_bytes 2) each code of an activation group is an int16 (the signed
 *   code, in the same order), and a panel's qs take P*64 bytes per block (in its level's order).
 * Packed float panel: [K][P] floats. Packed float activation group: [K][G] floats.
 * Rows past the end of W or X are packed as zeros.
 *
 * Every other type with a dequantizer (F32, F16, BF16, IQ*, TQ*, MXFP4 ...) takes the float
 * path: its panel is packed by widening or dequantizing rows.
 */
#ifndef INF_MATMUL_H
#define INF_MATMUL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <ggtk/gguf.h>

#define MM_BLOCK 32

/* The integer path cuts the reduction into equal chunks of at most this many blocks, so that a
 * panel's chunk stays in L1 (27 KiB at 32 rows, 36 KiB with two sub-blocks) and all activation
 * groups' chunks in L2; partial sums accumulate in dst. Every level uses the same chunks, so
 * every level's integer-path products are the same floats bit for bit (see below). */
#define MM_Q_CHUNK_BLOCKS 24

/* The float path cuts the reduction into equal chunks of at most this many elements (whole
 * blocks for dequantized types), so that a panel's chunk stays in L2
 * (128 KiB at AVX-512's 32 rows, 64 KiB at AVX2's 16); partial sums accumulate in dst. Each
 * output is, within a chunk, a chain of fused multiply-adds in k order at every level (fmaf at
 * the scalar level), and the chunks are the same at every level: every level's float products
 * are the same floats bit for bit. */
#define MM_F_CHUNK 1024

/* How a kernel writes its tile into dst. */
typedef enum mm_store {
    MM_STORE,  /* overwrite */
    MM_ADD,    /* add to what is there (later chunks of the reduction) */
    MM_STREAM, /* overwrite bypassing the caches where the level can (outputs far larger than the
                  caches, e.g. logits); the driver fences after the product */
} mm_store;

/* How activation rows are quantized for a weight type (see the header comment). */
typedef enum mm_act_kind {
    MM_ACT_Q8_0,   /* libinfer's Q8_0 (ggml's): fp16 scale */
    MM_ACT_Q8_1,   /* libinfer's Q8_1 (ggml's): fp16 scale, fp16 s */
    MM_ACT_Q8_K,   /* libinfer's Q8_K (ggml's): float scale per 256, float s = d * sum */
} mm_act_kind;

/* The 32 unsigned codes of block b (0-based, in blocks of 32 columns) of a weight row starting
 * at `row`. */
typedef void (*mm_codes_fn)(const char *row, int64_t b, uint8_t u[MM_BLOCK]);
/* The scale and minimum of each sub-block of that block (d[0..subs), m[0..subs)). */
typedef void (*mm_scales_fn)(const char *row, int64_t b, float *d, float *m);

/* One row per quantized weight type the integer path multiplies. */
typedef struct mm_weight_format {
    ggtk_tensor_type type;
    int subs;          /* sub-blocks per block of 32: 1 (S = 32) or 2 (S = 16) */
    bool affine;       /* w = d * u + m; otherwise w = d * (u - offset) */
    int offset;        /* symmetric types' code offset */
    int max_code;      /* largest u (bounds the 16-bit pair sums of AVX2's vpmaddubsw) */
    mm_act_kind act;
    mm_codes_fn codes;
    mm_scales_fn scales;
} mm_weight_format;

/* The integer-path format of a weight type, or NULL for types that take the float path. */
const mm_weight_format *mm_weight_format_get(ggtk_tensor_type type);

/* Bytes of one packed quantized activation block of a group of g rows with `subs` sums and
 * codes of `code_bytes` bytes (mm_code_bytes). */
static inline size_t mm_act_block_bytes(int g, int subs, int code_bytes)
{
    return (size_t)g * (MM_BLOCK * (size_t)code_bytes + 4 + 4 * (size_t)subs);
}

/* Pack blocks [b0, b0 + n_blocks) of rows [0, rows) of quantized weights (rows start at w,
 * `row_stride` bytes apart) into a panel of p rows (rows >= `rows` become zero). */
typedef void (*mm_pack_q_fn)(const mm_weight_format *f, const char *w, size_t row_stride, int rows,
                             int64_t b0, int64_t n_blocks, int p, uint8_t *qs, float *d, float *m);

/* Product of a packed quantized panel and one packed activation group: writes dst[j][i] as
 * `store` says for rows j < nr of the group and panel rows i < m_valid; dst rows are dst_stride
 * bytes apart. */
typedef void (*mm_gemm_q_fn)(const mm_weight_format *f, const uint8_t *qs, const float *d,
                             const float *m, const uint8_t *act, int64_t n_blocks, int nr,
                             float *dst, size_t dst_stride, int m_valid, mm_store store);

/* Pack a p-row float panel from element (k, i) at w + k*nb0 + i*nb1 of `type` (F32, F16, BF16),
 * rows i < rows (the others zero), k < K. */
typedef void (*mm_pack_f_fn)(ggtk_tensor_type type, const char *w, size_t nb0, size_t nb1,
                             int rows, int64_t K, int p, float *panel);

/* Pack one float activation group of g rows: group[k * g + j] = rows[j][k] (0 where rows[j] is
 * NULL), k < K. */
typedef void (*mm_pack_act_f_fn)(const float *const *rows, int g, int64_t K, float *group);

/* Product of a packed float panel and one packed float activation group (as mm_gemm_q_fn). */
typedef void (*mm_gemm_f_fn)(const float *panel, const float *act, int64_t K, int nr, float *dst,
                             size_t dst_stride, int m_valid, mm_store store);

/* One level's kernels and the tile geometry they were written for. */
typedef struct mm_kernels {
    const char *name;
    int panel_rows;   /* P for both paths */
    int q_group;      /* G of quantized activation groups */
    int f_group;      /* G of float activation groups */
    mm_pack_q_fn pack_q;
    mm_gemm_q_fn gemm_q;
    mm_pack_f_fn pack_f;
    mm_pack_act_f_fn pack_act_f;
    mm_gemm_f_fn gemm_f;
    /* Q8_0 panels and activation groups hold 16-bit codes. Where the only byte product is
     * unsigned by signed (AVX2's vpmaddubsw), signed codes on both sides cost a sign transfer
     * per product and a correction per block, while a 16-bit product (vpmaddwd) gives as many
     * exact 32-bit sums per multiply as the byte product and its widening did. */
    bool wide_q8_0;
} mm_kernels;

/* Bytes per code in level k's packed panels and activation groups of format f: 1, or 2. */
static inline int mm_code_bytes(const mm_kernels *k, const mm_weight_format *f)
{
    return k->wide_q8_0 && f->type == GGTK_TENSOR_Q8_0 ? 2 : 1;
}

/* Kernels of the active SIMD level (inf_simd_active(), with VNNI for the AVX-512 quantized
 * kernels). Static storage. */
const mm_kernels *mm_kernels_get(void);

/* Portable packers, used by the scalar level and as a fallback by the others. */
void mm_pack_q_generic(const mm_weight_format *f, const char *w, size_t row_stride, int rows,
                       int64_t b0, int64_t n_blocks, int p, uint8_t *qs, float *d, float *m);
void mm_pack_f_generic(ggtk_tensor_type type, const char *w, size_t nb0, size_t nb1, int rows,
                       int64_t K, int p, float *panel);
void mm_pack_act_f_generic(const float *const *rows, int g, int64_t K, float *group);

/* Pack a p-row float panel of K elements of a block-quantized type by dequantizing rows (rows
 * `row_stride` bytes apart, K a multiple of the type's block size and at most MM_DEQUANT_MAX). */
#define MM_DEQUANT_MAX 2048
_Static_assert(MM_F_CHUNK <= MM_DEQUANT_MAX, "a float chunk must fit a dequantized panel");
void mm_pack_f_dequantized(ggtk_tensor_type type, const char *w, size_t row_stride, int rows,
                           int64_t K, int p, float *panel);

#if defined(__x86_64__)
/* The x86 packer of unsigned codes (p a multiple of 8): the AVX2 level's for every type but
 * Q8_0, which it keeps signed, and the AVX-512 level's for the types it does not gather. */
void mm_pack_q_x86(const mm_weight_format *f, const char *w, size_t row_stride, int rows,
                   int64_t b0, int64_t n_blocks, int p, uint8_t *qs, float *d, float *m);
#endif

extern const mm_kernels mm_kernels_scalar;
#if defined(__x86_64__)
extern const mm_kernels mm_kernels_avx2;
extern const mm_kernels mm_kernels_avx512;
#endif
#if defined(__ARM_NEON) && defined(__aarch64__)
extern const mm_kernels mm_kernels_neon;
#endif

#endif
