/* op_flash_attn.c - FLASH_ATTN on the CPU, the reference of the fused attention kernels: a block
 * of queries of one head walks the keys it may see in tiles, keeping for each query a running
 * maximum, a running sum of exponentials and an output rescaled whenever the maximum grows (the
 * online softmax), so the n_q x n_kv score matrix is never stored.
 *
 * Each score and output element is a plain left-to-right sum over the head (scores) or over the
 * keys (outputs), vectorised across keys and across the head by the tile loops of every SIMD level
 * (flash_attn_tile.h), which give the same bits. The exponentials and the tile maxima are the
 * softmax kernels' (vec.h). */
#include <math.h>

#include <ggtk/inf_quant.h>

#include "cpu_internal.h"
#include "cpu_math.h"
#include "flash_attn_tile.h"
#include "vec.h"
#include "engine/tensor/tensor_internal.h"

/* Queries per work item, for each query head of a key/value head: the item converts each K and V
 * tile once for all of them (a K and a V tile of FA_KEYS = 64 keys of a 256-wide head take
 * 128 KiB together, which stays in L2 while they are used). */
enum { FA_QUERIES = 16 };

/* What every work item of one node shares. */
typedef struct fa_node {
    const inf_tensor *q, *k, *v;
    inf_tensor *dst;
    int64_t head, n_q, n_kv, n_head, group; /* group: query heads per key/value head */
    int64_t q_blocks;                       /* blocks of FA_QUERIES queries */
    float scale, softcap;
    bool causal;
    int64_t n_past, window;
} fa_node;

/* One thread's tiles, carved from the work buffer; an item's rows are its query heads' blocks of
 * FA_QUERIES queries, one after the other. */
typedef struct fa_scratch {
    float *k_tile;  /* [head][FA_KEYS]: keys transposed, so scores vectorise across keys */
    float *v_tile;  /* [FA_KEYS][head] */
    float *row;     /* one converted row of up to max(head, FA_KEYS) elements */
    float *scores;  /* [2][FA_KEYS]: two rows are scored at a time */
    float *out;     /* [rows][head], unnormalised */
    float *max;     /* [rows] running maxima */
    float *sum;     /* [rows] running sums of e^(score - max) */
} fa_scratch;

/* Per-thread bytes for heads of `head` elements, `group` query heads per key/value head, rounded
 * to a cache line so that threads never share one. */
static size_t scratch_bytes(int64_t head, int64_t group)
{
    const int64_t row = head > FA_KEYS ? head : FA_KEYS, rows = group * FA_QUERIES;
    const int64_t floats = 2 * head * FA_KEYS + row + 2 * FA_KEYS + rows * head + 2 * rows;
    return ((size_t)floats * sizeof(float) + 63) / 64 * 64;
}

static fa_scratch scratch_at(char *base, int64_t head, int64_t group)
{
    fa_scratch s;
    const int64_t row = head > FA_KEYS ? head : FA_KEYS, rows = group * FA_QUERIES;
    s.k_tile = (float *)base;
    s.v_tile = s.k_tile + head * FA_KEYS;
    s.row = s.v_tile + head * FA_KEYS;
    s.scores = s.row + row;
    s.out = s.scores + 2 * FA_KEYS;
    s.max = s.out + rows * head;
    s.sum = s.max + rows;
    return s;
}

bool cpu_flash_attn_supports(const inf_tensor *node)
{
    const inf_tensor *q = node->src[0], *k = node->src[1], *v = node->src[2];
    const bool kv_types = (k->type == GGTK_TENSOR_F32 || k->type == GGTK_TENSOR_F16) &&
                          (v->type == GGTK_TENSOR_F32 || v->type == GGTK_TENSOR_F16);
    return q->type == GGTK_TENSOR_F32 && kv_types && inf_tensor_is_contiguous(node);
}

size_t cpu_flash_attn_work_size(const inf_tensor *node, int n_threads)
{
    const inf_tensor *q = node->src[0], *k = node->src[1];
    return (size_t)n_threads * scratch_bytes(q->ne[0], q->ne[2] / k->ne[2]);
}

/* Keys [*first, *end) query row i sees. */
static void visible_keys(const fa_node *f, int64_t i, int64_t *first, int64_t *end)
{
    const int64_t last = f->causal ? f->n_past + i : f->n_kv - 1;
    *first = f->window > 0 && last - f->window + 1 > 0 ? last - f->window + 1 : 0;
    *end = last + 1;
}

/* `n` elements of type `type` (F32 or F16) at `src`, `stride` bytes apart, as floats in `dst`. */
static void load_floats(ggtk_tensor_type type, const char *src, size_t stride, int64_t n,
                        float *dst)
{
    const size_t elem = type == GGTK_TENSOR_F16 ? sizeof(inf_fp16) : sizeof(float);
    if (stride == elem && type == GGTK_TENSOR_F16) {
        inf_fp16_to_fp32_row((const inf_fp16 *)src, dst, n);
    } else if (stride == elem) {
        memcpy(dst, src, (size_t)n * sizeof(float));
    } else {
        for (int64_t i = 0; i < n; i++) {
            const char *e = src + (size_t)i * stride;
            if (type == GGTK_TENSOR_F16) {
                inf_fp16 h;
                memcpy(&h, e, sizeof h);
                dst[i] = inf_fp16_to_fp32(h);
            } else {
                memcpy(&dst[i], e, sizeof(float));
            }
        }
    }
}

/* Keys [j0, j0 + nk) of key/value head `hk` of sequence b into the scratch tiles. */
static void load_tiles(const fa_node *f, const fa_scratch *s, int64_t hk, int64_t b, int64_t j0,
                       int64_t nk)
{
    const inf_tensor *k = f->k, *v = f->v;
    const int64_t head = f->head;
    for (int64_t j = 0; j < nk; j++) {
        const char *row = (const char *)k->data + (j0 + j) * k->nb[1] + hk * k->nb[2] +
                          b * k->nb[3];
        load_floats(k->type, row, k->nb[0], head, s->row);
        for (int64_t d = 0; d < head; d++)
            s->k_tile[d * FA_KEYS + j] = s->row[d];
    }
    for (int64_t d = 0; nk < FA_KEYS && d < head; d++) /* scored but never used */
        memset(s->k_tile + d * FA_KEYS + nk, 0, (size_t)(FA_KEYS - nk) * sizeof(float));
    const char *v0 = (const char *)v->data + j0 * v->nb[1] + hk * v->nb[2] + b * v->nb[3];
    if (v->nb[1] < v->nb[0]) { /* transposed: the keys of one head element are adjacent */
        for (int64_t d = 0; d < head; d++) {
            load_floats(v->type, v0 + d * v->nb[0], v->nb[1], nk, s->row);
            for (int64_t j = 0; j < nk; j++)
                s->v_tile[j * head + d] = s->row[j];
        }
    } else {
        for (int64_t j = 0; j < nk; j++)
            load_floats(v->type, v0 + j * v->nb[1], v->nb[0], head, s->v_tile + j * head);
    }
}

/* Fold scores [a, b) of one query's tile into its running max, sum and output. */
static void fold_tile(const fa_node *f, const cpu_vec_kernels *vec, const cpu_fa_kernels *fa,
                      float *scores, int64_t a, int64_t b, const float *v_tile, float *out,
                      float *max, float *sum)
{
    const int64_t n = b - a, head = f->head;
    float *x = scores + a;
    if (f->softcap > 0.0f) {
        const float inv = 1.0f / f->softcap;
        for (int64_t j = 0; j < n; j++)
            x[j] = tanhf(x[j] * inv) * f->softcap;
    }
    const float tile_max = vec->scale_mask_max(x, NULL, f->scale, x, n);
    if (tile_max == -INFINITY)
        return; /* every score -inf: weight 0 */
    const float new_max = tile_max > *max ? tile_max : *max;
    const float tile_sum = (float)vec->exp_sum(x, new_max, n);
    if (new_max != *max) {
        const float shrink = *max == -INFINITY ? 0.0f : cpu_expf(*max - new_max);
        *sum *= shrink;
#pragma omp simd
        for (int64_t d = 0; d < head; d++)
            out[d] *= shrink;
        *max = new_max;
    }
    *sum += tile_sum;
    fa->accumulate(x, n, v_tile + a * head, head, out);
}

/* Queries [i0, i0 + nq) of the query heads of key/value head hk of sequence b. */
static void attend_block(const fa_node *f, const fa_scratch *s, int64_t hk, int64_t b, int64_t i0,
                         int64_t nq)
{
    const cpu_vec_kernels *vec = cpu_vec_get();
    const cpu_fa_kernels *fa = cpu_fa_get();
    const int64_t head = f->head, rows = f->group * nq;
    int64_t lo, hi, unused;
    visible_keys(f, i0, &lo, &unused);          /* first visible key grows with the row */
    visible_keys(f, i0 + nq - 1, &unused, &hi); /* and so does the last */
    for (int64_t r = 0; r < rows; r++) {
        s->max[r] = -INFINITY;
        s->sum[r] = 0.0f;
        memset(s->out + r * head, 0, (size_t)head * sizeof(float));
    }
    for (int64_t j0 = lo; j0 < hi; j0 += FA_KEYS) {
        const int64_t nk = hi - j0 < FA_KEYS ? hi - j0 : FA_KEYS;
        load_tiles(f, s, hk, b, j0, nk);
        /* rows two by two: a row that sees no key of the tile is scored but not folded */
        for (int64_t r = 0; r < rows; r += 2) {
            const int64_t pair = rows - r < 2 ? 1 : 2;
            const float *q[2];
            int64_t a[2], e[2];
            for (int64_t t = 0; t < pair; t++) {
                const int64_t h = hk * f->group + (r + t) / nq, i = i0 + (r + t) % nq;
                int64_t first, end;
                visible_keys(f, i, &first, &end);
                a[t] = first > j0 ? first - j0 : 0;
                e[t] = end < j0 + nk ? end - j0 : nk;
                q[t] = (const float *)((const char *)f->q->data + i * f->q->nb[1] +
                                       h * f->q->nb[2] + b * f->q->nb[3]);
            }
            if (a[0] >= e[0] && (pair == 1 || a[1] >= e[1]))
                continue;
            fa->scores(q[0], q[pair - 1], s->k_tile, head, s->scores, s->scores + FA_KEYS);
            for (int64_t t = 0; t < pair; t++) {
                if (a[t] < e[t])
                    fold_tile(f, vec, fa, s->scores + t * FA_KEYS, a[t], e[t], s->v_tile,
                              s->out + (r + t) * head, &s->max[r + t], &s->sum[r + t]);
            }
        }
    }
    for (int64_t r = 0; r < rows; r++) {
        float *dst = inf_tensor_element(f->dst, 0, hk * f->group + r / nq, i0 + r % nq, b);
        /* A query that saw no key (or only -inf scores) gets zeros, as SOFT_MAX gives it. */
        const float norm = s->sum[r] > 0.0f ? 1.0f / s->sum[r] : 0.0f;
#pragma omp simd
        for (int64_t d = 0; d < head; d++)
            dst[d] = s->out[r * head + d] * norm;
    }
}

void cpu_flash_attn_compute(const cpu_params *p, inf_tensor *node)
{
    const inf_tensor *q = node->src[0], *k = node->src[1];
    fa_node f = {.q = q, .k = k, .v = node->src[2], .dst = node, .head = q->ne[0],
                 .n_q = q->ne[1], .n_kv = k->ne[1], .n_head = q->ne[2],
                 .group = q->ne[2] / k->ne[2], .q_blocks = (q->ne[1] + FA_QUERIES - 1) / FA_QUERIES,
                 .scale = inf_op_param_f32(node, 0), .softcap = inf_op_param_f32(node, 1),
                 .causal = node->op_params[2] != 0, .n_past = node->op_params[3],
                 .window = node->op_params[4]};
    const fa_scratch s = scratch_at(p->work + (size_t)p->ith * scratch_bytes(f.head, f.group),
                                    f.head, f.group);
    if (p->ith == 0)
        atomic_store(p->next_item, 0);
    cpu_barrier(p);
    /* Items (sequence, key/value head, query block), the query block fastest so that consecutive
     * items of a thread read the same keys. Later blocks see more keys under the causal mask;
     * handing items out on demand evens that out. */
    const int64_t n_head_kv = f.n_head / f.group, items = q->ne[3] * n_head_kv * f.q_blocks;
    for (int64_t item = cpu_claim(p); item < items; item = cpu_claim(p)) {
        const int64_t blk = item % f.q_blocks, hk = item / f.q_blocks % n_head_kv;
        const int64_t b = item / (f.q_blocks * n_head_kv);
        const int64_t i0 = blk * FA_QUERIES;
        attend_block(&f, &s, hk, b, i0, f.n_q - i0 < FA_QUERIES ? f.n_q - i0 : FA_QUERIES);
    }
}
