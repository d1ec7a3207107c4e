/* cuda_memory.cu - device memory of a backend: every allocation counted (in use, peak), out of
 * memory reported with what was asked and what the device has left, and the grow-only scratch
 * areas the kernels share. */
#include "cuda_internal.cuh"

#define MIB ((size_t)1 << 20)

/* The smallest allocation: also the buffers' alignment, so an empty buffer still has an address. */
#define CUDA_MIN_ALLOCATION 256

static size_t mib_rounded_up(size_t bytes)
{
    return bytes / MIB + (bytes % MIB != 0);
}

static ggtk_status out_of_memory(size_t size, ggtk_error *err)
{
    size_t free_bytes = 0, total_bytes = 0;
    cudaMemGetInfo(&free_bytes, &total_bytes);
    cudaGetLastError(); /* an allocation failure is not sticky: keep it out of later checks */
    return ggtk_error_set(err, GGTK_ERR_NOMEM, GGTK_NO_OFFSET,
                          "cuda: out of device memory allocating %zu MiB (%zu MiB free of %zu MiB)",
                          mib_rounded_up(size), free_bytes / MIB, total_bytes / MIB);
}

void *cuda_device_alloc(cuda_ctx *ctx, size_t size, ggtk_error *err)
{
    if (cuda_check(cudaSetDevice(ctx->device), "cudaSetDevice", __func__, err) != GGTK_OK)
        return NULL;
    void *memory = NULL;
    cudaError_t status = cudaMalloc(&memory, size < CUDA_MIN_ALLOCATION ? CUDA_MIN_ALLOCATION : size);
    if (status == cudaErrorMemoryAllocation) {
        out_of_memory(size, err);
        return NULL;
    }
    if (cuda_check(status, "cudaMalloc", __func__, err) != GGTK_OK)
        return NULL;
    ctx->memory_in_use += size;
    if (ctx->memory_in_use > ctx->memory_peak)
        ctx->memory_peak = ctx->memory_in_use;
    return memory;
}

void cuda_device_free(cuda_ctx *ctx, void *memory, size_t size)
{
    if (!memory)
        return;
    cudaSetDevice(ctx->device);
    cudaFree(memory);
    ctx->memory_in_use -= size;
}

void *cuda_scratch(cuda_ctx *ctx, cuda_scratch_slot slot, size_t size, ggtk_error *err)
{
    if (size <= ctx->scratch_size[slot] && ctx->scratch[slot])
        return ctx->scratch[slot];
    /* Kernels already enqueued may still use the old area. */
    if (cuda_check(cudaStreamSynchronize(ctx->stream), "cudaStreamSynchronize", __func__, err) !=
        GGTK_OK)
        return NULL;
    cuda_device_free(ctx, ctx->scratch[slot], ctx->scratch_size[slot]);
    ctx->scratch[slot] = NULL;
    ctx->scratch_size[slot] = 0;
    /* Whole MiB, so that sizes growing a little each graph do not reallocate each time. */
    size_t rounded = mib_rounded_up(size) * MIB;
    ctx->scratch[slot] = cuda_device_alloc(ctx, rounded, err);
    if (ctx->scratch[slot])
        ctx->scratch_size[slot] = rounded;
    return ctx->scratch[slot];
}
