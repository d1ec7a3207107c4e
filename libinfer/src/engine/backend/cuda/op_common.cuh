/* op_common.cuh - what the element-wise, norm, rope, softmax and copy kernels share: a tensor as
 * a kernel sees it (data, sizes, byte strides), the row addressing with broadcasting that the CPU
 * backend uses (row_of() in op_elementwise.c), the layouts a kernel can load from, and launch
 * geometry. */
#ifndef INF_CUDA_OP_COMMON_CUH
#define INF_CUDA_OP_COMMON_CUH

#include <stdint.h>

#include "cuda_ops.cuh"
#include "engine/tensor/tensor_internal.h"

/* Threads of a block that works on one row: a power of two, so that block reductions halve. */
#define CUDA_ROW_THREADS_MAX 1024

/* A tensor as a kernel takes it (by value): device address, elements and byte strides. */
typedef struct cuda_view {
    char *data;
    int64_t ne[4];
    int64_t nb[4];
} cuda_view;

static inline cuda_view cuda_view_of(const inf_tensor *t)
{
    cuda_view v;
    v.data = (char *)t->data;
    for (int i = 0; i < 4; i++) {
        v.ne[i] = t->ne[i];
        v.nb[i] = (int64_t)t->nb[i];
    }
    return v;
}

/* The coordinates in dimensions 1..3 of row `row` of a tensor of sizes ne. In 32 bits, which a
 * GPU divides several times faster than 64: launches keep the row count, and with it every
 * ne[1..3], below 2^31 (cuda_grid_fits()). */
static inline __device__ void cuda_row_coords(const int64_t ne[4], int64_t row, uint32_t i[3])
{
    const uint32_t r = (uint32_t)row, n1 = (uint32_t)ne[1], n2 = (uint32_t)ne[2];
    i[0] = r % n1;
    i[1] = r / n1 % n2;
    i[2] = r / n1 / n2;
}

/* Start of row `row` (counted over dimensions 1..3 of ne) of `t`, whose index in each dimension
 * wraps at its own size: t broadcast over a tensor of sizes ne. */
static inline __device__ char *cuda_row(const cuda_view *t, const int64_t ne[4], int64_t row)
{
    uint32_t i[3];
    cuda_row_coords(ne, row, i);
    return t->data + (int64_t)(i[0] % (uint32_t)t->ne[1]) * t->nb[1] +
           (int64_t)(i[1] % (uint32_t)t->ne[2]) * t->nb[2] +
           (int64_t)(i[2] % (uint32_t)t->ne[3]) * t->nb[3];
}

/* Bytes of one element of the plain types the kernels read and write; 0 for any other type. */
static inline size_t cuda_element_size(ggtk_tensor_type type)
{
    switch (type) {
    case GGTK_TENSOR_F32:
    case GGTK_TENSOR_I32: return 4;
    case GGTK_TENSOR_F16:
    case GGTK_TENSOR_BF16: return 2;
    default: return 0;
    }
}

/* Whether a kernel may load t's elements as naturally aligned values: a plain type whose
 * strides (of the dimensions that are stepped over) and view offset are whole elements. The CPU
 * reads any byte layout; a GPU faults on a misaligned load. Memory the allocator hands out is
 * aligned, so only an odd view offset or stride fails this. */
static inline bool cuda_aligned(const inf_tensor *t)
{
    const size_t size = cuda_element_size(t->type);
    if (size == 0 || t->view_offset % size != 0)
        return false;
    for (int i = 0; i < 4; i++) {
        if (t->ne[i] > 1 && t->nb[i] % size != 0)
            return false;
    }
    return true;
}

static inline int64_t cuda_rows(const inf_tensor *t)
{
    return t->ne[1] * t->ne[2] * t->ne[3];
}

static inline int64_t cuda_elements(const inf_tensor *t)
{
    return t->ne[0] * cuda_rows(t);
}

/* Threads for a block that walks rows of `width` elements: enough warps to cover the row once,
 * a power of two from 32 to `max_threads`. */
static inline unsigned cuda_row_threads(int64_t width, unsigned max_threads)
{
    unsigned threads = 32;
    while (threads < max_threads && (int64_t)threads < width)
        threads *= 2;
    return threads;
}

/* Blocks per row for element-wise kernels: each thread of `threads` handles about four elements
 * of a row of `width`, and rows * blocks stays within a one-dimensional grid. */
static inline unsigned cuda_blocks_per_row(int64_t width, unsigned threads, int64_t rows)
{
    int64_t blocks = (width + 4 * (int64_t)threads - 1) / (4 * (int64_t)threads);
    const int64_t limit = INT32_MAX / (rows > 0 ? rows : 1);
    if (blocks > limit)
        blocks = limit;
    return (unsigned)(blocks > 0 ? blocks : 1);
}

/* Whether `rows` blocks fit a one-dimensional grid (at most 2^31 - 1). */
static inline bool cuda_grid_fits(int64_t rows)
{
    return rows <= INT32_MAX;
}

#endif
