/* cuda_internal.cuh - what the CUDA backend's files share: the per-backend context, the operation
 * table's row type, error checking and scratch memory. */
#ifndef INF_CUDA_INTERNAL_CUH
#define INF_CUDA_INTERNAL_CUH

#include "cuda_compat.cuh"

#include <ggtk/error.h>
#include <ggtk/inf_backend.h>
#include <ggtk/inf_tensor.h>

/* Scratch areas of device memory a node may use at the same time; each is grow-only and reused
 * by every node. */
typedef enum cuda_scratch_slot {
    CUDA_SCRATCH_WEIGHTS,     /* a weight dequantized to F16 for cuBLAS */
    CUDA_SCRATCH_ACTIVATIONS, /* activations converted or quantized for a product */
    CUDA_SCRATCH_OUTPUT,      /* a result before it is copied into a strided destination */
    CUDA_SCRATCH_COUNT
} cuda_scratch_slot;

/* Pinned host memory large uploads and downloads pass through: two chunks, so that the CPU fills
 * one while the device copies the other. */
#define CUDA_STAGING_CHUNK ((size_t)16 << 20)

/* One backend: its device, the stream every kernel and copy of a graph runs on, a cuBLAS handle
 * bound to that stream, and the scratch areas. The backend and each of its buffers hold a
 * reference; the last one released destroys it (cuda_ctx_release). */
typedef struct cuda_ctx {
    int device;
    int compute_capability; /* major * 10 + minor */
    cudaStream_t stream;
    cublasHandle_t cublas;
    void *scratch[CUDA_SCRATCH_COUNT];
    size_t scratch_size[CUDA_SCRATCH_COUNT];
    int refs;
    size_t memory_in_use; /* device bytes from cuda_device_alloc() not yet freed */
    size_t memory_peak;
    void *staging[2];     /* CUDA_STAGING_CHUNK bytes of pinned memory each, made on first use */
    cudaEvent_t staging_free[2]; /* recorded after the last copy that used each chunk */
    bool staging_refused;        /* pinned memory was refused once: copy directly from then on */
    /* The first failure of a buffer write/read/fill (they cannot return one): reported by the
     * next compute. */
    ggtk_error copy_failure; /* status GGTK_OK: none */
} cuda_ctx;

/* One row of the operation table (cuda_op_table.cu): whether the node's op with its source types
 * and layouts can run, and the function that enqueues it on ctx->stream. compute() sets `err`
 * ("cuda: ...") and returns its status on failure. */
typedef struct cuda_op {
    bool (*supports)(const inf_tensor *node);
    ggtk_status (*compute)(cuda_ctx *ctx, inf_tensor *node, ggtk_error *err);
} cuda_op;

extern const cuda_op cuda_ops[INF_OP_COUNT];

/* GGTK_OK when `status` is cudaSuccess, else `err` names the call, where it was, and CUDA's
 * reason; the status is GGTK_ERR_NOMEM for cudaErrorMemoryAllocation and GGTK_ERR_IO otherwise. */
ggtk_status cuda_check(cudaError_t status, const char *call, const char *where, ggtk_error *err);
ggtk_status cublas_check(cublasStatus_t status, const char *call, const char *where,
                         ggtk_error *err);

/* Check a CUDA runtime call and return its ggtk_status from the enclosing function on failure. */
#define CUDA_TRY(call, err)                                                                      \
    do {                                                                                         \
        ggtk_status cuda_try_status_ = cuda_check((call), #call, __func__, (err));               \
        if (cuda_try_status_ != GGTK_OK)                                                         \
            return cuda_try_status_;                                                             \
    } while (0)

/* The same for a cuBLAS call. */
#define CUBLAS_TRY(call, err)                                                                    \
    do {                                                                                         \
        ggtk_status cublas_try_status_ = cublas_check((call), #call, __func__, (err));           \
        if (cublas_try_status_ != GGTK_OK)                                                       \
            return cublas_try_status_;                                                           \
    } while (0)

/* Drop one reference to `ctx`; the last frees the scratch areas, staging, cuBLAS handle and
 * stream (cuda_backend.cu). */
void cuda_ctx_release(cuda_ctx *ctx);

/* `size` bytes of device memory counted in ctx's statistics (cuda_memory.cu). NULL on failure with
 * `err` set: GGTK_ERR_NOMEM "cuda: out of device memory allocating N MiB (M MiB free of T)". */
void *cuda_device_alloc(cuda_ctx *ctx, size_t size, ggtk_error *err);

/* Free memory from cuda_device_alloc() of `size` bytes (NULL allowed). */
void cuda_device_free(cuda_ctx *ctx, void *memory, size_t size);

/* Copy `size` bytes from host memory to device memory `dst` / from device memory to host memory
 * and wait for the copy (cuda_transfer.cu). Large copies go through the pinned staging chunks,
 * overlapping the CPU's memcpy of one chunk with the device's copy of the other. */
ggtk_status cuda_upload(cuda_ctx *ctx, void *dst, const void *host_src, size_t size, ggtk_error *err);
ggtk_status cuda_download(cuda_ctx *ctx, void *host_dst, const void *src, size_t size,
                          ggtk_error *err);

/* Device scratch memory of at least `size` bytes in `slot`, valid until the next cuda_scratch()
 * call for the same slot (the stream orders its uses; growing waits for the stream). NULL with
 * `err` set when the device is out of memory. */
void *cuda_scratch(cuda_ctx *ctx, cuda_scratch_slot slot, size_t size, ggtk_error *err);

/* The launch error of the last kernel, if any, as cuda_check() reports it. */
#define CUDA_TRY_LAUNCH(err) CUDA_TRY(cudaGetLastError(), err)

#endif
