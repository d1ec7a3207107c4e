/* cpu_barrier.c - the barrier between nodes. OpenMP's own barrier spins for a long time before
 * sleeping; on a machine with more runnable threads than cores the spinning thread takes the core
 * from the very thread it waits for, and a pass got several times slower with 2 threads than with
 * one. This one spins briefly (threads usually arrive within microseconds of each other), then
 * yields the core on every further check. */
#include <sched.h>

#include "backend/cpu/cpu_internal.h"

enum { SPINS_BEFORE_YIELD = 2000 };

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
        atomic_fetch_add_explicit(&b->phase, 1, memory_order_release);
        return;
    }
    for (int spins = 0; atomic_load_explicit(&b->phase, memory_order_acquire) == phase; spins++) {
        if (spins < SPINS_BEFORE_YIELD)
            cpu_relax();
        else
            sched_yield();
    }
}
