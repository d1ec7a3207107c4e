/* op_mul_mat.c - the matrix product driver. Phase 1 (all threads): pack the activations once,
 * quantizing them to 8 bits for quantized weights - or nothing, when the previous product that
 * packed any multiplied the same input the same way (Q, K and V; gate and up). Phase 2: each
 * thread takes a share of the weight panels; it packs a panel into its own slice of the work
 * buffer and multiplies it with every activation group of every batch matrix that uses it
 * (grouped-query broadcast included). Formats and kernels: matmul.h. */
#include "cpu_internal.h"
#include "matmul.h"
#include <ggtk/inf_quant.h>
#include "engine/quant_kernels/quant_internal.h"
#include "engine/quant_kernels/quant_kblocks.h"
#include "engine/tensor/tensor_internal.h"

typedef struct mm_plan {
    const mm_kernels *kernels;
    const mm_weight_format *format; /* the integer path's, or NULL for the float path */
    bool quantized;
    bool dequantized; /* float path of a block-quantized type: panels are dequantized rows */
    int64_t K, M, N, n_blocks, batches, groups;
    int64_t unit, chunk; /* elements per step of the reduction; steps per chunk */
    int P, G, subs;
    int code_bytes;       /* bytes per code in panels and activation groups (mm_code_bytes) */
    size_t group_bytes;   /* one packed activation group */
    size_t act_bytes;     /* all packed activations, shared */
    size_t panel_bytes;   /* one packed weight panel, per thread */
    size_t scratch_bytes; /* one gathered and quantized activation row, per thread */
    bool stream;          /* the output is much larger than the caches: write around them */
} mm_plan;

static size_t round_up(size_t n)
{
    return (n + 63) / 64 * 64;
}

static bool is_float_type(ggtk_tensor_type type)
{
    return type == GGTK_TENSOR_F32 || type == GGTK_TENSOR_F16 || type == GGTK_TENSOR_BF16;
}

/* Cut `total` steps into equal chunks of at most `limit` steps (limit >= 1). */
static int64_t chunk_steps(int64_t total, int64_t limit)
{
    const int64_t chunks = (total + limit - 1) / limit;
    return chunks > 0 ? (total + chunks - 1) / chunks : 1;
}

/* The libinfer type an activation row is quantized to for a weight format. */
static ggtk_tensor_type act_type(mm_act_kind act)
{
    switch (act) {
    case MM_ACT_Q8_1:
        return GGTK_TENSOR_Q8_1;
    case MM_ACT_Q8_K:
        return GGTK_TENSOR_Q8_K;
    default:
        return GGTK_TENSOR_Q8_0;
    }
}

/* Bytes of one activation row of K elements quantized for `act`. */
static size_t act_row_bytes(mm_act_kind act, int64_t K)
{
    const ggtk_tensor_type_info *info = ggtk_tensor_type_info_get(act_type(act));
    return (size_t)(K / info->block_size) * info->block_bytes;
}

static void make_plan(const inf_tensor *node, mm_plan *plan)
{
    const inf_tensor *w = node->src[0], *x = node->src[1];
    const mm_kernels *k = mm_kernels_get();
    plan->kernels = k;
    plan->format = mm_weight_format_get(w->type);
    plan->quantized = plan->format != NULL;
    plan->dequantized = !plan->quantized && !is_float_type(w->type);
    plan->subs = plan->quantized ? plan->format->subs : 1;
    plan->code_bytes = plan->quantized ? mm_code_bytes(k, plan->format) : 1;
    plan->K = w->ne[0];
    plan->M = w->ne[1];
    plan->N = x->ne[1];
    plan->n_blocks = plan->K / MM_BLOCK;
    plan->batches = x->ne[2] * x->ne[3];
    plan->P = k->panel_rows;
    plan->G = plan->quantized ? k->q_group : k->f_group;
    plan->groups = (plan->N + plan->G - 1) / plan->G;
    if (plan->quantized) {
        plan->unit = MM_BLOCK;
        plan->chunk = chunk_steps(plan->n_blocks, MM_Q_CHUNK_BLOCKS);
        plan->group_bytes =
            (size_t)plan->n_blocks * mm_act_block_bytes(plan->G, plan->subs, plan->code_bytes);
        plan->panel_bytes = (size_t)plan->chunk * plan->P *
                            (MM_BLOCK * (size_t)plan->code_bytes + 2 * (size_t)plan->subs * sizeof(float));
    } else {
        /* A block-quantized type is dequantized whole blocks at a time. */
        const int64_t limit = MM_F_CHUNK;
        plan->unit = plan->dequantized ? ggtk_tensor_type_info_get(w->type)->block_size : 1;
        plan->chunk = chunk_steps(plan->K / plan->unit, limit >= plan->unit ? limit / plan->unit : 1);
        plan->group_bytes = (size_t)plan->K * plan->G * sizeof(float);
        plan->panel_bytes = (size_t)(plan->chunk * plan->unit) * plan->P * sizeof(float);
    }
    plan->stream = inf_tensor_nbytes(node) >= ((size_t)32 << 20) && node->nb[1] % 64 == 0;
    plan->act_bytes = round_up(plan->group_bytes * plan->groups * plan->batches);
    plan->panel_bytes = round_up(plan->panel_bytes);
    plan->scratch_bytes = plan->quantized
                              ? round_up((size_t)plan->K * sizeof(float) +
                                         act_row_bytes(plan->format->act, plan->K))
                              : round_up((size_t)plan->K * plan->G * sizeof(float));
}

bool cpu_mul_mat_supports(const inf_tensor *node)
{
    const inf_tensor *w = node->src[0], *x = node->src[1];
    if (x->type != GGTK_TENSOR_F32 || node->nb[0] != sizeof(float))
        return false;
    if (is_float_type(w->type))
        return true;
    /* Quantized rows are read whole blocks at a time. */
    return (mm_weight_format_get(w->type) || inf_type_can_dequantize(w->type)) &&
           inf_tensor_rows_contiguous(w);
}

size_t cpu_mul_mat_work_size(const inf_tensor *node, int n_threads)
{
    mm_plan plan;
    make_plan(node, &plan);
    return plan.act_bytes + (size_t)n_threads * (plan.panel_bytes + plan.scratch_bytes);
}

/* Row n of activation matrix `batch` as contiguous floats (gathered into `scratch` if strided). */
static const float *activation_row(const inf_tensor *x, int64_t batch, int64_t n, float *scratch)
{
    const int64_t i2 = batch % x->ne[2], i3 = batch / x->ne[2];
    const char *row = (const char *)x->data + n * x->nb[1] + i2 * x->nb[2] + i3 * x->nb[3];
    if (x->nb[0] == sizeof(float))
        return (const float *)row;
    for (int64_t k = 0; k < x->ne[0]; k++)
        memcpy(&scratch[k], row + k * x->nb[0], sizeof(float));
    return scratch;
}

/* Sum of n activation codes. */
static inline int32_t code_sum(const int8_t *q, int n)
{
    int32_t sum = 0;
    for (int e = 0; e < n; e++)
        sum += q[e];
    return sum;
}

/* Write one row's 32 codes into slot j of a packed group block: 4-byte groups of G rows, or
 * with 16-bit codes 8-byte groups of four sign-extended codes. */
static inline void put_act_codes(const int8_t *qs, int G, int code_bytes, uint8_t *blk, int j)
{
    if (code_bytes == 1) {
        for (int g = 0; g < MM_BLOCK / 4; g++)
            memcpy(blk + ((size_t)g * G + j) * 4, qs + 4 * g, 4);
        return;
    }
    int16_t wide[MM_BLOCK];
    for (int e = 0; e < MM_BLOCK; e++)
        wide[e] = qs[e];
    for (int g = 0; g < MM_BLOCK / 4; g++)
        memcpy(blk + ((size_t)g * G + j) * 8, wide + 4 * g, 8);
}

/* Scatter one row's block (codes, scale, sub-block sums) into slot j of its packed group block. */
static inline void put_act_block(const mm_plan *plan, const int8_t *qs, float d, float q81_s,
                                 uint8_t *blk, int j)
{
    const mm_weight_format *f = plan->format;
    const int G = plan->G;
    put_act_codes(qs, G, plan->code_bytes, blk, j);
    float *dslot = (float *)(blk + (size_t)G * MM_BLOCK * plan->code_bytes);
    dslot[j] = d;
    char *words = (char *)(dslot + G);
    const int size = MM_BLOCK / f->subs;
    for (int sub = 0; sub < f->subs; sub++) {
        const int32_t sum = size == MM_BLOCK ? code_sum(qs, MM_BLOCK) : code_sum(qs + sub * size, size);
        /* Q8_1 carries its own (fp16-rounded) s, as llama.cpp's; otherwise d * sum. */
        const float s = f->act == MM_ACT_Q8_1 ? q81_s : d * (float)sum;
        const int32_t start = -f->offset * sum;
        memcpy(words + 4 * ((size_t)sub * G + j), f->affine ? (const void *)&s : (const void *)&start, 4);
    }
}

/* Quantize one activation row as the weight format says and scatter it into slot j of its group
 * (NULL row: zeros). */
static void pack_quantized_row(const mm_plan *plan, const float *row, void *scratch,
                               uint8_t *group, int j)
{
    const mm_weight_format *f = plan->format;
    const size_t block_bytes = mm_act_block_bytes(plan->G, f->subs, plan->code_bytes);
    if (!row) {
        const int8_t zeros[MM_BLOCK] = {0};
        for (int64_t b = 0; b < plan->n_blocks; b++)
            put_act_block(plan, zeros, 0.0f, 0.0f, group + (size_t)b * block_bytes, j);
        return;
    }
    if (f->act == MM_ACT_Q8_K) {
        inf_quantize_row(GGTK_TENSOR_Q8_K, row, scratch, plan->K);
        /* every block of 32 carries its super-block's scale */
        for (int64_t b = 0; b < plan->n_blocks; b++) {
            const block_q8_K *q = (const block_q8_K *)scratch + b / (QUANT_KBLOCK / MM_BLOCK);
            put_act_block(plan, q->qs + b % (QUANT_KBLOCK / MM_BLOCK) * MM_BLOCK, q->d, 0.0f,
                          group + (size_t)b * block_bytes, j);
        }
        return;
    }
    inf_quantize_row(act_type(f->act), row, scratch, plan->K);
    if (f->act == MM_ACT_Q8_1) {
        for (int64_t b = 0; b < plan->n_blocks; b++) {
            const block_q8_1 *q = (const block_q8_1 *)scratch + b;
            put_act_block(plan, q->qs, quant_fp16_to_fp32(q->d), quant_fp16_to_fp32(q->s),
                          group + (size_t)b * block_bytes, j);
        }
    } else {
        for (int64_t b = 0; b < plan->n_blocks; b++) {
            const block_q8_0 *q = (const block_q8_0 *)scratch + b;
            put_act_block(plan, q->qs, quant_fp16_to_fp32(q->d), 0.0f, group + (size_t)b * block_bytes, j);
        }
    }
}

/* One float group: element k of its row j at [k][j], so the kernel reads G values per k in a
 * row; rows past N are zeros. */
static void pack_float_group(const mm_plan *plan, const inf_tensor *x, int64_t batch, int64_t n0,
                             float *group, float *scratch)
{
    const float *rows[64];
    for (int j = 0; j < plan->G; j++) {
        rows[j] = NULL;
        if (n0 + j < plan->N)
            rows[j] = activation_row(x, batch, n0 + j, scratch + (size_t)j * plan->K);
    }
    plan->kernels->pack_act_f(rows, plan->G, plan->K, group);
}

/* Phase 1: every row slot of every group of every batch, rows past N packed as zeros. Float
 * activations are packed a group at a time, quantized ones a row at a time. */
static void pack_activations(const cpu_params *p, const mm_plan *plan, const inf_tensor *node,
                             uint8_t *act, char *scratch)
{
    const inf_tensor *x = node->src[1];
    int64_t begin, end;
    if (!plan->quantized) {
        cpu_split(plan->batches * plan->groups, p, &begin, &end);
        for (int64_t gi = begin; gi < end; gi++)
            pack_float_group(plan, x, gi / plan->groups, gi % plan->groups * plan->G,
                             (float *)(act + (size_t)gi * plan->group_bytes), (float *)scratch);
        return;
    }
    const int64_t slots = plan->groups * plan->G;
    cpu_split(plan->batches * slots, p, &begin, &end);
    for (int64_t r = begin; r < end; r++) {
        const int64_t batch = r / slots, n = r % slots;
        uint8_t *group = act + (size_t)(batch * plan->groups + n / plan->G) * plan->group_bytes;
        const float *row = n < plan->N ? activation_row(x, batch, n, (float *)scratch) : NULL;
        pack_quantized_row(plan, row, scratch + (size_t)plan->K * sizeof(float), group,
                           (int)(n % plan->G));
    }
}

/* Phase 2 for one panel of one weight matrix, one chunk of the reduction at a time: pack the
 * chunk, then multiply it with every group of the batch matrices that share this weight matrix
 * (the first chunk stores, later ones add). */
static void multiply_panel(const mm_plan *plan, const inf_tensor *node, const uint8_t *act,
                           char *panel, int64_t w_batch, int64_t panel_index)
{
    const inf_tensor *w = node->src[0], *x = node->src[1];
    const mm_kernels *k = plan->kernels;
    const int64_t w2 = w_batch % w->ne[2], w3 = w_batch / w->ne[2];
    const int64_t r2 = x->ne[2] / w->ne[2], r3 = x->ne[3] / w->ne[3];
    const int64_t m0 = panel_index * plan->P;
    const int rows = (int)(plan->M - m0 < plan->P ? plan->M - m0 : plan->P);
    const char *wdata = (const char *)w->data + m0 * w->nb[1] + w2 * w->nb[2] + w3 * w->nb[3];
    const int64_t total = plan->K / plan->unit, chunk = plan->chunk;
    for (int64_t c0 = 0; c0 < total; c0 += chunk) {
        const mm_store store = c0 > 0 ? MM_ADD : chunk == total && plan->stream ? MM_STREAM : MM_STORE;
        const int64_t len = total - c0 < chunk ? total - c0 : chunk;
        uint8_t *qs = (uint8_t *)panel;
        float *d = (float *)(qs + (size_t)len * plan->P * MM_BLOCK * plan->code_bytes);
        float *m = d + len * plan->subs * plan->P;
        size_t act_offset = (size_t)(c0 * plan->unit) * plan->G * sizeof(float);
        if (plan->quantized) {
            k->pack_q(plan->format, wdata, w->nb[1], rows, c0, len, plan->P, qs, d, m);
            act_offset = (size_t)c0 * mm_act_block_bytes(plan->G, plan->subs, plan->code_bytes);
        } else if (plan->dequantized) {
            mm_pack_f_dequantized(w->type, wdata + (size_t)c0 * w->nb[0], w->nb[1], rows,
                                  len * plan->unit, plan->P, (float *)panel);
        } else {
            k->pack_f(w->type, wdata + (size_t)c0 * w->nb[0], w->nb[0], w->nb[1], rows, len, plan->P,
                      (float *)panel);
        }
        for (int64_t i3 = w3 * r3; i3 < (w3 + 1) * r3; i3++) {
            for (int64_t i2 = w2 * r2; i2 < (w2 + 1) * r2; i2++) {
                const uint8_t *groups = act + (size_t)((i3 * x->ne[2] + i2) * plan->groups) * plan->group_bytes;
                for (int64_t gi = 0; gi < plan->groups; gi++) {
                    const int nr = (int)(plan->N - gi * plan->G < plan->G ? plan->N - gi * plan->G : plan->G);
                    float *dst = inf_tensor_element(node, m0, gi * plan->G, i2, i3);
                    const uint8_t *group = groups + (size_t)gi * plan->group_bytes + act_offset;
                    if (plan->quantized)
                        k->gemm_q(plan->format, qs, d, m, group, len, nr, dst, node->nb[1], rows, store);
                    else
                        k->gemm_f((const float *)panel, (const float *)group, len * plan->unit, nr,
                                  dst, node->nb[1], rows, store);
                }
            }
        }
    }
}

/* Whether the work buffer already holds node's activations packed as `plan` packs them: the
 * last product that packed any multiplied the same tensor in the same format. Only a graph
 * node that is not a view qualifies: its memory is written by its own op alone, and while
 * products are still to read it nothing else may take it (views can share a cache or scratch
 * tensor that other nodes write). */
static bool activations_packed(const cpu_params *p, const mm_plan *plan, const inf_tensor *node)
{
    const inf_tensor *x = node->src[1];
    const cpu_packed_act *held = p->packed_act;
    return held->src == x && held->format == plan->format && held->kernels == plan->kernels &&
           x->op != INF_OP_NONE && !x->view_src;
}

void cpu_mul_mat_compute(const cpu_params *p, inf_tensor *node)
{
    mm_plan plan;
    make_plan(node, &plan);
    uint8_t *act = (uint8_t *)p->mm_work;
    char *mine = p->mm_work + plan.act_bytes + (size_t)p->ith * (plan.panel_bytes + plan.scratch_bytes);
    if (p->ith == 0)
        atomic_store(p->next_item, 0);
    const bool packed = activations_packed(p, &plan, node);
    if (!packed)
        pack_activations(p, &plan, node, act, mine + plan.panel_bytes);
    cpu_barrier(p);
    if (p->ith == 0 && !packed) /* every thread has decided by now (the barrier) */
        *p->packed_act = (cpu_packed_act){node->src[1], plan.format, plan.kernels};
    /* Panels are handed out on demand: a thread sharing its core with another process ends up
     * doing fewer of them instead of holding the others up. */
    const inf_tensor *w = node->src[0];
    const int64_t panels = (plan.M + plan.P - 1) / plan.P, items = w->ne[2] * w->ne[3] * panels;
    for (int64_t item = cpu_claim(p); item < items; item = cpu_claim(p))
        multiply_panel(&plan, node, act, mine, item / panels, item % panels);
    if (plan.stream) /* streaming stores are weakly ordered: publish them before the barrier */
        atomic_thread_fence(memory_order_seq_cst);
}
