/* op_soft_max.cu - softmax over rows of (x * scale + mask) as the CPU backend computes it
 * (cpu/op_soft_max.c): the mask is src[1] (F32 [n_kv, n_q], broadcast over dimensions 2 and 3)
 * or the causal mask of op_params (n_past, optional sliding window), whose hidden keys are not
 * read and come out 0. The logits, their maximum and the exponentials (exp_math.cuh) are the
 * CPU's bits; the sum of the exponentials is kept in double like the CPU's, in another order, so
 * 1 / sum - and with it every result - is nearly always the CPU's float, else one ulp apart.
 * A row whose every logit is -inf (or NaN) is handled as on the CPU: its logits are multiplied
 * by a norm of 0.
 *
 * One block per row (up to 1024 threads, so a 262144-wide vocabulary row is one block of
 * strided, coalesced passes): logits and maximum, exponentials and sum, normalisation. Every
 * thread revisits only the elements it wrote, so the result may be the source's memory. */
#include "op_common.cuh"
#include "block_reduce.cuh"
#include "exp_math.cuh"

typedef struct soft_max_params {
    float scale;
    bool causal;
    int64_t n_past, window;
} soft_max_params;

static __global__ void soft_max_kernel(cuda_view dst, cuda_view a, cuda_view mask, bool has_mask,
                                       soft_max_params p)
{
    __shared__ float partial_max[CUDA_ROW_THREADS_MAX];
    __shared__ double partial_sum[CUDA_ROW_THREADS_MAX];
    const int64_t n_kv = dst.ne[0];
    uint32_t q[3]; /* query q[0] of head (q[1], q[2]) */
    cuda_row_coords(dst.ne, blockIdx.x, q);
    int64_t first, visible;
    cuda_softmax_keys(p.causal, p.n_past, p.window, n_kv, q[0], &first, &visible);
    const char *x = cuda_row(&a, dst.ne, blockIdx.x) + first * a.nb[0];
    const char *m = has_mask ? mask.data + first * mask.nb[0] + q[0] * mask.nb[1] : NULL;
    float *out = (float *)cuda_row(&dst, dst.ne, blockIdx.x);
    float *y = out + first;

    float largest = -INFINITY;
    for (int64_t i = threadIdx.x; i < visible; i += blockDim.x) {
        const float logit = cuda_softmax_logit(*(const float *)(x + i * a.nb[0]), p.scale,
                                               has_mask,
                                               has_mask ? *(const float *)(m + i * mask.nb[0])
                                                        : 0.0f);
        y[i] = logit;
        largest = logit > largest ? logit : largest;
    }
    largest = cuda_block_max(largest, partial_max);

    double sum = 0.0;
    if (largest != -INFINITY) {
        for (int64_t i = threadIdx.x; i < visible; i += blockDim.x) {
            y[i] = cuda_expf(cuda_sub(y[i], largest));
            sum += y[i];
        }
    }
    const float norm = cuda_softmax_norm(cuda_block_sum(sum, partial_sum));
    for (int64_t i = threadIdx.x; i < visible; i += blockDim.x)
        y[i] = cuda_mul(y[i], norm);
    for (int64_t i = threadIdx.x; i < first; i += blockDim.x)
        out[i] = 0.0f;
    for (int64_t i = first + visible + threadIdx.x; i < n_kv; i += blockDim.x)
        out[i] = 0.0f;
}

/* The CPU's supports() (F32 source, contiguous result), an F32 mask as the constructor makes
 * it, and the kernel's limits. */
bool cuda_soft_max_supports(const inf_tensor *node)
{
    const inf_tensor *a = node->src[0], *mask = node->src[1];
    return a->type == GGTK_TENSOR_F32 && node->type == GGTK_TENSOR_F32 &&
           inf_tensor_is_contiguous(node) && cuda_aligned(node) && cuda_aligned(a) &&
           (!mask || (mask->type == GGTK_TENSOR_F32 && cuda_aligned(mask))) &&
           cuda_grid_fits(cuda_rows(node));
}

ggtk_status cuda_soft_max_compute(cuda_ctx *ctx, inf_tensor *node, ggtk_error *err)
{
    if (cuda_elements(node) == 0)
        return GGTK_OK;
    const inf_tensor *mask = node->src[1];
    soft_max_params p;
    p.scale = inf_op_param_f32(node, 0);
    p.causal = node->op_params[1] != 0;
    p.n_past = node->op_params[2];
    p.window = node->op_params[3];
    /* Enough threads that each handles a few elements; a full block for vocabulary rows. */
    const unsigned threads = cuda_row_threads(node->ne[0] / 4, CUDA_ROW_THREADS_MAX);
    const cuda_view a = cuda_view_of(node->src[0]);
    CUDA_LAUNCH(soft_max_kernel, (unsigned)cuda_rows(node), threads, 0, ctx->stream,
                cuda_view_of(node), a, mask ? cuda_view_of(mask) : a, mask != NULL, p);
    CUDA_TRY_LAUNCH(err);
    return GGTK_OK;
}
