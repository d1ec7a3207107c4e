/* cuda_transfer.cu - copies between host memory and device memory. A copy from pageable memory
 * (the file map of the weights, a caller's array) is staged by the driver in small pieces; going
 * through our own two pinned chunks instead lets the CPU fill one chunk while the device copies
 * the other, which is what makes uploading a model fast. */
#include <string.h>

#include "cuda_internal.cuh"

/* Below this a copy is one direct call: staging costs more than it saves. */
#define CUDA_STAGING_MIN ((size_t)1 << 20)

/* Allocate the staging chunks once; false (and never again) when pinned memory is refused. */
static bool staging_ready(cuda_ctx *ctx)
{
    if (ctx->staging[0])
        return true;
    if (ctx->staging_refused)
        return false;
    bool ok = true;
    for (int i = 0; i < 2; i++) {
        ok = ok && cudaMallocHost(&ctx->staging[i], CUDA_STAGING_CHUNK) == cudaSuccess;
        ok = ok && cudaEventCreateWithFlags(&ctx->staging_free[i], cudaEventDisableTiming) ==
                       cudaSuccess;
    }
    if (!ok) {
        for (int i = 0; i < 2; i++) {
            if (ctx->staging[i])
                cudaFreeHost(ctx->staging[i]);
            if (ctx->staging_free[i])
                cudaEventDestroy(ctx->staging_free[i]);
            ctx->staging[i] = NULL;
            ctx->staging_free[i] = NULL;
        }
        cudaGetLastError();
        ctx->staging_refused = true;
    }
    return ok;
}

static size_t chunk_at(size_t offset, size_t size)
{
    return size - offset < CUDA_STAGING_CHUNK ? size - offset : CUDA_STAGING_CHUNK;
}

ggtk_status cuda_upload(cuda_ctx *ctx, void *dst, const void *host_src, size_t size, ggtk_error *err)
{
    CUDA_TRY(cudaSetDevice(ctx->device), err);
    if (size < CUDA_STAGING_MIN || !staging_ready(ctx)) {
        CUDA_TRY(cudaMemcpyAsync(dst, host_src, size, cudaMemcpyHostToDevice, ctx->stream), err);
        CUDA_TRY(cudaStreamSynchronize(ctx->stream), err);
        return GGTK_OK;
    }
    const char *src = (const char *)host_src;
    int slot = 0;
    for (size_t offset = 0; offset < size; offset += chunk_at(offset, size), slot ^= 1) {
        size_t n = chunk_at(offset, size);
        /* The chunk's previous copy must have left it before it is refilled. */
        CUDA_TRY(cudaEventSynchronize(ctx->staging_free[slot]), err);
        memcpy(ctx->staging[slot], src + offset, n);
        CUDA_TRY(cudaMemcpyAsync((char *)dst + offset, ctx->staging[slot], n,
                                 cudaMemcpyHostToDevice, ctx->stream),
                 err);
        CUDA_TRY(cudaEventRecord(ctx->staging_free[slot], ctx->stream), err);
    }
    CUDA_TRY(cudaStreamSynchronize(ctx->stream), err);
    return GGTK_OK;
}

ggtk_status cuda_download(cuda_ctx *ctx, void *host_dst, const void *src, size_t size,
                          ggtk_error *err)
{
    CUDA_TRY(cudaSetDevice(ctx->device), err);
    if (size < CUDA_STAGING_MIN || !staging_ready(ctx)) {
        CUDA_TRY(cudaMemcpyAsync(host_dst, src, size, cudaMemcpyDeviceToHost, ctx->stream), err);
        CUDA_TRY(cudaStreamSynchronize(ctx->stream), err);
        return GGTK_OK;
    }
    char *dst = (char *)host_dst;
    /* The device copies chunk k into one staging chunk while the CPU empties chunk k - 1. */
    size_t previous = 0, previous_n = 0;
    int slot = 0;
    for (size_t offset = 0; offset < size; offset += chunk_at(offset, size), slot ^= 1) {
        size_t n = chunk_at(offset, size);
        CUDA_TRY(cudaMemcpyAsync(ctx->staging[slot], (const char *)src + offset, n,
                                 cudaMemcpyDeviceToHost, ctx->stream),
                 err);
        CUDA_TRY(cudaEventRecord(ctx->staging_free[slot], ctx->stream), err);
        if (offset > 0) {
            CUDA_TRY(cudaEventSynchronize(ctx->staging_free[slot ^ 1]), err);
            memcpy(dst + previous, ctx->staging[slot ^ 1], previous_n);
        }
        previous = offset;
        previous_n = n;
    }
    CUDA_TRY(cudaEventSynchronize(ctx->staging_free[slot ^ 1]), err);
    memcpy(dst + previous, ctx->staging[slot ^ 1], previous_n);
    return GGTK_OK;
}
