/* emu_test.h - what the emulator's tests share: the harness of tests/test.h (a C header), the
 * emulated CUDA headers, and a way to check that a kernel is reported and aborted. */
#ifndef EMU_TEST_H
#define EMU_TEST_H

extern "C" {
#include "test.h"
}

#include "cuda_compat.cuh"

#include <string>

/* Runs `body` in a forked child and returns what the child wrote on stderr; `*aborted` says
 * whether it died of SIGABRT (the emulator's report of a broken kernel). */
std::string run_in_child(void (*body)(), bool *aborted);

/* Device copies of host arrays for the tests; each CHECKs nothing and returns NULL on failure. */
template <typename T> T *device_copy(const T *host, size_t n)
{
    void *d = nullptr;
    if (cudaMalloc(&d, n * sizeof(T)) != cudaSuccess)
        return nullptr;
    if (cudaMemcpy(d, host, n * sizeof(T), cudaMemcpyHostToDevice) != cudaSuccess)
        return nullptr;
    return static_cast<T *>(d);
}

#endif
