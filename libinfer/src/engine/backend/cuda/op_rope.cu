/* op_rope.cu - rotary position embedding as the CPU backend computes it (cpu/op_rope.c): NORMAL
 * (adjacent pairs) and NEOX (split halves) pairings, rotation of the first n_dims elements of a
 * head and copy of the rest, frequency factors (src[2]), linear scaling and YaRN. The angles are
 * rope_math.cuh's, the CPU's float operations in the CPU's order; only cosf/sinf are the device's
 * (within 2 ulp of the host's), so results agree with the CPU to a few ulp of the cos/sin.
 *
 * One block per token: its threads first fill the token's cos/sin table in shared memory (one
 * pair each), then rotate the pairs of every head of the token. The source may have any strides;
 * the result is contiguous and may be the source's memory (each pair is read before written). */
#include "op_common.cuh"
#include "rope_math.cuh"

#include <ggtk/inf_ops.h>

/* Shared memory for the table: n_dims floats, within the 48 KiB every device gives a block. */
#define ROPE_MAX_DIMS (48 * 1024 / (int)sizeof(float))

static __global__ void rope_kernel(cuda_view dst, cuda_view a, const char *positions,
                                   int64_t position_stride, const float *factors,
                                   cuda_rope_math m, int neox)
{
    CUDA_DYNAMIC_SHARED(float, table);
    const int64_t token = blockIdx.x, n_head = dst.ne[1], ne0 = dst.ne[0];
    const int half = m.n_dims / 2;
    const int32_t position = *(const int32_t *)(positions + token * position_stride);
    for (int pair = threadIdx.x; pair < half; pair += blockDim.x) {
        float mscale;
        const float angle = cuda_rope_angle(&m, (float)position, pair,
                                            factors ? factors[pair] : 1.0f, &mscale);
        table[2 * pair] = cuda_mul(cosf(angle), mscale);
        table[2 * pair + 1] = cuda_mul(sinf(angle), mscale);
    }
    __syncthreads();
    /* items of a token in 32 bits (supports() keeps a token below 2^31 elements) */
    for (uint32_t item = threadIdx.x; item < (uint32_t)(n_head * half); item += blockDim.x) {
        const uint32_t head = item / (uint32_t)half, pair = item % (uint32_t)half;
        const uint32_t i0 = neox ? pair : 2 * pair, i1 = neox ? pair + half : 2 * pair + 1;
        const char *x = a.data + head * a.nb[1] + token * a.nb[2];
        float *y = (float *)(dst.data + head * dst.nb[1] + token * dst.nb[2]);
        cuda_rope_rotate(*(const float *)(x + i0 * a.nb[0]), *(const float *)(x + i1 * a.nb[0]),
                         table[2 * pair], table[2 * pair + 1], &y[i0], &y[i1]);
    }
    const uint32_t rest = (uint32_t)(ne0 - m.n_dims);
    for (uint32_t item = threadIdx.x; item < (uint32_t)n_head * rest; item += blockDim.x) {
        const uint32_t head = item / rest, i = (uint32_t)m.n_dims + item % rest;
        const char *x = a.data + head * a.nb[1] + token * a.nb[2];
        float *y = (float *)(dst.data + head * dst.nb[1] + token * dst.nb[2]);
        y[i] = *(const float *)(x + i * a.nb[0]);
    }
}

/* The CPU's supports() (F32 source, contiguous result) and the kernel's limits. */
bool cuda_rope_supports(const inf_tensor *node)
{
    const inf_tensor *a = node->src[0], *pos = node->src[1], *factors = node->src[2];
    const int n_dims = node->op_params[0], mode = node->op_params[1];
    return a->type == GGTK_TENSOR_F32 && node->type == GGTK_TENSOR_F32 &&
           inf_tensor_is_contiguous(node) && cuda_aligned(node) && cuda_aligned(a) &&
           pos->type == GGTK_TENSOR_I32 && cuda_aligned(pos) &&
           (!factors || (factors->type == GGTK_TENSOR_F32 && cuda_aligned(factors))) &&
           (mode == INF_ROPE_NORMAL || mode == INF_ROPE_NEOX) && n_dims > 0 &&
           n_dims <= ROPE_MAX_DIMS && node->ne[3] == 1 && cuda_grid_fits(node->ne[2]) &&
           node->ne[0] * node->ne[1] <= INT32_MAX;
}

ggtk_status cuda_rope_compute(cuda_ctx *ctx, inf_tensor *node, ggtk_error *err)
{
    if (cuda_elements(node) == 0)
        return GGTK_OK;
    const inf_tensor *pos = node->src[1], *factors = node->src[2];
    const cuda_rope_math m = cuda_rope_math_init(node->op_params);
    const unsigned threads = cuda_row_threads(node->ne[0] * node->ne[1] / 2, 256);
    CUDA_LAUNCH(rope_kernel, (unsigned)node->ne[2], threads, (size_t)m.n_dims * sizeof(float),
                ctx->stream, cuda_view_of(node), cuda_view_of(node->src[0]),
                (const char *)pos->data, (int64_t)pos->nb[0],
                factors ? (const float *)factors->data : (const float *)NULL, m,
                node->op_params[1] == INF_ROPE_NEOX ? 1 : 0);
    CUDA_TRY_LAUNCH(err);
    return GGTK_OK;
}
