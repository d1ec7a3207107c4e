/* cpu_barrier.c - the barrier between nodes. OpenMP's own barrier spins for a long time before
 * sleeping; on a machine with more runnable threads than cores the spinning thread takes the core
 * from the very thread it waits for, and a pass got several times slower with 2 threads than with
 * one. This one spins briefly (threads usually arrive within microseconds of each other), then
 * sleeps on a futex until the last thread arrives and wakes it. */
#include <linux/futex.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "cpu_internal.h"

enum { SPINS_BEFORE_SLEEP = 4000 };

static inline void cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#endif
}

void cpu_barrier_init(cpu_barrier_state *b, int n_threads)
{
    atomic_store(&b->arrived, 0);
    atomic_store(&b->phase, 0);
    atomic_store(&b->sleepers, 0);
    b->n_threads = n_threads;
}

void cpu_barrier(const cpu_params *p)
{
    cpu_barrier_state *b = p->barrier;
    if (b->n_threads == 1)
        return;
    const int phase = atomic_load_explicit(&b->phase, memory_order_acquire);
    if (atomic_fetch_add_explicit(&b->arrived, 1, memory_order_acq_rel) == b->n_threads - 1) {
        atomic_store_explicit(&b->arrived, 0, memory_order_relaxed);
        atomic_fetch_add_explicit(&b->phase, 1, memory_order_seq_cst);
        if (atomic_load_explicit(&b->sleepers, memory_order_seq_cst) > 0)
            syscall(SYS_futex, &b->phase, FUTEX_WAKE_PRIVATE, b->n_threads, NULL, NULL, 0);
        return;
    }
    for (int spins = 0; spins < SPINS_BEFORE_SLEEP; spins++) {
        if (atomic_load_explicit(&b->phase, memory_order_acquire) != phase)
            return;
        cpu_relax();
    }
    atomic_fetch_add_explicit(&b->sleepers, 1, memory_order_seq_cst);
    /* FUTEX_WAIT returns at once when phase already moved on, so no wake-up can be missed. */
    while (atomic_load_explicit(&b->phase, memory_order_seq_cst) == phase)
        syscall(SYS_futex, &b->phase, FUTEX_WAIT_PRIVATE, phase, NULL, NULL, 0);
    atomic_fetch_sub_explicit(&b->sleepers, 1, memory_order_relaxed);
}
