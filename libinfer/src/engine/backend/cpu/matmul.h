/* matmul.h - packed data formats and the kernel table of the CPU matrix product.
 *
 * dst[n][m] = dot(row m of the weights W, row n of the activations X). Both operands are packed
 * before the product so the inner loop streams two contiguous arrays:
 *  - W is packed a panel of P rows at a time (P = panel_rows of the kernel level), by the thread
 *    that uses it, and each panel is then applied to every activation row: one weight block read
 *    from memory serves all N rows (cache blocking for batches).
 *  - X is packed once per product, G rows to a group, shared by all threads.
 *
 * Quantized weights (Q8_0, Q4_0, Q4_1) meet activations quantized to 8 bits in blocks of 32 (as
 * llama.cpp: Q8_0 for Q8_0/Q4_0 weights, Q8_1 with block sums for Q4_1). Weight bytes are stored
 * unsigned (Q8_0 as q + 128, Q4 as the nibble 0..15) so that one unsigned-by-signed byte dot
 * product instruction (vpdpbusd) does the work; the offset it adds is removed by starting each
 * block's sum at a correction computed from the activation block's sum. (A level may keep its
 * own weight byte form: the packed panel is private to that level's pack and gemm pair.)
 *
 * Packed quantized weight panel, for each block b of 32 columns:
 *   qs: 8 groups g of [P rows][4 bytes] (bytes 4g..4g+3 of each row's block), P*32 bytes
 *   then, after all blocks: d[blocks][P] floats (scale), m[blocks][P] floats (Q4_1 minimum)
 * Packed quantized activation group, for each block b: qs 8 groups of [G rows][4 bytes], then
 *   d[G] floats, then c[G] 32-bit words: for Q8_0/Q4_0 weights the int32 start value
 *   -offset * sum(q) (offset 128 or 8), for Q4_1 the float s = d * sum(q) of Q8_1.
 * Packed float panel: [K][P] floats. Packed float activation group: [K][G] floats.
 * Rows past the end of W or X are packed as zeros.
 */
#ifndef INF_MATMUL_H
#define INF_MATMUL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <ggtk/gguf.h>

#define MM_BLOCK 32

/* How a kernel writes its tile into dst. */
typedef enum mm_store {
    MM_STORE,  /* overwrite */
    MM_ADD,    /* add to what is there (later chunks of the reduction) */
    MM_STREAM, /* overwrite bypassing the caches where the level can (outputs far larger than the
                  caches, e.g. logits); the driver fences after the product */
} mm_store;

/* Bytes of one packed quantized activation block of a group of g rows. */
static inline size_t mm_act_block_bytes(int g)
{
    return (size_t)g * (MM_BLOCK + 8);
}

/* Pack rows [0, rows) of quantized weights (type Q8_0, Q4_0 or Q4_1; rows `row_stride` bytes
 * apart, n_blocks blocks each) into a panel of p rows (rows >= `rows` become zero). */
typedef void (*mm_pack_q_fn)(ggtk_tensor_type type, const char *w, size_t row_stride, int rows,
                             int64_t n_blocks, int p, uint8_t *qs, float *d, float *m);

/* Product of a packed quantized panel and one packed activation group: writes dst[j][i] as
 * `store` says for rows j < nr of the group and panel rows i < m_valid; dst rows are dst_stride
 * bytes apart. */
typedef void (*mm_gemm_q_fn)(ggtk_tensor_type type, const uint8_t *qs, const float *d,
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
    /* The reduction dimension is cut into equal chunks of at most these sizes, so that a panel's
     * chunk stays in L1 (quantized) or L2 (float) and all activation groups' chunks in L2;
     * partial sums accumulate in dst. */
    int q_chunk_blocks; /* blocks of 32 per chunk, quantized path */
    int f_chunk;        /* elements per chunk, float path */
    mm_pack_q_fn pack_q;
    mm_gemm_q_fn gemm_q;
    mm_pack_f_fn pack_f;
    mm_pack_act_f_fn pack_act_f;
    mm_gemm_f_fn gemm_f;
} mm_kernels;

/* Kernels of the active SIMD level (inf_simd_active(), with VNNI for the AVX-512 quantized
 * kernels). Static storage. */
const mm_kernels *mm_kernels_get(void);

/* Portable packers, used by the scalar level and as a fallback by the others. */
void mm_pack_q_generic(ggtk_tensor_type type, const char *w, size_t row_stride, int rows,
                       int64_t n_blocks, int p, uint8_t *qs, float *d, float *m);
void mm_pack_f_generic(ggtk_tensor_type type, const char *w, size_t nb0, size_t nb1, int rows,
                       int64_t K, int p, float *panel);
void mm_pack_act_f_generic(const float *const *rows, int g, int64_t K, float *group);

extern const mm_kernels mm_kernels_scalar;
#if defined(__x86_64__)
extern const mm_kernels mm_kernels_avx2;
extern const mm_kernels mm_kernels_avx512;
#endif

#endif
