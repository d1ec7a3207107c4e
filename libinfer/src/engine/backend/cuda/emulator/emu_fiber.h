/* emu_fiber.h - cooperative execution contexts (fibers) for the emulator's thread blocks: a
 * context switch of a few instructions on x86-64 and aarch64 (ucontext elsewhere), and stacks
 * kept for the life of the process so that launches reuse them. Internal to the emulator. */
#ifndef INF_CUDA_EMU_FIBER_H
#define INF_CUDA_EMU_FIBER_H

#include <cstddef>

#if defined(__x86_64__) || defined(__aarch64__)
#define INF_EMU_ASM_SWITCH 1
#else
#include <ucontext.h>
#endif

namespace emu {

/* A suspended execution: where its registers were saved. */
struct fiber_context {
#ifdef INF_EMU_ASM_SWITCH
    void *sp;
#else
    ucontext_t uc;
#endif
};

/* Prepares `ctx` to start `entry` (which must never return) on the stack [stack, stack+size). */
void context_init(fiber_context *ctx, void *stack, size_t size, void (*entry)());

/* Saves the running context into `from` and resumes `to`; returns when something resumes `from`. */
void context_switch(fiber_context *from, fiber_context *to);

/* The stack size of every fiber: env INF_CUDA_EMU_STACK (bytes, at least 16 KiB), else 64 KiB. */
size_t fiber_stack_size();

/* A stack of fiber_stack_size() bytes with an inaccessible guard page below it (an overflow
 * faults instead of corrupting the next stack); never freed. NULL when out of memory. */
void *fiber_stack_alloc();

} // namespace emu

#endif
