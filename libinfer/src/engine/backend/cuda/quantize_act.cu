/* quantize_act.cu - F32 activations quantized on the device for the integer dot products of
 * mmvq.cu, byte for byte as the CPU backend quantizes them (Q8_0, Q8_1: one warp per block of
 * 32, lane e holds element e; Q8_K: one warp per super-block of 256, lane l holds elements
 * l + 32 t). Same codes and scales means the integer sums of a product are the CPU's; only the
 * order in which the float partial sums are added differs.
 *
 * The CPU's rules, repeated here: Q8_0/Q8_1 d = amax / 127, codes round-half-away(x / d) (x times
 * the float 1/d), d stored as fp16, Q8_1's s = fp16(d * sum(codes)); Q8_K's scale comes from the
 * element of largest magnitude with its sign (the first of equals), codes nearest_int(-127 x /
 * max) capped at 127, d = 1 / (-127 / max) in float. A block (super-block) holding NaN or +-Inf
 * gets codes 0 and a NaN scale, so its products are NaN as on the CPU. */
#include "mul_mat.cuh"

#include <float.h>

enum { WARPS = 4, THREADS = 32 * WARPS };

static __device__ float warp_max(float v)
{
    for (int o = 16; o > 0; o /= 2)
        v = fmaxf(v, __shfl_xor_sync(0xFFFFFFFFu, v, o));
    return v;
}

static __device__ int warp_sum(int v)
{
    for (int o = 16; o > 0; o /= 2)
        v += __shfl_xor_sync(0xFFFFFFFFu, v, o);
    return v;
}

static __device__ int warp_min(int v)
{
    for (int o = 16; o > 0; o /= 2)
        v = min(v, __shfl_xor_sync(0xFFFFFFFFu, v, o));
    return v;
}

/* Element k of flat row r of the activations. */
static __device__ float act_element(const cuda_rows *src, int64_t r, int64_t k)
{
    const int64_t i1 = r % src->ne[1], i2 = r / src->ne[1] % src->ne[2], i3 = r / (src->ne[1] * src->ne[2]);
    return *(const float *)(src->data + k * src->nb[0] + i1 * src->nb[1] + i2 * src->nb[2] + i3 * src->nb[3]);
}

/* roundf(v) to int, then its low byte as int8 (the CPU's quant_q8_code). */
static __device__ int8_t q8_code(float v)
{
    const float r = roundf(v);
    const int32_t i = (r > -2147483904.0f && r < 2147483648.0f) ? (int32_t)r : INT32_MIN;
    return (int8_t)(uint8_t)((uint32_t)i & 0xFF);
}

/* One warp per block of 32 (Q8_0 and, with_sum, Q8_1). */
static __global__ void quantize_q8_0_kernel(cuda_rows src, bool with_sum, int8_t *qs, float *ds, float *ss)
{
    const int lane = threadIdx.x % 32;
    const int64_t blocks_per_row = src.ne[0] / 32;
    const int64_t g = (int64_t)blockIdx.x * WARPS + threadIdx.x / 32;
    if (g >= blocks_per_row * src.ne[1] * src.ne[2] * src.ne[3])
        return;
    const int64_t r = g / blocks_per_row, k = g % blocks_per_row * 32 + lane;
    const float x = act_element(&src, r, k);
    const int finite = warp_min(fabsf(x) <= FLT_MAX);
    int8_t code = 0;
    float d_used = cuda_float_from_bits(0x7FC00000u), s_used = d_used;
    if (finite) {
        const float d = warp_max(fabsf(x)) / 127;
        const float id = d != 0.0f ? 1.0f / d : 0.0f;
        code = q8_code(cuda_mul(x, id));
        d_used = cuda_fp16_to_fp32(cuda_fp32_to_fp16(d));
        if (with_sum)
            s_used = cuda_fp16_to_fp32(cuda_fp32_to_fp16(cuda_mul((float)warp_sum(code), d)));
    }
    qs[r * src.ne[0] + k] = code;
    if (lane == 0) {
        ds[g] = d_used;
        if (with_sum)
            ss[g] = s_used;
    }
}

/* One warp per super-block of 256 (Q8_K). */
static __global__ void quantize_q8_k_kernel(cuda_rows src, int8_t *qs, float *ds)
{
    const int lane = threadIdx.x % 32;
    const int64_t supers_per_row = src.ne[0] / 256;
    const int64_t g = (int64_t)blockIdx.x * WARPS + threadIdx.x / 32;
    if (g >= supers_per_row * src.ne[1] * src.ne[2] * src.ne[3])
        return;
    const int64_t r = g / supers_per_row, k0 = g % supers_per_row * 256;
    float x[8];
    int finite = 1;
    /* this lane's element of largest magnitude, the first of equals (indices rise with t) */
    float amax = 0.0f, max = 0.0f;
    int at = 256;
    for (int t = 0; t < 8; t++) {
        x[t] = act_element(&src, r, k0 + lane + 32 * t);
        finite &= fabsf(x[t]) <= FLT_MAX;
        if (fabsf(x[t]) > amax) {
            amax = fabsf(x[t]);
            max = x[t];
            at = lane + 32 * t;
        }
    }
    finite = warp_min(finite);
    /* the warp's: larger magnitude wins, equal ones go to the lower index */
    for (int o = 16; o > 0; o /= 2) {
        const float other_amax = __shfl_xor_sync(0xFFFFFFFFu, amax, o);
        const float other_max = __shfl_xor_sync(0xFFFFFFFFu, max, o);
        const int other_at = __shfl_xor_sync(0xFFFFFFFFu, at, o);
        if (other_amax > amax || (other_amax == amax && other_at < at)) {
            amax = other_amax;
            max = other_max;
            at = other_at;
        }
    }
    float d = 0.0f;
    if (!finite) {
        d = cuda_float_from_bits(0x7FC00000u);
        for (int t = 0; t < 8; t++)
            qs[r * src.ne[0] + k0 + lane + 32 * t] = 0;
    } else if (amax == 0.0f) {
        for (int t = 0; t < 8; t++)
            qs[r * src.ne[0] + k0 + lane + 32 * t] = 0;
    } else {
        const float iscale = -127.0f / max;
        for (int t = 0; t < 8; t++) {
            /* round to nearest even through the 1.5 * 2^23 shift, as the CPU's nearest_int */
            const uint32_t bits = cuda_float_bits(cuda_add(cuda_mul(iscale, x[t]), 12582912.0f));
            const int v = (int)(bits & 0x007FFFFF) - 0x00400000;
            qs[r * src.ne[0] + k0 + lane + 32 * t] = (int8_t)(v < 127 ? v : 127);
        }
        d = 1.0f / iscale;
    }
    if (lane < 8)
        ds[g * 8 + lane] = d;
}

ggtk_status cuda_quantize_act(cuda_ctx *ctx, const cuda_rows *src, cuda_act_kind kind,
                              cuda_act *act, ggtk_error *err)
{
    const int64_t K = src->ne[0], rows = src->ne[1] * src->ne[2] * src->ne[3];
    const int64_t blocks = rows * (K / 32);
    char *scratch = (char *)cuda_scratch(ctx, CUDA_SCRATCH_ACTIVATIONS,
                                         (size_t)(rows * K) + 2 * (size_t)blocks * sizeof(float), err);
    if (!scratch)
        return err ? err->status : GGTK_ERR_NOMEM;
    int8_t *qs = (int8_t *)scratch;
    float *d = (float *)(scratch + rows * K), *s = d + blocks;
    act->kind = kind;
    act->qs = qs;
    act->d = d;
    act->s = s;
    if (blocks == 0)
        return GGTK_OK;
    if (kind == CUDA_ACT_Q8_K) {
        const int64_t supers = rows * (K / 256);
        CUDA_LAUNCH(quantize_q8_k_kernel, dim3((unsigned)((supers + WARPS - 1) / WARPS)), dim3(THREADS), 0,
                    ctx->stream, *src, qs, d);
    } else {
        CUDA_LAUNCH(quantize_q8_0_kernel, dim3((unsigned)((blocks + WARPS - 1) / WARPS)), dim3(THREADS), 0,
                    ctx->stream, *src, kind == CUDA_ACT_Q8_1, qs, d, s);
    }
    CUDA_TRY_LAUNCH(err);
    return GGTK_OK;
}
