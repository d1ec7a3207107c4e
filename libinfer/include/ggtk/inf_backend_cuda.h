/* inf_backend_cuda.h - the CUDA backend: graphs computed on an NVIDIA GPU.
 *
 * libinfer has three builds (docs/cuda.md): `make` (no CUDA: every function below exists and
 * reports GGTK_ERR_UNSUPPORTED "built without CUDA: rebuild with make CUDA=1"), `make CUDA=1` (the
 * CUDA runtime and cuBLAS) and `make CUDA_EMU=1` (the same sources run by a CPU-side emulator, so
 * the backend is tested on machines without a GPU). Programs call the same functions in all three
 * and decide at run time with inf_cuda_device_count().
 *
 * A CUDA backend owns one CUDA stream and a cuBLAS handle bound to it. Its buffers
 * (inf_backend_alloc_buffer(), inf_backend_alloc_context_tensors(), a graph allocator made with
 * it) are device memory from cudaMalloc, 256-byte aligned; data moves in and out through
 * inf_tensor_write()/inf_tensor_read() (large writes go through pinned staging memory with
 * asynchronous copies). Every leaf and node of a graph it computes must be in its device memory:
 * a tensor in a host buffer is refused, naming it. Free the backend's buffers before the backend
 * or after, in any order: the device state lives until the last of them is freed.
 *
 * Errors: see <ggtk/error.h>. Messages start with "cuda: "; offsets are GGTK_NO_OFFSET. Out of
 * device memory is GGTK_ERR_NOMEM "cuda: out of device memory allocating N MiB (M MiB free of T)".
 *
 * Thread-safety: a backend and its buffers may be used by one thread at a time.
 */
#ifndef INF_BACKEND_CUDA_H
#define INF_BACKEND_CUDA_H

#include <ggtk/export.h>

#include <stdbool.h>
#include <stddef.h>

#include <ggtk/error.h>
#include <ggtk/inf_backend.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Whether this libinfer was built with a CUDA backend (make CUDA=1, or CUDA_EMU=1 where the
 * "device" is the emulator). Says nothing about a device being present. */
GGTK_API bool inf_cuda_built(void);

/* Whether the CUDA backend of this build is the CPU-side emulator (make CUDA_EMU=1). */
GGTK_API bool inf_cuda_emulated(void);

/* Number of CUDA devices usable by this process. 0 with `err` set to GGTK_ERR_UNSUPPORTED and a
 * one-line reason when there is none: not built with CUDA, no device visible, the driver older
 * than the runtime ("cuda: no usable device: CUDA driver version is insufficient ..."). */
GGTK_API int inf_cuda_device_count(ggtk_error *err);

/* What a device is, for tools to print and benchmarks to record. */
typedef struct inf_cuda_device_info {
    char name[256];              /* "NVIDIA H100 80GB HBM3" */
    int compute_capability;      /* major * 10 + minor: 80 for sm_80, 90 for sm_90 */
    int multiprocessors;         /* streaming multiprocessors */
    size_t total_memory;         /* bytes of device memory */
    size_t free_memory;          /* bytes free now, as the driver reports them */
} inf_cuda_device_info;

/* Describe device `device` (0 .. inf_cuda_device_count() - 1) into *info. GGTK_ERR_UNSUPPORTED
 * when there is no such device (reason as for inf_cuda_device_count()), GGTK_ERR_IO when the
 * runtime fails. *info is zeroed on failure. */
GGTK_API ggtk_status inf_cuda_device_describe(int device, inf_cuda_device_info *info,
                                              ggtk_error *err);

/* A CUDA backend computing on device `device`: its stream and cuBLAS handle are made now. NULL on
 * failure with `err` set: GGTK_ERR_UNSUPPORTED (no such device, or not built with CUDA),
 * GGTK_ERR_NOMEM, GGTK_ERR_IO (the runtime or cuBLAS refused). Free with inf_backend_free(). */
GGTK_API inf_backend *inf_backend_cuda_new(int device, ggtk_error *err);

/* Whether `backend` is a CUDA backend (false for NULL). */
GGTK_API bool inf_backend_is_cuda(const inf_backend *backend);

/* Whether `buffer` is device memory of a CUDA backend (false for NULL). */
GGTK_API bool inf_buffer_is_cuda(const inf_buffer *buffer);

/* The device a CUDA backend computes on; -1 for another backend. */
GGTK_API int inf_backend_cuda_device(const inf_backend *backend);

/* Device memory a CUDA backend holds: its buffers and its scratch areas. */
typedef struct inf_cuda_memory {
    size_t in_use;      /* bytes allocated now */
    size_t peak;        /* most bytes allocated at once since the backend was made */
    size_t pinned_host; /* bytes of pinned host memory (upload staging) */
} inf_cuda_memory;

/* Memory statistics of a CUDA backend; all zero for another backend. */
GGTK_API inf_cuda_memory inf_backend_cuda_memory(const inf_backend *backend);

#ifdef __cplusplus
}
#endif

#endif /* INF_BACKEND_CUDA_H */
