/* op_flash_attn.cu - FLASH_ATTN on the device: what cpu/op_flash_attn.c computes (the host
 * reference the CUDA tests compare against), softmax(scale * softcapped Q K^T, causal/windowed)
 * V per head with grouped-query heads, in one kernel that never stores the score matrix.
 *
 * One block of FA_WARPS warps takes FA_QUERIES query rows of one head (FA_ROWS_PER_WARP per
 * warp, their vectors in shared memory). The block walks the keys its rows may see in tiles of
 * 32, loaded by all its threads into shared memory as floats (F16 caches converted on the way;
 * K rows padded by one float so that lane j reading key j's row hits its own bank). Per tile,
 * lane j of a warp scores key j for each of the warp's rows, warp shuffles give the tile's
 * maximum and sum, and the online softmax rescales the row's output - D/32 floats per lane, in
 * registers - by e^(old max - new max) before adding p_j * v_j with p_j shuffled from lane j.
 * Head sizes: any multiple of 32 up to 256 (the kernel is instantiated per D/32). Plain float
 * maths only (no tensor-core MMA), so the emulator runs the same code. */
#include <string.h>

#include "cuda_ops.cuh"

/* Loops over a warp's rows and a lane's head elements are unrolled so that the accumulators stay
 * in registers (the emulator's compiler has no such pragma and needs none). */
#ifdef INF_CUDA_EMULATION
#define FA_UNROLL
#else
#define FA_UNROLL _Pragma("unroll")
#endif

enum {
    FA_WARPS = 4,
    FA_ROWS_PER_WARP = 2,
    FA_QUERIES = FA_WARPS * FA_ROWS_PER_WARP,
    FA_KEYS = 32, /* one key per lane */
    FA_MAX_CHUNKS = 8, /* D / 32 up to 256 */
};

/* Everything the kernel reads about one node: byte strides of q, k, v (dimension 1..3; k's and
 * q's elements along a head are adjacent, v's adjacent elements are v_nb0 apart) and dst. */
struct fa_args {
    const char *q, *k, *v;
    float *dst;
    long long q_nb1, q_nb2, q_nb3;
    long long k_nb1, k_nb2, k_nb3;
    long long v_nb0, v_nb1, v_nb2, v_nb3;
    int head, n_q, n_kv, n_head, group;
    bool k_f16, v_f16;
    float scale, softcap;
    bool causal;
    int n_past, window;
};

static __device__ float fa_load(const char *p, bool f16)
{
    return f16 ? __half2float(*(const __half *)p) : *(const float *)p;
}

/* Keys [*first, *end) query row i sees (as cpu/op_flash_attn.c's visible_keys()). */
static __device__ void fa_visible(const fa_args &a, int i, int *first, int *end)
{
    const int last = a.causal ? a.n_past + i : a.n_kv - 1;
    *first = a.window > 0 && last - a.window + 1 > 0 ? last - a.window + 1 : 0;
    *end = last + 1;
}

static __device__ float fa_warp_max(float x)
{
    for (int m = 16; m > 0; m /= 2) {
        const float o = __shfl_xor_sync(0xffffffffu, x, m);
        x = o > x ? o : x;
    }
    return x;
}

/* Lanes add in a butterfly: every lane ends with the same bits. */
static __device__ float fa_warp_sum(float x)
{
    for (int m = 16; m > 0; m /= 2)
        x += __shfl_xor_sync(0xffffffffu, x, m);
    return x;
}

/* Keys [j0, j0 + 32) of key/value head hk of sequence b into the shared tiles (zeros past hi). */
static __device__ void fa_load_tiles(const fa_args &a, int D, int hk, int b, int j0, int hi,
                                     float *k_tile, float *v_tile)
{
    const int stride = D + 1;
    const char *k0 = a.k + hk * a.k_nb2 + b * a.k_nb3;
    const char *v0 = a.v + hk * a.v_nb2 + b * a.v_nb3;
    const size_t k_elem = a.k_f16 ? 2 : 4;
    const bool v_transposed = a.v_nb1 < a.v_nb0;
    for (int e = threadIdx.x; e < FA_KEYS * D; e += blockDim.x) {
        /* K: consecutive threads read consecutive elements of a key row */
        const int kj = e / D, kd = e % D;
        k_tile[kj * stride + kd] =
            j0 + kj < hi ? fa_load(k0 + (long long)(j0 + kj) * a.k_nb1 + kd * k_elem, a.k_f16)
                         : 0.0f;
        /* V: along the keys when the cache is transposed, else along the row */
        const int vj = v_transposed ? e % FA_KEYS : e / D, vd = v_transposed ? e / FA_KEYS : e % D;
        v_tile[vj * stride + vd] =
            j0 + vj < hi ? fa_load(v0 + (long long)(j0 + vj) * a.v_nb1 + vd * a.v_nb0, a.v_f16)
                         : 0.0f;
    }
}

/* One query row (query index i, its vector q in shared memory) folds the key tile at j0 into
 * its running max, sum and output (lane's elements c * 32 + lane): lane j scores key j0 + j. */
template <int CHUNKS>
static __device__ void fa_fold_tile(const fa_args &a, const float *q, const float *k_tile,
                                    const float *v_tile, int i, int j0, int lane,
                                    float (&out)[CHUNKS], float *max, float *sum)
{
    const int D = CHUNKS * 32, stride = D + 1;
    int first, end;
    fa_visible(a, i, &first, &end);
    const int j = j0 + lane;
    const bool seen = j >= first && j < end;
    float s = 0.0f;
    const float *k = k_tile + lane * stride;
    for (int d = 0; d < D; d++)
        s += q[d] * k[d];
    if (a.softcap > 0.0f)
        s = tanhf(s * (1.0f / a.softcap)) * a.softcap;
    s = seen ? s * a.scale : -INFINITY;
    const float tile_max = fa_warp_max(s);
    if (tile_max == -INFINITY) /* no key of the tile seen */
        return;
    const float new_max = tile_max > *max ? tile_max : *max;
    const float shrink = *max == -INFINITY ? 0.0f : expf(*max - new_max);
    const float p = seen ? expf(s - new_max) : 0.0f;
    *sum = *sum * shrink + fa_warp_sum(p);
    *max = new_max;
    FA_UNROLL
    for (int c = 0; c < CHUNKS; c++)
        out[c] *= shrink;
    for (int jj = 0; jj < FA_KEYS; jj++) {
        const float pj = __shfl_sync(0xffffffffu, p, jj);
        const float *v = v_tile + jj * stride;
        FA_UNROLL
        for (int c = 0; c < CHUNKS; c++)
            out[c] += pj * v[c * 32 + lane];
    }
}

template <int CHUNKS>
static __global__ void flash_attn_kernel(fa_args a)
{
    CUDA_DYNAMIC_SHARED(float, shared);
    const int D = CHUNKS * 32, stride = D + 1;
    float *q_tile = shared;                      /* [FA_QUERIES][D] */
    float *k_tile = q_tile + FA_QUERIES * D;     /* [FA_KEYS][D + 1] */
    float *v_tile = k_tile + FA_KEYS * stride;   /* [FA_KEYS][D + 1] */
    const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
    const int i0 = blockIdx.x * FA_QUERIES, h = blockIdx.y, b = blockIdx.z, hk = h / a.group;
    const int nq = a.n_q - i0 < FA_QUERIES ? a.n_q - i0 : FA_QUERIES;

    for (int e = threadIdx.x; e < FA_QUERIES * D; e += blockDim.x) {
        const int r = e / D, d = e % D;
        q_tile[e] = r < nq ? *(const float *)(a.q + (long long)(i0 + r) * a.q_nb1 + h * a.q_nb2 +
                                              b * a.q_nb3 + d * 4)
                           : 0.0f;
    }
    float out[FA_ROWS_PER_WARP][CHUNKS], max[FA_ROWS_PER_WARP], sum[FA_ROWS_PER_WARP];
    FA_UNROLL
    for (int r = 0; r < FA_ROWS_PER_WARP; r++) {
        max[r] = -INFINITY;
        sum[r] = 0.0f;
        FA_UNROLL
        for (int c = 0; c < CHUNKS; c++)
            out[r][c] = 0.0f;
    }
    int lo, hi, unused;
    fa_visible(a, i0, &lo, &unused);
    fa_visible(a, i0 + nq - 1, &unused, &hi);

    for (int j0 = lo; j0 < hi; j0 += FA_KEYS) {
        __syncthreads(); /* the previous tile (and the query load) is done with */
        fa_load_tiles(a, D, hk, b, j0, hi, k_tile, v_tile);
        __syncthreads();
        FA_UNROLL
        for (int r = 0; r < FA_ROWS_PER_WARP; r++) {
            const int row = warp * FA_ROWS_PER_WARP + r;
            if (row < nq) /* warp-uniform, as every branch below */
                fa_fold_tile<CHUNKS>(a, q_tile + row * D, k_tile, v_tile, i0 + row, j0, lane,
                                     out[r], &max[r], &sum[r]);
        }
    }
    FA_UNROLL
    for (int r = 0; r < FA_ROWS_PER_WARP; r++) {
        const int row = warp * FA_ROWS_PER_WARP + r;
        if (row >= nq)
            continue;
        /* dst is contiguous [D, n_head, n_q, B] */
        float *dst = a.dst + (((long long)b * a.n_q + i0 + row) * a.n_head + h) * D;
        const float norm = sum[r] > 0.0f ? 1.0f / sum[r] : 0.0f;
        FA_UNROLL
        for (int c = 0; c < CHUNKS; c++)
            dst[c * 32 + lane] = out[r][c] * norm;
    }
}

/* Shared bytes of one block for head size D. */
static size_t fa_shared_bytes(int D)
{
    return ((size_t)FA_QUERIES * D + 2 * (size_t)FA_KEYS * (D + 1)) * sizeof(float);
}

static bool fa_float_type(ggtk_tensor_type t)
{
    return t == GGTK_TENSOR_F32 || t == GGTK_TENSOR_F16;
}

bool cuda_flash_attn_supports(const inf_tensor *node)
{
    const inf_tensor *q = node->src[0], *k = node->src[1], *v = node->src[2];
    const int64_t D = q->ne[0];
    return q->type == GGTK_TENSOR_F32 && fa_float_type(k->type) && fa_float_type(v->type) &&
           inf_tensor_is_contiguous(node) && D % 32 == 0 && D / 32 >= 1 &&
           D / 32 <= FA_MAX_CHUNKS && k->ne[1] <= INT32_MAX && q->ne[1] <= INT32_MAX &&
           q->ne[2] <= 65535 && q->ne[3] <= 65535 &&
           (q->ne[1] + FA_QUERIES - 1) / FA_QUERIES <= INT32_MAX;
}

template <int CHUNKS>
static ggtk_status fa_launch(cuda_ctx *ctx, const fa_args &a, dim3 grid, ggtk_error *err)
{
    const size_t shared = fa_shared_bytes(CHUNKS * 32);
    if (shared > 48 * 1024) /* above the default limit: opt in (all GPUs of sm_80 on allow it) */
        CUDA_TRY(cudaFuncSetAttribute(flash_attn_kernel<CHUNKS>,
                                      cudaFuncAttributeMaxDynamicSharedMemorySize, (int)shared),
                 err);
    CUDA_LAUNCH(flash_attn_kernel<CHUNKS>, grid, FA_WARPS * 32, shared, ctx->stream, a);
    CUDA_TRY_LAUNCH(err);
    return GGTK_OK;
}

ggtk_status cuda_flash_attn_compute(cuda_ctx *ctx, inf_tensor *node, ggtk_error *err)
{
    const inf_tensor *q = node->src[0], *k = node->src[1], *v = node->src[2];
    if (q->ne[1] == 0 || q->ne[2] == 0 || q->ne[3] == 0)
        return GGTK_OK;
    fa_args a;
    a.q = (const char *)q->data;
    a.k = (const char *)k->data;
    a.v = (const char *)v->data;
    a.dst = (float *)node->data;
    a.q_nb1 = (long long)q->nb[1], a.q_nb2 = (long long)q->nb[2], a.q_nb3 = (long long)q->nb[3];
    a.k_nb1 = (long long)k->nb[1], a.k_nb2 = (long long)k->nb[2], a.k_nb3 = (long long)k->nb[3];
    a.v_nb0 = (long long)v->nb[0], a.v_nb1 = (long long)v->nb[1];
    a.v_nb2 = (long long)v->nb[2], a.v_nb3 = (long long)v->nb[3];
    a.head = (int)q->ne[0], a.n_q = (int)q->ne[1], a.n_kv = (int)k->ne[1];
    a.n_head = (int)q->ne[2], a.group = (int)(q->ne[2] / k->ne[2]);
    a.k_f16 = k->type == GGTK_TENSOR_F16, a.v_f16 = v->type == GGTK_TENSOR_F16;
    memcpy(&a.scale, &node->op_params[0], sizeof a.scale);
    memcpy(&a.softcap, &node->op_params[1], sizeof a.softcap);
    a.causal = node->op_params[2] != 0;
    a.n_past = node->op_params[3], a.window = node->op_params[4];
    const dim3 grid((unsigned)((a.n_q + FA_QUERIES - 1) / FA_QUERIES), (unsigned)a.n_head,
                    (unsigned)q->ne[3]);
    switch (a.head / 32) {
    case 1: return fa_launch<1>(ctx, a, grid, err);
    case 2: return fa_launch<2>(ctx, a, grid, err);
    case 3: return fa_launch<3>(ctx, a, grid, err);
    case 4: return fa_launch<4>(ctx, a, grid, err);
    case 5: return fa_launch<5>(ctx, a, grid, err);
    case 6: return fa_launch<6>(ctx, a, grid, err);
    case 7: return fa_launch<7>(ctx, a, grid, err);
    default: return fa_launch<8>(ctx, a, grid, err);
    }
}
