/* mmvq.cu - matrix products one warp per output row m and group of up to CUDA_MMV_MAX_COLS
 * activation columns of one dst batch (token generation, short batches; for quantized weights
 * also prompt batches, group by group, so that they sum as the CPU does). The lanes of a warp
 * take the row's blocks of 32 columns (quantized) or its elements (float) in turn, so a warp
 * reads a contiguous stretch of the weight row at each step; each weight block is decoded once
 * and used for all n columns; the lanes' partial sums meet in a shuffle reduction.
 *
 * Quantized weights meet activations quantized by quantize_act.cu exactly as the CPU quantizes
 * them. Per sub-block (32 or 16 columns) the integer dot product is __dp4a on the codes - the
 * CPU's integer sum exactly - and the float work is the CPU's: acc = fma(isum, d_w * d_a, acc),
 * then for affine types acc = fma(m_w, s_a, acc) with s_a Q8_1's stored s or d_a * sum(codes).
 * Only the order in which blocks are summed differs from the CPU (lane-strided, then a tree). */
#include "mul_mat.cuh"

enum { WARPS = 4, THREADS = 32 * WARPS };

/* Where dst batch (i2, i3) finds its weight matrix and output. */
typedef struct mmv_shape {
    int64_t M, N, K;
    int64_t ne12, r2, r3;
    size_t nb01, nb02, nb03; /* weights */
    size_t nb1, nb2, nb3;    /* dst */
} mmv_shape;

static mmv_shape shape_of(const inf_tensor *node)
{
    const inf_tensor *w = node->src[0], *x = node->src[1];
    mmv_shape s;
    s.M = w->ne[1];
    s.N = x->ne[1];
    s.K = w->ne[0];
    s.ne12 = x->ne[2];
    s.r2 = x->ne[2] / w->ne[2];
    s.r3 = x->ne[3] / w->ne[3];
    s.nb01 = w->nb[1];
    s.nb02 = w->nb[2];
    s.nb03 = w->nb[3];
    s.nb1 = node->nb[1];
    s.nb2 = node->nb[2];
    s.nb3 = node->nb[3];
    return s;
}

static __device__ float warp_sum(float v)
{
    for (int o = 16; o > 0; o /= 2)
        v += __shfl_xor_sync(0xFFFFFFFFu, v, o);
    return v;
}

/* Lane 0 writes the warp's sums of row m, columns n0 + n < N, of dst batch `batch`. */
static __device__ void store_row(const mmv_shape *s, char *dst, int64_t batch, int64_t m, int64_t n0,
                                 float acc[CUDA_MMV_MAX_COLS])
{
    const int64_t i2 = batch % s->ne12, i3 = batch / s->ne12;
    char *out = dst + m * sizeof(float) + i2 * s->nb2 + i3 * s->nb3 + n0 * s->nb1;
    for (int n = 0; n < CUDA_MMV_MAX_COLS; n++) {
        if (n0 + n >= s->N)
            break;
        const float v = warp_sum(acc[n]);
        if (threadIdx.x % 32 == 0)
            *(float *)(out + n * s->nb1) = v;
    }
}

static __device__ const char *weight_row(const mmv_shape *s, const char *w, int64_t batch, int64_t m)
{
    const int64_t i2 = batch % s->ne12, i3 = batch / s->ne12;
    return w + m * s->nb01 + i2 / s->r2 * s->nb02 + i3 / s->r3 * s->nb03;
}

/* Grid: x rows WARPS at a time, y dst batches (i2 fastest), z groups of CUDA_MMV_MAX_COLS
 * columns. */
static __global__ void mmvq_kernel(mmv_shape s, ggtk_tensor_type type, const char *w, cuda_act act, char *dst)
{
    const int64_t m = (int64_t)blockIdx.x * WARPS + threadIdx.x / 32, batch = blockIdx.y;
    const int64_t n0 = (int64_t)blockIdx.z * CUDA_MMV_MAX_COLS;
    if (m >= s.M)
        return;
    const int lane = threadIdx.x % 32;
    const char *row = weight_row(&s, w, batch, m);
    const int subs = cuda_q32_subs(type), words = 8 / subs;
    const bool affine = cuda_q32_affine(type);
    const int64_t blocks = s.K / 32;
    float acc[CUDA_MMV_MAX_COLS] = {0};
    for (int64_t b = lane; b < blocks; b += 32) {
        cuda_q32 wq;
        cuda_q32_block(type, row, b, &wq);
        for (int n = 0; n < CUDA_MMV_MAX_COLS; n++) {
            if (n0 + n >= s.N)
                break;
            const int64_t r = batch * s.N + n0 + n, blk = r * blocks + b;
            const int32_t *aq = (const int32_t *)(act.qs + r * s.K + b * 32);
            const float da = act.d[blk];
            for (int sub = 0; sub < subs; sub++) {
                int isum = 0, asum = 0;
                for (int i = sub * words; i < (sub + 1) * words; i++) {
                    isum = __dp4a(wq.q[i], aq[i], isum);
                    asum = __dp4a(0x01010101, aq[i], asum);
                }
                acc[n] = fmaf((float)isum, cuda_mul(wq.d[sub], da), acc[n]);
                if (affine) {
                    const float sa = act.kind == CUDA_ACT_Q8_1 ? act.s[blk] : cuda_mul(da, (float)asum);
                    acc[n] = fmaf(wq.m[sub], sa, acc[n]);
                }
            }
        }
    }
    store_row(&s, dst, batch, m, n0, acc);
}

/* Weights without an integer path (float types, IQ4_NL, TQ*, FP4 ...), decoded element by
 * element; element k of every column n is read from src1 in place (any strides). */
static __global__ void mmv_float_kernel(mmv_shape s, ggtk_tensor_type type, const char *w, cuda_rows x, char *dst)
{
    const int64_t m = (int64_t)blockIdx.x * WARPS + threadIdx.x / 32, batch = blockIdx.y;
    if (m >= s.M)
        return;
    const char *row = weight_row(&s, w, batch, m);
    const char *xb = x.data + batch % s.ne12 * x.nb[2] + batch / s.ne12 * x.nb[3];
    float acc[CUDA_MMV_MAX_COLS] = {0};
    for (int64_t k = threadIdx.x % 32; k < s.K; k += 32) {
        const float wk = cuda_dq_element(type, row, k);
        for (int n = 0; n < CUDA_MMV_MAX_COLS; n++) {
            if (n >= s.N)
                break;
            acc[n] = fmaf(wk, *(const float *)(xb + n * x.nb[1] + k * x.nb[0]), acc[n]);
        }
    }
    store_row(&s, dst, batch, m, 0, acc);
}

static dim3 grid_of(const mmv_shape *s, const inf_tensor *node)
{
    return dim3((unsigned)((s->M + WARPS - 1) / WARPS), (unsigned)(node->ne[2] * node->ne[3]),
                (unsigned)((s->N + CUDA_MMV_MAX_COLS - 1) / CUDA_MMV_MAX_COLS));
}

ggtk_status cuda_mmvq(cuda_ctx *ctx, inf_tensor *node, const cuda_act *act, ggtk_error *err)
{
    const mmv_shape s = shape_of(node);
    CUDA_LAUNCH(mmvq_kernel, grid_of(&s, node), dim3(THREADS), 0, ctx->stream, s, node->src[0]->type,
                (const char *)node->src[0]->data, *act, (char *)node->data);
    CUDA_TRY_LAUNCH(err);
    return GGTK_OK;
}

ggtk_status cuda_mmv_float(cuda_ctx *ctx, inf_tensor *node, ggtk_error *err)
{
    const mmv_shape s = shape_of(node);
    CUDA_LAUNCH(mmv_float_kernel, grid_of(&s, node), dim3(THREADS), 0, ctx->stream, s, node->src[0]->type,
                (const char *)node->src[0]->data, cuda_rows_of(node->src[1]), (char *)node->data);
    CUDA_TRY_LAUNCH(err);
    return GGTK_OK;
}
