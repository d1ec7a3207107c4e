/* cuda_backend.cuh - what the backend object (cuda_backend.cu) and its buffers (cuda_buffer.cu)
 * share; kernels need none of it. */
#ifndef INF_CUDA_BACKEND_CUH
#define INF_CUDA_BACKEND_CUH

#include "cuda_internal.cuh"

/* A device buffer of `size` bytes on ctx's device, holding a reference to ctx. NULL on failure
 * with `err` set (GGTK_ERR_NOMEM naming the size and the device's free memory). */
inf_buffer *cuda_buffer_new(cuda_ctx *ctx, size_t size, ggtk_error *err);

/* The context whose device memory `buffer` is, or NULL when it is not a CUDA buffer. */
cuda_ctx *cuda_buffer_device(const inf_buffer *buffer);

#endif
