/* emu_launch.h - CUDA_LAUNCH for the emulator: the kernel's arguments are converted to its
 * parameter types (as a real launch does), then every block of the grid runs, in order, before
 * the launch returns (so stream order holds trivially). A bad configuration runs nothing and
 * sets the error cudaGetLastError() returns. */
#ifndef INF_CUDA_EMU_LAUNCH_H
#define INF_CUDA_EMU_LAUNCH_H

#include <cstddef>
#include <tuple>
#include <type_traits>
#include <utility>

#include "emu_device.h"
#include "emu_runtime.h"

namespace emu {

/* What a launch runs: `entry(params)` is one thread's execution of the kernel. */
struct launch_desc {
    const char *kernel_name;
    const void *kernel;
    dim3 grid;
    dim3 block;
    size_t shared_bytes;
    cudaStream_t stream;
    void (*entry)(void *params);
    void *params;
};

/* Validates the configuration and runs every block (emu_scheduler.cpp). */
void launch(const launch_desc &desc);

/* Records cudaFuncAttributeMaxDynamicSharedMemorySize for `kernel` (without it a launch may use
 * 48 KiB, as on the device). */
void set_kernel_shared_limit(const void *kernel, int bytes);

/* A kernel and its arguments, converted and stored once per launch; each thread calls the
 * kernel with copies of them (parameters are per thread, as on the device). */
template <typename... P> struct kernel_call {
    void (*kernel)(P...);
    std::tuple<typename std::decay<P>::type...> args;

    static void run(void *self)
    {
        kernel_call *call = static_cast<kernel_call *>(self);
        std::apply(call->kernel, call->args);
    }
};

template <typename... P, typename... A>
void launch_kernel(const char *name, void (*kernel)(P...), dim3 grid, dim3 block, size_t shared_bytes,
                   cudaStream_t stream, A &&...args)
{
    static_assert(sizeof...(P) == sizeof...(A), "CUDA_LAUNCH passes one argument per kernel parameter");
    kernel_call<P...> call{kernel, std::tuple<typename std::decay<P>::type...>(std::forward<A>(args)...)};
    launch({name, reinterpret_cast<const void *>(kernel), grid, block, shared_bytes, stream,
            &kernel_call<P...>::run, &call});
}

} // namespace emu

/* A kernel name holding a template argument list with commas must be wrapped in parentheses. */
#define CUDA_LAUNCH(kernel, grid, block, shared_bytes, stream, ...)                              \
    emu::launch_kernel(#kernel, kernel, (grid), (block), (shared_bytes), (stream), ##__VA_ARGS__)

#define CUDA_DYNAMIC_SHARED(type, name) type *const name = reinterpret_cast<type *>(emu::dynamic_shared)

#endif
