/* op_elementwise.cu - add and mul with src[1] broadcast, swiglu, geglu, scale, silu, gelu and
 * softcap on F32 tensors, as the CPU backend computes them (cpu/op_elementwise.c): the same
 * operations in the same order give the same bits, except softcap, whose tanhf is the device's
 * (within 2 ulp of the host's). GELU reads the CPU's own fp16 table (cpu_gelu_table()), copied
 * to each device once, so that it equals the CPU - and ggml - bit for bit.
 *
 * One kernel walks rows: a block takes a slice of one row of the result, whose sources it finds
 * with the CPU's broadcasting rule; consecutive threads take consecutive elements. Each element
 * is read before the same element is written, so the result may share memory with a source. */
#include <mutex>

#include "op_common.cuh"
#include "exp_math.cuh"
#include "float_convert.cuh"

extern "C" {
#include "engine/backend/cpu/cpu_gelu.h"
}

enum elementwise_kind {
    ELEMENTWISE_ADD,
    ELEMENTWISE_MUL,
    ELEMENTWISE_SWIGLU,
    ELEMENTWISE_GEGLU,
    ELEMENTWISE_SCALE,
    ELEMENTWISE_SILU,
    ELEMENTWISE_GELU,
    ELEMENTWISE_SOFTCAP,
};

/* cpu_gelu(): 0 at or below -10, x at or above 10, else the table entry of x rounded to fp16. */
static inline __device__ float gelu(const float *table, float x)
{
    if (x <= -10.0f)
        return 0.0f;
    if (x >= 10.0f)
        return x;
    return table[cuda_fp32_to_fp16(x)];
}

/* One element of the result from x (src[0]) and y (src[1], unary kinds ignore it). `param` is
 * the scale, or 1 / cap for softcap, and `cap` the cap. */
static inline __device__ float elementwise_one(int kind, float x, float y, float param, float cap,
                                               const float *gelu_table)
{
    switch (kind) {
    case ELEMENTWISE_ADD: return cuda_add(x, y);
    case ELEMENTWISE_MUL: return cuda_mul(x, y);
    case ELEMENTWISE_SWIGLU: return cuda_mul(cuda_silu(x), y);
    case ELEMENTWISE_GEGLU: return x <= -10.0f ? 0.0f : cuda_mul(gelu(gelu_table, x), y);
    case ELEMENTWISE_SCALE: return cuda_mul(x, param);
    case ELEMENTWISE_SILU: return cuda_silu(x);
    case ELEMENTWISE_GELU: return gelu(gelu_table, x);
    default: return cuda_mul(tanhf(cuda_mul(x, param)), cap); /* softcap */
    }
}

/* Block b takes slice b % blocks_per_row of row b / blocks_per_row of dst; a thread steps by the
 * width of all the row's slices. The result is F32 with contiguous rows. */
static __global__ void elementwise_kernel(cuda_view dst, cuda_view a, cuda_view b, int kind,
                                          float param, float cap, const float *gelu_table,
                                          unsigned blocks_per_row)
{
    const int64_t row = blockIdx.x / blocks_per_row, ne0 = dst.ne[0];
    float *d = (float *)cuda_row(&dst, dst.ne, row);
    const char *ra = cuda_row(&a, dst.ne, row);
    const bool binary = kind <= ELEMENTWISE_GEGLU;
    const char *rb = binary ? cuda_row(&b, dst.ne, row) : NULL;
    const int64_t step = (int64_t)blocks_per_row * blockDim.x;
    for (int64_t i = (int64_t)(blockIdx.x % blocks_per_row) * blockDim.x + threadIdx.x; i < ne0;
         i += step) {
        const float x = *(const float *)(ra + i * a.nb[0]);
        float y = 0.0f;
        if (binary) {
            const int64_t j = b.ne[0] == ne0 ? i : i % b.ne[0];
            y = *(const float *)(rb + j * b.nb[0]);
        }
        d[i] = elementwise_one(kind, x, y, param, cap, gelu_table);
    }
}

/* The CPU's GELU table on the current device, uploaded on first use and kept for the process
 * (256 KiB per device; the driver frees it at exit). Several backends may share a device, so
 * the first upload is serialised and finished before any kernel can see the table. */
#define GELU_MAX_DEVICES 64

static ggtk_status gelu_table_on(const cuda_ctx *ctx, const float **table, ggtk_error *err)
{
    static std::mutex lock;
    static float *tables[GELU_MAX_DEVICES];
    if (ctx->device < 0 || ctx->device >= GELU_MAX_DEVICES)
        return ggtk_error_set(err, GGTK_ERR_UNSUPPORTED, GGTK_NO_OFFSET,
                              "cuda: GELU on device %d: only devices 0..%d get a GELU table",
                              ctx->device, GELU_MAX_DEVICES - 1);
    std::lock_guard<std::mutex> hold(lock);
    if (!tables[ctx->device]) {
        const size_t bytes = (size_t)(1 << 16) * sizeof(float);
        float *copy = NULL;
        CUDA_TRY(cudaMalloc((void **)&copy, bytes), err);
        ggtk_status status = cuda_check(cudaMemcpyAsync(copy, cpu_gelu_table(), bytes,
                                                        cudaMemcpyHostToDevice, ctx->stream),
                                        "cudaMemcpyAsync", __func__, err);
        if (status == GGTK_OK)
            status = cuda_check(cudaStreamSynchronize(ctx->stream), "cudaStreamSynchronize",
                                __func__, err);
        if (status != GGTK_OK) {
            cudaFree(copy);
            return status;
        }
        tables[ctx->device] = copy;
    }
    *table = tables[ctx->device];
    return GGTK_OK;
}

static ggtk_status elementwise(cuda_ctx *ctx, inf_tensor *node, int kind, ggtk_error *err)
{
    const int64_t rows = cuda_rows(node);
    if (cuda_elements(node) == 0)
        return GGTK_OK;
    const float *table = NULL;
    if (kind == ELEMENTWISE_GELU || kind == ELEMENTWISE_GEGLU) {
        const ggtk_status status = gelu_table_on(ctx, &table, err);
        if (status != GGTK_OK)
            return status;
    }
    float param = inf_op_param_f32(node, 0), cap = param;
    if (kind == ELEMENTWISE_SOFTCAP)
        param = 1.0f / cap; /* rounded once on the host, as the CPU does */
    const bool binary = kind <= ELEMENTWISE_GEGLU;
    const cuda_view dst = cuda_view_of(node), a = cuda_view_of(node->src[0]);
    const cuda_view b = binary ? cuda_view_of(node->src[1]) : a;
    const unsigned threads = cuda_row_threads(node->ne[0], 256);
    const unsigned per_row = cuda_blocks_per_row(node->ne[0], threads, rows);
    CUDA_LAUNCH(elementwise_kernel, (unsigned)rows * per_row, threads, 0, ctx->stream, dst, a, b,
                kind, param, cap, table, per_row);
    CUDA_TRY_LAUNCH(err);
    return GGTK_OK;
}

/* The CPU's supports() (F32 everywhere, contiguous result) and what a kernel needs on top:
 * aligned loads and a row count that fits the grid. */
bool cuda_unary_supports(const inf_tensor *node)
{
    const inf_tensor *a = node->src[0];
    return node->type == GGTK_TENSOR_F32 && a->type == GGTK_TENSOR_F32 &&
           inf_tensor_is_contiguous(node) && cuda_aligned(node) && cuda_aligned(a) &&
           cuda_grid_fits(cuda_rows(node));
}

bool cuda_binary_supports(const inf_tensor *node)
{
    const inf_tensor *b = node->src[1];
    return cuda_unary_supports(node) && b->type == GGTK_TENSOR_F32 && cuda_aligned(b);
}

ggtk_status cuda_add_compute(cuda_ctx *ctx, inf_tensor *node, ggtk_error *err)
{
    return elementwise(ctx, node, ELEMENTWISE_ADD, err);
}

ggtk_status cuda_mul_compute(cuda_ctx *ctx, inf_tensor *node, ggtk_error *err)
{
    return elementwise(ctx, node, ELEMENTWISE_MUL, err);
}

ggtk_status cuda_scale_compute(cuda_ctx *ctx, inf_tensor *node, ggtk_error *err)
{
    return elementwise(ctx, node, ELEMENTWISE_SCALE, err);
}

ggtk_status cuda_silu_compute(cuda_ctx *ctx, inf_tensor *node, ggtk_error *err)
{
    return elementwise(ctx, node, ELEMENTWISE_SILU, err);
}

ggtk_status cuda_swiglu_compute(cuda_ctx *ctx, inf_tensor *node, ggtk_error *err)
{
    return elementwise(ctx, node, ELEMENTWISE_SWIGLU, err);
}

ggtk_status cuda_gelu_compute(cuda_ctx *ctx, inf_tensor *node, ggtk_error *err)
{
    return elementwise(ctx, node, ELEMENTWISE_GELU, err);
}

ggtk_status cuda_geglu_compute(cuda_ctx *ctx, inf_tensor *node, ggtk_error *err)
{
    return elementwise(ctx, node, ELEMENTWISE_GEGLU, err);
}

ggtk_status cuda_softcap_compute(cuda_ctx *ctx, inf_tensor *node, ggtk_error *err)
{
    return elementwise(ctx, node, ELEMENTWISE_SOFTCAP, err);
}
