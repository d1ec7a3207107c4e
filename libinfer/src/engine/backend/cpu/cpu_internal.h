/* cpu_internal.h - what the CPU backend's driver and its op kernels share: the per-thread call
 * parameters, row splitting, failure reporting and the table of kernels. */
#ifndef INF_CPU_INTERNAL_H
#define INF_CPU_INTERNAL_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <ggtk/inf_tensor.h>

/* The first failure of a compute: the node it happened at (INT32_MAX while none) and why. */
typedef struct cpu_failure {
    atomic_int node;
    char message[256];
} cpu_failure;

/* A barrier for the threads of one compute (cpu_barrier.c). */
typedef struct cpu_barrier_state {
    atomic_int arrived;
    atomic_int phase;
    atomic_int sleepers;
    int n_threads;
} cpu_barrier_state;

/* Which activations the matrix products' region of the work buffer holds, so that a later
 * product of the same graph multiplying the same tensor packed the same way skips packing it
 * (Q, K and V share their input, so do an FFN's gate and up). Shared by the team: read by every
 * thread when a product starts, written by thread 0 after the packing barrier. */
typedef struct cpu_packed_act {
    const inf_tensor *src; /* NULL while the region holds nothing reusable */
    const void *format;    /* how: the product's weight format (NULL: float) and kernel level */
    const void *kernels;
} cpu_packed_act;

/* What one thread gets when computing one node. `work` is the shared work buffer sized by the
 * op's work_size() for this thread count; kernels that need several phases separate them with
 * cpu_barrier(), which every thread of the team must reach. Matrix products use the part from
 * `mm_work` on, which no other op touches, so their packed activations outlive other nodes. */
typedef struct cpu_params {
    int ith;
    int nth;
    char *work;
    size_t work_size;
    char *mm_work;
    cpu_packed_act *packed_act;
    int node_index;
    cpu_failure *failure;
    cpu_barrier_state *barrier;
    /* A counter shared by the team for kernels that hand out work items on demand (so a thread
     * slowed by another process on its core does less of the work): one thread resets it before
     * a barrier, then every thread claims items with cpu_claim(). */
    atomic_llong *next_item;
} cpu_params;

/* Record a failure of the current node (the first one wins); the compute stops after it. */
void cpu_fail(const cpu_params *p, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Prepare a barrier for n_threads threads (before they start). */
void cpu_barrier_init(cpu_barrier_state *b, int n_threads);
/* Wait until every thread of the team gets here. */
void cpu_barrier(const cpu_params *p);

/* This thread's share [*begin, *end) of n items split in nearly equal runs. */
static inline void cpu_split(int64_t n, const cpu_params *p, int64_t *begin, int64_t *end)
{
    int64_t per = n / p->nth, extra = n % p->nth;
    *begin = p->ith * per + (p->ith < extra ? p->ith : extra);
    *end = *begin + per + (p->ith < extra ? 1 : 0);
}

/* The next unclaimed work item (>= n when all are taken). */
static inline int64_t cpu_claim(const cpu_params *p)
{
    return atomic_fetch_add_explicit(p->next_item, 1, memory_order_relaxed);
}

/* The kernel of one operation. */
typedef struct cpu_op {
    /* Whether the node's types and layouts are handled. */
    bool (*supports)(const inf_tensor *node);
    /* Bytes of shared work buffer the node needs with n_threads threads; NULL for none. */
    size_t (*work_size)(const inf_tensor *node, int n_threads);
    /* Compute this thread's share of the node; NULL for operations that compute nothing. */
    void (*compute)(const cpu_params *p, inf_tensor *node);
} cpu_op;

/* The table of kernels, indexed by inf_op (cpu_op_table.c). */
extern const cpu_op cpu_ops[INF_OP_COUNT];

/* Kernels, one file per group. */
bool cpu_binary_supports(const inf_tensor *node);
void cpu_add_compute(const cpu_params *p, inf_tensor *node);
void cpu_mul_compute(const cpu_params *p, inf_tensor *node);
bool cpu_unary_supports(const inf_tensor *node);
void cpu_scale_compute(const cpu_params *p, inf_tensor *node);
void cpu_silu_compute(const cpu_params *p, inf_tensor *node);
void cpu_swiglu_compute(const cpu_params *p, inf_tensor *node);
void cpu_gelu_compute(const cpu_params *p, inf_tensor *node);
void cpu_geglu_compute(const cpu_params *p, inf_tensor *node);
void cpu_softcap_compute(const cpu_params *p, inf_tensor *node);
void cpu_rms_norm_compute(const cpu_params *p, inf_tensor *node);
bool cpu_rope_supports(const inf_tensor *node);
size_t cpu_rope_work_size(const inf_tensor *node, int n_threads);
void cpu_rope_compute(const cpu_params *p, inf_tensor *node);
bool cpu_soft_max_supports(const inf_tensor *node);
void cpu_soft_max_compute(const cpu_params *p, inf_tensor *node);
bool cpu_copy_supports(const inf_tensor *node);
void cpu_copy_compute(const cpu_params *p, inf_tensor *node);
bool cpu_set_rows_supports(const inf_tensor *node);
void cpu_set_rows_compute(const cpu_params *p, inf_tensor *node);
bool cpu_get_rows_supports(const inf_tensor *node);
void cpu_get_rows_compute(const cpu_params *p, inf_tensor *node);
bool cpu_mul_mat_supports(const inf_tensor *node);
size_t cpu_mul_mat_work_size(const inf_tensor *node, int n_threads);
void cpu_mul_mat_compute(const cpu_params *p, inf_tensor *node);
bool cpu_flash_attn_supports(const inf_tensor *node);
size_t cpu_flash_attn_work_size(const inf_tensor *node, int n_threads);
void cpu_flash_attn_compute(const cpu_params *p, inf_tensor *node);

#endif
