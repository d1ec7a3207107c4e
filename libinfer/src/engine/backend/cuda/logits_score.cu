/* logits_score.cu - scoring rows of logits on the device (logits_score.h): per row the maximum
 * and the first token holding it, the sum of e^(logit - max), the target's logit and, comparing
 * with a base, the KL-divergence sum of llama-perplexity. One thread block per row; each thread
 * walks the row with a stride of the block and the block reduces in shared memory. The plain host
 * reference comes first; the kernel follows it step by step. */
#include <math.h>
#include <string.h>

#include "cuda_internal.cuh"
#include <ggtk/inf_backend_cuda.h>
#include "engine/backend/backend_internal.h"
#include "logits_score.h"

/* Log-probabilities at or below this are no term of the KL-divergence (as llama-perplexity). */
#define SCORE_LOGPROB_FLOOR (-16.0f)

enum { SCORE_THREADS = 256 };

/* ---------------------------------------------------------------------------------------------
 * Host reference
 * ------------------------------------------------------------------------------------------- */

/* Log-probability of word q of a llama row with header (scale, lp_min). */
static float base_log_p_host(float scale, float lp_min, uint16_t q)
{
    return scale * (float)q + lp_min;
}

void cuda_score_row_reference(const float *logits, int32_t n_vocab, int32_t target,
                              const uint16_t *base_row, const int32_t *ids, const float *log_p,
                              int32_t n_entries, cuda_row_score *out)
{
    float max_logit = -INFINITY;
    int32_t top = -1;
    for (int32_t i = 0; i < n_vocab; i++)
        if (logits[i] > max_logit || (top < 0 && logits[i] == max_logit)) {
            max_logit = logits[i];
            top = i;
        }
    double sum = 0;
    for (int32_t i = 0; i < n_vocab; i++)
        sum += (double)expf(logits[i] - max_logit);
    const float log_norm = max_logit + (float)log(sum);
    double kld = 0;
    int32_t top_base = -1;
    if (base_row) {
        float header[2];
        memcpy(header, base_row, sizeof header);
        float top_log_p = 0;
        for (int32_t i = 0; i < n_vocab; i++) {
            const float lp = base_log_p_host(header[0], header[1], base_row[4 + i]);
            if (top_base < 0 || lp > top_log_p) {
                top_log_p = lp;
                top_base = i;
            }
            if (lp > SCORE_LOGPROB_FLOOR)
                kld += (double)(expf(lp) * (lp - logits[i] + log_norm));
        }
    }
    for (int32_t e = 0; ids && e < n_entries; e++)
        kld += (double)(expf(log_p[e]) * (log_p[e] - logits[ids[e]] + log_norm));
    *out = cuda_row_score{sum, kld, max_logit, logits[target], top < 0 ? 0 : top, top_base};
}

/* ---------------------------------------------------------------------------------------------
 * Kernel
 * ------------------------------------------------------------------------------------------- */

/* a * b + c without fused multiply-add, as the host computes it (-ffp-contract=off). */
static __device__ float mul_add_unfused(float a, float b, float c)
{
#ifdef INF_CUDA_EMULATION
    return a * b + c;
#else
    return __fadd_rn(__fmul_rn(a, b), c);
#endif
}

/* The block's largest value and lowest index holding it, left in max_v[0] / max_i[0]. */
static __device__ void reduce_max_first(float *max_v, int32_t *max_i)
{
    for (int half = SCORE_THREADS / 2; half > 0; half /= 2) {
        if ((int)threadIdx.x < half) {
            const float v = max_v[threadIdx.x + half];
            const int32_t i = max_i[threadIdx.x + half];
            const bool better = i >= 0 && (max_i[threadIdx.x] < 0 || v > max_v[threadIdx.x] ||
                                           (v == max_v[threadIdx.x] && i < max_i[threadIdx.x]));
            if (better) {
                max_v[threadIdx.x] = v;
                max_i[threadIdx.x] = i;
            }
        }
        __syncthreads();
    }
}

/* The block's sum, left in sum[0]. */
static __device__ void reduce_sum(double *sum)
{
    for (int half = SCORE_THREADS / 2; half > 0; half /= 2) {
        if ((int)threadIdx.x < half)
            sum[threadIdx.x] += sum[threadIdx.x + half];
        __syncthreads();
    }
}

/* Block r scores row r: maximum, sum of exponentials, then the divergence from its base. */
static __global__ void score_rows_kernel(const float *logits, int32_t n_vocab,
                                         const int32_t *targets, const uint16_t *llama_rows,
                                         size_t row_words, const int32_t *entry_begin,
                                         const int32_t *entry_ids, const float *entry_log_p,
                                         cuda_row_score *out)
{
    __shared__ float max_v[SCORE_THREADS];
    __shared__ int32_t max_i[SCORE_THREADS];
    __shared__ double sum[SCORE_THREADS];
    const int32_t r = (int32_t)blockIdx.x;
    const float *row = logits + (size_t)r * (size_t)n_vocab;

    float m = -INFINITY;
    int32_t at = -1;
    for (int32_t i = (int32_t)threadIdx.x; i < n_vocab; i += SCORE_THREADS)
        if (row[i] > m || (at < 0 && row[i] == m)) {
            m = row[i];
            at = i;
        }
    max_v[threadIdx.x] = m;
    max_i[threadIdx.x] = at;
    __syncthreads();
    reduce_max_first(max_v, max_i);
    const float max_logit = max_v[0];
    const int32_t top = max_i[0] < 0 ? 0 : max_i[0];

    double s = 0;
    for (int32_t i = (int32_t)threadIdx.x; i < n_vocab; i += SCORE_THREADS)
        s += (double)expf(row[i] - max_logit);
    sum[threadIdx.x] = s;
    __syncthreads();
    reduce_sum(sum);
    const double sum_exp = sum[0];
    const float log_norm = max_logit + (float)log(sum_exp);
    __syncthreads(); /* every thread has read sum[0] before it is reused */

    double kld = 0;
    int32_t top_base = -1;
    float top_log_p = 0;
    if (llama_rows) {
        const uint16_t *base = llama_rows + (size_t)r * row_words;
        float header[2];
        memcpy(header, base, sizeof header);
        for (int32_t i = (int32_t)threadIdx.x; i < n_vocab; i += SCORE_THREADS) {
            const float lp = mul_add_unfused(header[0], (float)base[4 + i], header[1]);
            if (top_base < 0 || lp > top_log_p) {
                top_log_p = lp;
                top_base = i;
            }
            if (lp > SCORE_LOGPROB_FLOOR)
                kld += (double)(expf(lp) * (lp - row[i] + log_norm));
        }
    } else if (entry_begin) {
        for (int32_t e = entry_begin[r] + (int32_t)threadIdx.x; e < entry_begin[r + 1];
             e += SCORE_THREADS) {
            const float lp = entry_log_p[e];
            kld += (double)(expf(lp) * (lp - row[entry_ids[e]] + log_norm));
        }
    }
    sum[threadIdx.x] = kld;
    max_v[threadIdx.x] = top_log_p;
    max_i[threadIdx.x] = top_base;
    __syncthreads();
    reduce_sum(sum);
    reduce_max_first(max_v, max_i);
    if (threadIdx.x == 0)
        out[r] = cuda_row_score{sum_exp, sum[0], max_logit, row[targets[r]], top, max_i[0]};
}

/* ---------------------------------------------------------------------------------------------
 * Host side: uploads into the backend's scratch areas (scoring runs after a graph, never beside
 * a node, so the op kernels' scratch is free), one launch, one download.
 * ------------------------------------------------------------------------------------------- */

/* Copy `bytes` of host memory into scratch slot `slot`; *device gets its address. */
static ggtk_status upload(cuda_ctx *ctx, cuda_scratch_slot slot, const void *host, size_t bytes,
                          void **device, ggtk_error *err)
{
    *device = cuda_scratch(ctx, slot, bytes, err);
    if (!*device)
        return err ? err->status : GGTK_ERR_NOMEM;
    CUDA_TRY(cudaMemcpyAsync(*device, host, bytes, cudaMemcpyHostToDevice, ctx->stream), err);
    return GGTK_OK;
}

ggtk_status cuda_score_rows(inf_backend *backend, const cuda_score_rows_job *job,
                            cuda_row_score *out, ggtk_error *err)
{
    if (!inf_backend_is_cuda(backend))
        return ggtk_error_set(err, GGTK_ERR_USAGE, GGTK_NO_OFFSET,
                              "cuda: scoring rows on the %s backend", inf_backend_name(backend));
    if (job->n_rows < 1)
        return GGTK_OK;
    cuda_ctx *ctx = (cuda_ctx *)backend->impl;
    CUDA_TRY(cudaSetDevice(ctx->device), err);
    const size_t n_rows = (size_t)job->n_rows;
    const size_t n_entries = job->entry_begin ? (size_t)job->entry_begin[n_rows] : 0;
    /* One upload of the small inputs: targets, entry offsets, ids, then log-probabilities. */
    const size_t small_bytes = (2 * n_rows + 1 + 2 * n_entries) * 4;
    int32_t *packed = (int32_t *)malloc(small_bytes);
    if (!packed)
        return ggtk_error_set(err, GGTK_ERR_NOMEM, GGTK_NO_OFFSET, "cuda: out of memory");
    memcpy(packed, job->targets, n_rows * 4);
    if (job->entry_begin) {
        memcpy(packed + n_rows, job->entry_begin, (n_rows + 1) * 4);
        memcpy(packed + 2 * n_rows + 1, job->entry_ids, n_entries * 4);
        memcpy(packed + 2 * n_rows + 1 + n_entries, job->entry_log_p, n_entries * 4);
    }
    void *d_small = NULL, *d_rows = NULL, *d_out = NULL;
    ggtk_status st = upload(ctx, CUDA_SCRATCH_ACTIVATIONS, packed, small_bytes, &d_small, err);
    if (st == GGTK_OK && job->llama_rows)
        st = upload(ctx, CUDA_SCRATCH_WEIGHTS, job->llama_rows, n_rows * job->row_words * 2,
                    &d_rows, err);
    if (st == GGTK_OK && !(d_out = cuda_scratch(ctx, CUDA_SCRATCH_OUTPUT, n_rows * sizeof *out, err)))
        st = err ? err->status : GGTK_ERR_NOMEM;
    if (st == GGTK_OK) {
        const int32_t *d_packed = (const int32_t *)d_small;
        const int32_t *d_begin = job->entry_begin ? d_packed + n_rows : NULL;
        CUDA_LAUNCH(score_rows_kernel, dim3((unsigned)n_rows), dim3(SCORE_THREADS), 0, ctx->stream,
                    job->logits, job->n_vocab, d_packed, (const uint16_t *)d_rows, job->row_words,
                    d_begin, d_packed + 2 * n_rows + 1,
                    (const float *)(d_packed + 2 * n_rows + 1 + n_entries), (cuda_row_score *)d_out);
        st = cuda_check(cudaGetLastError(), "score_rows_kernel", __func__, err);
    }
    if (st == GGTK_OK)
        st = cuda_check(cudaMemcpyAsync(out, d_out, n_rows * sizeof *out, cudaMemcpyDeviceToHost,
                                        ctx->stream), "cudaMemcpyAsync", __func__, err);
    if (st == GGTK_OK)
        st = cuda_check(cudaStreamSynchronize(ctx->stream), "cudaStreamSynchronize", __func__, err);
    /* The stream has finished with the packed inputs (or failed) before they are freed. */
    if (st != GGTK_OK)
        cudaStreamSynchronize(ctx->stream);
    free(packed);
    return st;
}
