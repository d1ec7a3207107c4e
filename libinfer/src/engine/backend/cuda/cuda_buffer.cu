/* cuda_buffer.cu - device buffers: cudaMalloc'd memory behind the inf_buffer interface, so
 * inf_tensor_write()/inf_tensor_read() and the graph allocator work on them as on host buffers. */
#include <stdlib.h>

#include <ggtk/inf_backend_cuda.h>

#include "cuda_backend.cuh"

/* A buffer's private state: the backend context it belongs to (one reference held). */
typedef struct cuda_buffer {
    cuda_ctx *ctx;
} cuda_buffer;

/* The buffer operations cannot return a failure; the first one is kept for the next compute. */
static void keep_copy_failure(cuda_ctx *ctx, const ggtk_error *failure)
{
    if (ctx->copy_failure.status == GGTK_OK)
        ctx->copy_failure = *failure;
}

static cuda_ctx *buffer_ctx(const inf_buffer *buffer)
{
    return ((const cuda_buffer *)buffer->impl)->ctx;
}

static void cuda_buffer_write(inf_buffer *buffer, void *dst, const void *host_src, size_t size)
{
    ggtk_error failure;
    if (cuda_upload(buffer_ctx(buffer), dst, host_src, size, &failure) != GGTK_OK)
        keep_copy_failure(buffer_ctx(buffer), &failure);
}

static void cuda_buffer_read(inf_buffer *buffer, void *host_dst, const void *src, size_t size)
{
    ggtk_error failure;
    if (cuda_download(buffer_ctx(buffer), host_dst, src, size, &failure) != GGTK_OK)
        keep_copy_failure(buffer_ctx(buffer), &failure);
}

static ggtk_status fill(cuda_ctx *ctx, void *dst, uint8_t value, size_t size, ggtk_error *err)
{
    CUDA_TRY(cudaSetDevice(ctx->device), err);
    CUDA_TRY(cudaMemsetAsync(dst, value, size, ctx->stream), err);
    CUDA_TRY(cudaStreamSynchronize(ctx->stream), err);
    return GGTK_OK;
}

static void cuda_buffer_fill(inf_buffer *buffer, void *dst, uint8_t value, size_t size)
{
    ggtk_error failure;
    if (fill(buffer_ctx(buffer), dst, value, size, &failure) != GGTK_OK)
        keep_copy_failure(buffer_ctx(buffer), &failure);
}

static void cuda_buffer_release(inf_buffer *buffer)
{
    cuda_buffer *impl = (cuda_buffer *)buffer->impl;
    cuda_device_free(impl->ctx, buffer->base, buffer->size);
    cuda_ctx_release(impl->ctx);
    free(impl);
}

static const inf_buffer_ops cuda_buffer_ops = {"cuda", cuda_buffer_release, cuda_buffer_write,
                                               cuda_buffer_read, cuda_buffer_fill};

inf_buffer *cuda_buffer_new(cuda_ctx *ctx, size_t size, ggtk_error *err)
{
    cuda_buffer *impl = (cuda_buffer *)malloc(sizeof *impl);
    if (!impl) {
        ggtk_error_set(err, GGTK_ERR_NOMEM, GGTK_NO_OFFSET, "cuda: out of host memory");
        return NULL;
    }
    void *memory = cuda_device_alloc(ctx, size, err);
    inf_buffer *buffer =
        memory ? inf_buffer_new_custom(&cuda_buffer_ops, memory, size, false, false, impl) : NULL;
    if (!buffer) {
        if (memory)
            ggtk_error_set(err, GGTK_ERR_NOMEM, GGTK_NO_OFFSET, "cuda: out of host memory");
        cuda_device_free(ctx, memory, size);
        free(impl);
        return NULL;
    }
    impl->ctx = ctx;
    ctx->refs++;
    return buffer;
}

cuda_ctx *cuda_buffer_device(const inf_buffer *buffer)
{
    return buffer && buffer->ops == &cuda_buffer_ops ? buffer_ctx(buffer) : NULL;
}

bool inf_buffer_is_cuda(const inf_buffer *buffer)
{
    return cuda_buffer_device(buffer) != NULL;
}
