/* emu_fiber.cpp - the context switch and the fiber stacks.
 *
 * The switch saves only what the calling convention says a callee must preserve (x86-64:
 * rbx, rbp, r12-r15; aarch64: x19-x30, d8-d15) on the old stack, stores the stack pointer, loads
 * the new one and restores the same registers from it: a switch costs a function call. The
 * floating-point control registers are shared by all fibers (kernels do not change them). */
#include "emu_fiber.h"

#include <cstdint>
#include <cstdlib>
#include <sys/mman.h>
#include <unistd.h>

#if defined(__x86_64__)
asm(R"(
    .text
    .p2align 4
    .globl inf_emu_context_switch
    .hidden inf_emu_context_switch
    .type inf_emu_context_switch, @function
inf_emu_context_switch:
    pushq %rbp
    pushq %rbx
    pushq %r12
    pushq %r13
    pushq %r14
    pushq %r15
    movq %rsp, (%rdi)
    movq %rsi, %rsp
    popq %r15
    popq %r14
    popq %r13
    popq %r12
    popq %rbx
    popq %rbp
    ret
    .size inf_emu_context_switch, .-inf_emu_context_switch
)");
#elif defined(__aarch64__)
asm(R"(
    .text
    .p2align 4
    .globl inf_emu_context_switch
    .hidden inf_emu_context_switch
    .type inf_emu_context_switch, %function
inf_emu_context_switch:
    sub sp, sp, #160
    stp x19, x20, [sp, #0]
    stp x21, x22, [sp, #16]
    stp x23, x24, [sp, #32]
    stp x25, x26, [sp, #48]
    stp x27, x28, [sp, #64]
    stp x29, x30, [sp, #80]
    stp d8, d9, [sp, #96]
    stp d10, d11, [sp, #112]
    stp d12, d13, [sp, #128]
    stp d14, d15, [sp, #144]
    mov x9, sp
    str x9, [x0]
    mov sp, x1
    ldp x19, x20, [sp, #0]
    ldp x21, x22, [sp, #16]
    ldp x23, x24, [sp, #32]
    ldp x25, x26, [sp, #48]
    ldp x27, x28, [sp, #64]
    ldp x29, x30, [sp, #80]
    ldp d8, d9, [sp, #96]
    ldp d10, d11, [sp, #112]
    ldp d12, d13, [sp, #128]
    ldp d14, d15, [sp, #144]
    add sp, sp, #160
    ret
    .size inf_emu_context_switch, .-inf_emu_context_switch
)");
#endif

#ifdef INF_EMU_ASM_SWITCH
extern "C" void inf_emu_context_switch(void **save_sp, void *load_sp);
#endif

namespace emu {

void context_init(fiber_context *ctx, void *stack, size_t size, void (*entry)())
{
    uintptr_t top = (reinterpret_cast<uintptr_t>(stack) + size) & ~static_cast<uintptr_t>(15);
    uintptr_t *sp = reinterpret_cast<uintptr_t *>(top);
#if defined(__x86_64__)
    /* As if `entry` had been called: its return address (none) at an address 8 mod 16, the
     * switch's `ret` target below it, then the six saved registers. */
    *--sp = 0;
    *--sp = reinterpret_cast<uintptr_t>(entry);
    for (int i = 0; i < 6; i++)
        *--sp = 0;
    ctx->sp = sp;
#elif defined(__aarch64__)
    /* The 160-byte save area with x30 (the `ret` target) = entry and x29 (frame chain) = 0. */
    sp -= 20;
    for (int i = 0; i < 20; i++)
        sp[i] = 0;
    sp[11] = reinterpret_cast<uintptr_t>(entry);
    ctx->sp = sp;
#else
    getcontext(&ctx->uc);
    ctx->uc.uc_stack.ss_sp = stack;
    ctx->uc.uc_stack.ss_size = size;
    ctx->uc.uc_link = nullptr;
    makecontext(&ctx->uc, entry, 0);
    (void)top;
    (void)sp;
#endif
}

void context_switch(fiber_context *from, fiber_context *to)
{
#ifdef INF_EMU_ASM_SWITCH
    inf_emu_context_switch(&from->sp, to->sp);
#else
    swapcontext(&from->uc, &to->uc);
#endif
}

size_t fiber_stack_size()
{
    static size_t size = 0;
    if (size == 0) {
        const char *env = getenv("INF_CUDA_EMU_STACK");
        size_t want = env ? strtoull(env, nullptr, 0) : 0;
        if (want < 16384)
            want = 65536;
        size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
        size = (want + page - 1) / page * page;
    }
    return size;
}

void *fiber_stack_alloc()
{
    size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
    size_t size = fiber_stack_size();
    void *map = mmap(nullptr, size + page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (map == MAP_FAILED)
        return nullptr;
    mprotect(map, page, PROT_NONE);
    return static_cast<char *>(map) + page;
}

} // namespace emu
