/* test_emu_runtime.cpp - the emulated runtime API: devices and their absence, an old driver,
 * memory accounting and out-of-memory, checked copies, streams, events and pinned memory.
 * Each test runs in its own process, so setting the emulator's environment variables is local. */
#include "emu_test.h"

#include <cstdlib>
#include <vector>

namespace {

TEST(test_emulator_reports_one_device_with_its_properties)
{
    int count = -1, device = -1;
    CHECK(cudaGetDeviceCount(&count) == cudaSuccess && count == 1);
    CHECK(cudaSetDevice(0) == cudaSuccess && cudaGetDevice(&device) == cudaSuccess && device == 0);
    CHECK(cudaSetDevice(1) == cudaErrorInvalidDevice);
    cudaDeviceProp prop;
    CHECK(cudaGetDeviceProperties(&prop, 0) == cudaSuccess);
    CHECK_MSG(strcmp(prop.name, "ggtk CUDA emulator") == 0, "name %s", prop.name);
    CHECK(prop.major == 8 && prop.minor == 0 && prop.warpSize == 32 && prop.maxThreadsPerBlock == 1024);
    CHECK(prop.totalGlobalMem == (static_cast<size_t>(8) << 30));
    CHECK(prop.sharedMemPerBlock == 48 * 1024 && prop.sharedMemPerBlockOptin == 163 * 1024);
    int value = 0;
    CHECK(cudaDeviceGetAttribute(&value, cudaDevAttrComputeCapabilityMajor, 0) == cudaSuccess && value == 8);
    CHECK(cudaDeviceGetAttribute(&value, cudaDevAttrMultiProcessorCount, 0) == cudaSuccess &&
          value == prop.multiProcessorCount);
    setenv("INF_CUDA_EMU_CC", "9.0", 1);
    setenv("INF_CUDA_EMU_DEVICES", "2", 1);
    CHECK(cudaGetDeviceProperties(&prop, 1) == cudaSuccess);
    CHECK(prop.major == 9 && prop.minor == 0 && prop.sharedMemPerBlockOptin == 227 * 1024);
    int version = 0;
    CHECK(cudaRuntimeGetVersion(&version) == cudaSuccess && version >= 13000);
    CHECK(cudaDriverGetVersion(&version) == cudaSuccess && version >= 13000);
}

TEST(test_emulator_without_devices)
{
    setenv("INF_CUDA_EMU_DEVICES", "0", 1);
    int count = -1;
    CHECK(cudaGetDeviceCount(&count) == cudaErrorNoDevice && count == 0);
    CHECK(cudaGetLastError() == cudaErrorNoDevice);
    void *p = nullptr;
    CHECK(cudaMalloc(&p, 16) == cudaErrorNoDevice);
    CHECK(strcmp(cudaGetErrorString(cudaErrorNoDevice), "no CUDA-capable device is detected") == 0);
}

TEST(test_emulator_with_a_driver_too_old)
{
    setenv("INF_CUDA_EMU_FAIL", "driver", 1);
    int count = -1;
    cudaError_t st = cudaGetDeviceCount(&count);
    CHECK(st == cudaErrorInsufficientDriver && count == 0);
    CHECK(strcmp(cudaGetErrorString(st), "CUDA driver version is insufficient for CUDA runtime version") == 0);
    cudaStream_t s;
    CHECK(cudaStreamCreate(&s) == cudaErrorInsufficientDriver);
    cublasHandle_t h;
    CHECK(cublasCreate(&h) == CUBLAS_STATUS_NOT_INITIALIZED);
    int version = 0;
    CHECK(cudaDriverGetVersion(&version) == cudaSuccess && version < 13000);
}

TEST(test_emulator_out_of_memory_and_accounting)
{
    setenv("INF_CUDA_EMU_MEMORY", "1048576", 1);
    size_t free_bytes = 0, total = 0;
    CHECK(cudaMemGetInfo(&free_bytes, &total) == cudaSuccess && total == 1048576 && free_bytes == total);
    void *a = nullptr, *b = nullptr, *c = nullptr;
    CHECK(cudaMalloc(&a, 600000) == cudaSuccess && a != nullptr);
    CHECK(cudaMemGetInfo(&free_bytes, &total) == cudaSuccess && free_bytes <= 1048576 - 600000);
    CHECK(cudaMalloc(&b, 600000) == cudaErrorMemoryAllocation && b == nullptr);
    CHECK(cudaGetLastError() == cudaErrorMemoryAllocation);
    CHECK(strcmp(cudaGetErrorString(cudaErrorMemoryAllocation), "out of memory") == 0);
    CHECK(cudaMalloc(&c, 400000) == cudaSuccess);
    CHECK(cudaFree(a) == cudaSuccess);
    CHECK(cudaMalloc(&b, 600000) == cudaSuccess);
    CHECK(cudaFree(a) == cudaErrorInvalidValue); /* twice */
    CHECK(cudaFree(nullptr) == cudaSuccess);
    CHECK(cudaFree(b) == cudaSuccess && cudaFree(c) == cudaSuccess);
    CHECK(cudaMemGetInfo(&free_bytes, &total) == cudaSuccess && free_bytes == total);
    /* New device memory reads as NaN until written. */
    float *f = nullptr;
    CHECK(cudaMalloc(reinterpret_cast<void **>(&f), sizeof(float)) == cudaSuccess && *f != *f);
}

TEST(test_emulator_copies_are_checked_against_allocations)
{
    std::vector<float> host(100, 1.0f), back(100, 0.0f);
    float *d = nullptr;
    CHECK(cudaMalloc(reinterpret_cast<void **>(&d), 100 * sizeof(float)) == cudaSuccess);
    CHECK(cudaMemcpy(d, host.data(), 100 * sizeof(float), cudaMemcpyHostToDevice) == cudaSuccess);
    CHECK(cudaMemcpy(d + 1, host.data(), 100 * sizeof(float), cudaMemcpyHostToDevice) == cudaErrorInvalidValue);
    CHECK(cudaMemcpy(host.data(), d, 4, cudaMemcpyHostToDevice) == cudaErrorInvalidValue); /* swapped */
    CHECK(cudaMemcpy(back.data(), d, 100 * sizeof(float), cudaMemcpyDeviceToHost) == cudaSuccess);
    CHECK(back[99] == 1.0f);
    CHECK(cudaMemcpy(d + 50, d, 50 * sizeof(float), cudaMemcpyDeviceToDevice) == cudaSuccess);
    CHECK(cudaMemcpy(back.data(), d, 4, cudaMemcpyDefault) == cudaSuccess);
    CHECK(cudaMemsetAsync(d, 0, 100 * sizeof(float), 0) == cudaSuccess);
    CHECK(cudaMemset(d, 0, 101 * sizeof(float)) == cudaErrorInvalidValue);
    CHECK(cudaMemcpy(back.data(), d, 100 * sizeof(float), cudaMemcpyDeviceToHost) == cudaSuccess && back[7] == 0.0f);
    /* Two rows of 3 floats out of a pitch of 10. */
    CHECK(cudaMemcpy2DAsync(d, 3 * sizeof(float), host.data(), 10 * sizeof(float), 3 * sizeof(float), 2,
                            cudaMemcpyHostToDevice, 0) == cudaSuccess);
    CHECK(cudaMemcpy2D(d, 2 * sizeof(float), host.data(), 10 * sizeof(float), 3 * sizeof(float), 2,
                       cudaMemcpyHostToDevice) == cudaErrorInvalidPitchValue);
    cudaFree(d);
}

TEST(test_emulator_streams_events_and_pinned_memory)
{
    cudaStream_t s;
    CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking) == cudaSuccess);
    cudaEvent_t start, stop, untimed;
    CHECK(cudaEventCreate(&start) == cudaSuccess && cudaEventCreate(&stop) == cudaSuccess);
    CHECK(cudaEventCreateWithFlags(&untimed, cudaEventDisableTiming) == cudaSuccess);
    float ms = -1.0f;
    CHECK(cudaEventElapsedTime(&ms, start, stop) == cudaErrorInvalidResourceHandle); /* not recorded */
    CHECK(cudaEventRecord(start, s) == cudaSuccess && cudaEventRecord(stop, s) == cudaSuccess);
    CHECK(cudaEventSynchronize(stop) == cudaSuccess);
    CHECK(cudaEventElapsedTime(&ms, start, stop) == cudaSuccess && ms >= 0.0f);
    CHECK(cudaEventRecord(untimed, s) == cudaSuccess);
    CHECK(cudaEventElapsedTime(&ms, start, untimed) == cudaErrorInvalidResourceHandle);
    CHECK(cudaStreamWaitEvent(s, stop, 0) == cudaSuccess);
    CHECK(cudaStreamSynchronize(s) == cudaSuccess && cudaDeviceSynchronize() == cudaSuccess);
    CHECK(cudaEventDestroy(start) == cudaSuccess && cudaEventDestroy(stop) == cudaSuccess &&
          cudaEventDestroy(untimed) == cudaSuccess);
    CHECK(cudaStreamDestroy(s) == cudaSuccess);
    CHECK(cudaStreamDestroy(s) == cudaErrorInvalidResourceHandle);

    void *pinned = nullptr;
    CHECK(cudaMallocHost(&pinned, 4096) == cudaSuccess && pinned);
    CHECK(cudaFree(pinned) == cudaErrorInvalidValue); /* not device memory */
    CHECK(cudaFreeHost(pinned) == cudaSuccess);
    std::vector<char> page(8192);
    CHECK(cudaHostRegister(page.data(), page.size(), cudaHostRegisterDefault) == cudaSuccess);
    CHECK(cudaHostRegister(page.data() + 100, 10, cudaHostRegisterDefault) == cudaErrorHostMemoryAlreadyRegistered);
    CHECK(cudaHostUnregister(page.data()) == cudaSuccess);
    CHECK(cudaHostUnregister(page.data()) == cudaErrorHostMemoryNotRegistered);
}

} // namespace
