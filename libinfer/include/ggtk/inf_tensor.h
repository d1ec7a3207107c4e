/* inf_tensor.h - tensors and the context (arena) that holds their metadata.
 *
 * A tensor has a type (the GGUF tensor types: F32, F16, BF16, Q8_0, ... and I32 for indices), up
 * to four dimensions given as element counts ne[] and byte strides nb[], a data pointer, and - when
 * it is computed rather than given - the operation producing it and that operation's sources.
 * Dimension 0 is the fastest-varying one; a "row" is one run of ne[0] elements. For block-quantized
 * types nb[0] is the size of one block and nb[1] the bytes of a row.
 *
 * A view (reshape, view, permute, transpose) shares the memory of the tensor it looks into: its
 * view_src is the tensor that owns the memory (never itself a view) and view_offset the byte offset
 * into it. Building an operation never computes anything: it only records the operation. Graphs
 * (inf_graph.h) collect the recorded operations; backends (inf_backend.h) execute them.
 *
 * The context is one block of memory sized at creation from which tensor metadata (and, unless
 * created in no-data mode, tensor data) is carved. In no-data mode tensors get their memory later
 * from a graph allocator (inf_alloc.h) or a backend buffer (inf_backend.h).
 *
 * Errors: see <ggtk/error.h>. Tensor and op constructors are its builder-style exception: one that
 * cannot build its tensor returns NULL and keeps a ggtk_error in the context (GGTK_ERR_NOMEM when
 * the context is full, GGTK_ERR_INVALID for shapes or types that do not fit the operation or a
 * NULL argument); constructors given a NULL source return NULL too, so a whole graph may be built
 * and checked once with inf_context_error(). Only the first error is kept.
 *
 * Lifecycle verbs, the same in every libinfer header: an object built in memory is made by
 * `*_new` (or a named variant such as inf_buffer_host_new, inf_backend_cpu_new) and released by
 * `*_free`; an object that reads a file in place for its whole life (a model, a KL-divergence base
 * file, its writer) is made by `*_open` and released by `*_close`. Releasing NULL does nothing.
 * Constructors whose only possible failure is lack of memory return NULL and take no `err`
 * (GGTK_ERR_NOMEM is the only thing it could say).
 *
 * Thread-safety: a context and its tensors may be used by one thread at a time while being built;
 * once built, reading tensor metadata from many threads is safe.
 */
#ifndef INF_TENSOR_H
#define INF_TENSOR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <ggtk/gguf.h>
#include <ggtk/error.h>

#ifdef __cplusplus
extern "C" {
#endif

enum {
    INF_MAX_DIMS = 4,      /* dimensions of a tensor */
    INF_MAX_SRC = 3,       /* sources of one operation */
    INF_MAX_OP_PARAMS = 8, /* 32-bit words of per-operation parameters */
    INF_MAX_NAME = 64,     /* bytes of a tensor name, the terminating NUL included */
};

/* What produces a tensor. Each value's sources and parameters are documented at its constructor
 * in inf_ops.h. */
typedef enum inf_op {
    INF_OP_NONE = 0,  /* a leaf: weights, inputs, caches - data comes from outside */
    INF_OP_VIEW,      /* reshape/view/permute/transpose: no computation, memory of view_src */
    INF_OP_CONT,      /* contiguous copy of src[0] */
    INF_OP_CPY,       /* src[0] converted into the memory of src[1] (a view of src[1]) */
    INF_OP_SET_ROWS,  /* rows of src[1] written into src[0] at row indices src[2] */
    INF_OP_GET_ROWS,  /* rows of src[0] picked by indices src[1], dequantized to F32 */
    INF_OP_ADD,       /* src[0] + src[1], src[1] broadcast */
    INF_OP_MUL,       /* src[0] * src[1], src[1] broadcast */
    INF_OP_SCALE,     /* src[0] * constant */
    INF_OP_SILU,      /* x * sigmoid(x) */
    INF_OP_SWIGLU,    /* silu(src[0]) * src[1] */
    INF_OP_GELU,      /* GELU, tanh approximation, as ggml's CPU backend computes it */
    INF_OP_GEGLU,     /* gelu(src[0]) * src[1] */
    INF_OP_SOFTCAP,   /* c * tanh(x / c) */
    INF_OP_RMS_NORM,  /* x / sqrt(mean(x^2) + eps), per row */
    INF_OP_ROPE,      /* rotary position embedding of src[0] at positions src[1] */
    INF_OP_SOFT_MAX,  /* softmax(src[0] * scale + mask) per row, mask src[1] or causal (windowed) */
    INF_OP_MUL_MAT,   /* src[1] rows times src[0] rows: dst[m, n] = dot(src0 row m, src1 row n) */
    INF_OP_FLASH_ATTN, /* softmax(scale * Q K^T, softcapped, causal/windowed) V in one pass */
    INF_OP_COUNT
} inf_op;

/* Upper-case name of an operation ("MUL_MAT"); "UNKNOWN" for a bad value. Static storage. */
GGTK_API const char *inf_op_name(inf_op op);

/* Tensor flags (inf_tensor.flags). */
enum {
    INF_TENSOR_INPUT = 1u << 0,  /* set by the caller before compute: the allocator gives it memory
                                    of its own that no other tensor of the graph reuses */
    INF_TENSOR_OUTPUT = 1u << 1, /* read by the caller after compute: its memory is never reused */
};

/* A tensor. Fields are public for reading; change them only through the functions below (the
 * allocator and backends set `data` and `buffer`). */
typedef struct inf_tensor {
    ggtk_tensor_type type;
    int64_t ne[INF_MAX_DIMS];           /* elements per dimension; unused dimensions are 1 */
    size_t nb[INF_MAX_DIMS];            /* byte stride per dimension (see the file comment) */
    inf_op op;
    int32_t op_params[INF_MAX_OP_PARAMS];
    struct inf_tensor *src[INF_MAX_SRC];
    struct inf_tensor *view_src;        /* owner of the memory of a view, else NULL */
    size_t view_offset;                 /* byte offset of a view into view_src */
    void *data;                         /* NULL until memory is assigned */
    struct inf_buffer *buffer;          /* buffer `data` lies in, NULL for context memory */
    uint32_t flags;                     /* INF_TENSOR_* */
    char name[INF_MAX_NAME];
} inf_tensor;

/* ---------------------------------------------------------------------------------------------
 * Context
 * ------------------------------------------------------------------------------------------- */

typedef struct inf_context inf_context;

/* Bytes of context memory one tensor's metadata takes (use it to size a no-data context:
 * n_tensors * inf_tensor_overhead() + inf_graph_overhead(max_nodes)). */
GGTK_API size_t inf_tensor_overhead(void);

/* A context whose one block holds `mem_size` bytes. With `no_data` true tensors are created
 * without memory (data NULL); otherwise each tensor's data is carved from the block too (aligned
 * to 64 bytes). Returns NULL when out of memory. Free with inf_context_free(). */
GGTK_API inf_context *inf_context_new(size_t mem_size, bool no_data);

/* Free the context's block: every tensor and graph made in it becomes invalid. NULL allowed. */
GGTK_API void inf_context_free(inf_context *ctx);

/* Bytes of the block used so far. */
GGTK_API size_t inf_context_used(const inf_context *ctx);

/* Whether the context was made in no-data mode. */
GGTK_API bool inf_context_no_data(const inf_context *ctx);

/* First error a constructor met in this context (status, GGTK_NO_OFFSET, and one line naming the
 * operation and the reason), or NULL when there was none. Owned by the context. */
GGTK_API const ggtk_error *inf_context_error(const inf_context *ctx);

/* Iterate over the context's tensors in creation order: first with prev NULL, NULL at the end. */
GGTK_API inf_tensor *inf_context_next_tensor(const inf_context *ctx, const inf_tensor *prev);

/* ---------------------------------------------------------------------------------------------
 * Creating and describing tensors
 * ------------------------------------------------------------------------------------------- */

/* A new leaf tensor of `type` with `n_dims` (1..4) dimensions `ne` (each >= 1; ne[0] a multiple
 * of the type's block size), contiguous strides and no name. Its data is NULL in no-data mode,
 * else uninitialised context memory. NULL on error (see the file comment). */
GGTK_API inf_tensor *inf_tensor_new(inf_context *ctx, ggtk_tensor_type type, int n_dims, const int64_t *ne);
GGTK_API inf_tensor *inf_tensor_new_1d(inf_context *ctx, ggtk_tensor_type type, int64_t ne0);
GGTK_API inf_tensor *inf_tensor_new_2d(inf_context *ctx, ggtk_tensor_type type, int64_t ne0, int64_t ne1);
GGTK_API inf_tensor *inf_tensor_new_3d(inf_context *ctx, ggtk_tensor_type type, int64_t ne0, int64_t ne1,
                              int64_t ne2);
GGTK_API inf_tensor *inf_tensor_new_4d(inf_context *ctx, ggtk_tensor_type type, int64_t ne0, int64_t ne1,
                              int64_t ne2, int64_t ne3);

/* Set the name (printf format, truncated to INF_MAX_NAME - 1 bytes). Returns `tensor` so calls
 * can be chained; NULL tensor gives NULL. */
GGTK_API inf_tensor *inf_tensor_set_name(inf_tensor *tensor, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* Mark a tensor as a graph input / output (see INF_TENSOR_INPUT / INF_TENSOR_OUTPUT). */
GGTK_API void inf_tensor_set_input(inf_tensor *tensor);
GGTK_API void inf_tensor_set_output(inf_tensor *tensor);

/* Product of ne[]. */
GGTK_API int64_t inf_tensor_nelements(const inf_tensor *tensor);
/* Rows: ne[1] * ne[2] * ne[3]. */
GGTK_API int64_t inf_tensor_nrows(const inf_tensor *tensor);
/* Bytes from the first to one past the last byte the tensor touches (for a contiguous tensor its
 * size; for a view with gaps, the span it covers). */
GGTK_API size_t inf_tensor_nbytes(const inf_tensor *tensor);
/* True when the elements lie in memory in order with no gaps. */
GGTK_API bool inf_tensor_is_contiguous(const inf_tensor *tensor);
/* True when rows are contiguous (nb[0] is one element or block) though rows may be apart. */
GGTK_API bool inf_tensor_rows_contiguous(const inf_tensor *tensor);
/* True when both have the same ne[]. */
GGTK_API bool inf_tensor_same_shape(const inf_tensor *a, const inf_tensor *b);
/* Bytes of one row of `ne0` elements of `type` (0 when ne0 is not a multiple of the block size). */
GGTK_API size_t inf_type_row_size(ggtk_tensor_type type, int64_t ne0);

/* ---------------------------------------------------------------------------------------------
 * Views: new tensors sharing the memory of `a`; no data is copied, and `a` must outlive them.
 * ------------------------------------------------------------------------------------------- */

/* `a` (contiguous) seen with another shape of the same element count. */
GGTK_API inf_tensor *inf_reshape_1d(inf_context *ctx, inf_tensor *a, int64_t ne0);
GGTK_API inf_tensor *inf_reshape_2d(inf_context *ctx, inf_tensor *a, int64_t ne0, int64_t ne1);
GGTK_API inf_tensor *inf_reshape_3d(inf_context *ctx, inf_tensor *a, int64_t ne0, int64_t ne1, int64_t ne2);
GGTK_API inf_tensor *inf_reshape_4d(inf_context *ctx, inf_tensor *a, int64_t ne0, int64_t ne1, int64_t ne2,
                           int64_t ne3);

/* A window into `a` starting `offset` bytes in, with the given counts and row strides (nb0 stays
 * the element size of a's type). The window must lie inside a's memory. */
GGTK_API inf_tensor *inf_view_1d(inf_context *ctx, inf_tensor *a, int64_t ne0, size_t offset);
GGTK_API inf_tensor *inf_view_2d(inf_context *ctx, inf_tensor *a, int64_t ne0, int64_t ne1, size_t nb1,
                        size_t offset);
GGTK_API inf_tensor *inf_view_3d(inf_context *ctx, inf_tensor *a, int64_t ne0, int64_t ne1, int64_t ne2,
                        size_t nb1, size_t nb2, size_t offset);
GGTK_API inf_tensor *inf_view_4d(inf_context *ctx, inf_tensor *a, int64_t ne0, int64_t ne1, int64_t ne2,
                        int64_t ne3, size_t nb1, size_t nb2, size_t nb3, size_t offset);

/* Reorder dimensions: dimension i of `a` becomes dimension axis_i of the result (the axes are a
 * permutation of 0..3). Example: a [d, h, t, 1] with (0, 2, 1, 3) gives [d, t, h, 1]. */
GGTK_API inf_tensor *inf_permute(inf_context *ctx, inf_tensor *a, int axis0, int axis1, int axis2,
                        int axis3);

/* Swap dimensions 0 and 1. */
GGTK_API inf_tensor *inf_transpose(inf_context *ctx, inf_tensor *a);

#ifdef __cplusplus
}
#endif

#endif /* INF_TENSOR_H */
