/* emu_runtime.h - the CUDA runtime API subset the backend calls, implemented on host memory by
 * emu_runtime.cpp. Names, signatures and numeric values follow the real cuda_runtime_api.h and
 * driver_types.h (CUDA 13), so that code written against this header compiles unchanged with
 * nvcc. "Device" memory is host memory the emulator tracks, so that copies out of bounds, frees
 * of unknown pointers and allocations past the emulated memory size fail as they would on a GPU.
 *
 * Environment (read at each call, so that a test can change it between calls):
 *   INF_CUDA_EMU_DEVICES  number of devices, default 1; 0 makes cudaGetDeviceCount fail with
 *                         cudaErrorNoDevice
 *   INF_CUDA_EMU_FAIL     "driver": every call fails with cudaErrorInsufficientDriver, as with
 *                         a driver older than the runtime
 *   INF_CUDA_EMU_MEMORY   device memory in bytes, default 8 GiB
 *   INF_CUDA_EMU_CC       compute capability "major.minor", default "8.0"
 *   INF_CUDA_EMU_FILL     "0" leaves new device memory as malloc gives it; by default every byte
 *                         is 0xff (a float NaN) so that reads of unwritten memory show */
#ifndef INF_CUDA_EMU_RUNTIME_H
#define INF_CUDA_EMU_RUNTIME_H

#include <cstddef>
#include <cstdint>

enum cudaError {
    cudaSuccess = 0,
    cudaErrorInvalidValue = 1,
    cudaErrorMemoryAllocation = 2,
    cudaErrorInitializationError = 3,
    cudaErrorInvalidConfiguration = 9,
    cudaErrorInvalidPitchValue = 12,
    cudaErrorInvalidSymbol = 13,
    cudaErrorInvalidDevicePointer = 17,
    cudaErrorInvalidMemcpyDirection = 21,
    cudaErrorInsufficientDriver = 35,
    cudaErrorInvalidDeviceFunction = 98,
    cudaErrorNoDevice = 100,
    cudaErrorInvalidDevice = 101,
    cudaErrorInvalidResourceHandle = 400,
    cudaErrorNotReady = 600,
    cudaErrorIllegalAddress = 700,
    cudaErrorLaunchOutOfResources = 701,
    cudaErrorHostMemoryAlreadyRegistered = 712,
    cudaErrorHostMemoryNotRegistered = 713,
    cudaErrorLaunchFailure = 719,
    cudaErrorNotSupported = 801,
    cudaErrorUnknown = 999,
};
typedef enum cudaError cudaError_t;

enum cudaMemcpyKind {
    cudaMemcpyHostToHost = 0,
    cudaMemcpyHostToDevice = 1,
    cudaMemcpyDeviceToHost = 2,
    cudaMemcpyDeviceToDevice = 3,
    cudaMemcpyDefault = 4,
};

enum cudaDeviceAttr {
    cudaDevAttrMaxThreadsPerBlock = 1,
    cudaDevAttrMaxBlockDimX = 2,
    cudaDevAttrMaxBlockDimY = 3,
    cudaDevAttrMaxBlockDimZ = 4,
    cudaDevAttrMaxGridDimX = 5,
    cudaDevAttrMaxGridDimY = 6,
    cudaDevAttrMaxGridDimZ = 7,
    cudaDevAttrMaxSharedMemoryPerBlock = 8,
    cudaDevAttrTotalConstantMemory = 9,
    cudaDevAttrWarpSize = 10,
    cudaDevAttrMaxRegistersPerBlock = 12,
    cudaDevAttrClockRate = 13,
    cudaDevAttrMultiProcessorCount = 16,
    cudaDevAttrConcurrentKernels = 31,
    cudaDevAttrPciBusId = 33,
    cudaDevAttrL2CacheSize = 38,
    cudaDevAttrMaxThreadsPerMultiProcessor = 39,
    cudaDevAttrUnifiedAddressing = 41,
    cudaDevAttrComputeCapabilityMajor = 75,
    cudaDevAttrComputeCapabilityMinor = 76,
    cudaDevAttrMaxSharedMemoryPerMultiprocessor = 81,
    cudaDevAttrMaxSharedMemoryPerBlockOptin = 97,
    cudaDevAttrMaxBlocksPerMultiprocessor = 106,
    cudaDevAttrMemoryPoolsSupported = 115,
};

enum cudaFuncAttribute {
    cudaFuncAttributeMaxDynamicSharedMemorySize = 8,
    cudaFuncAttributePreferredSharedMemoryCarveout = 9,
};

#define cudaStreamDefault 0x00
#define cudaStreamNonBlocking 0x01
#define cudaEventDefault 0x00
#define cudaEventBlockingSync 0x01
#define cudaEventDisableTiming 0x02
#define cudaHostAllocDefault 0x00
#define cudaHostAllocPortable 0x01
#define cudaHostAllocMapped 0x02
#define cudaHostAllocWriteCombined 0x04
#define cudaHostRegisterDefault 0x00
#define cudaHostRegisterPortable 0x01
#define cudaHostRegisterMapped 0x02
#define cudaHostRegisterIoMemory 0x04
#define cudaHostRegisterReadOnly 0x08
#define cudaDeviceScheduleAuto 0x00
#define cudaDeviceScheduleSpin 0x01
#define cudaDeviceScheduleYield 0x02
#define cudaDeviceScheduleBlockingSync 0x04

struct CUstream_st;
struct CUevent_st;
typedef struct CUstream_st *cudaStream_t;
typedef struct CUevent_st *cudaEvent_t;
#define cudaStreamLegacy ((cudaStream_t)0x1)
#define cudaStreamPerThread ((cudaStream_t)0x2)

struct cudaUUID_t {
    char bytes[16];
};

/* The fields of the real cudaDeviceProp a backend reads; the rest of the real struct (textures,
 * surfaces, NUMA) is absent, so code that reads those fields does not compile here. */
struct cudaDeviceProp {
    char name[256];
    cudaUUID_t uuid;
    size_t totalGlobalMem;
    size_t sharedMemPerBlock;
    int regsPerBlock;
    int warpSize;
    size_t memPitch;
    int maxThreadsPerBlock;
    int maxThreadsDim[3];
    int maxGridSize[3];
    size_t totalConstMem;
    int major;
    int minor;
    size_t textureAlignment;
    int multiProcessorCount;
    int integrated;
    int canMapHostMemory;
    int concurrentKernels;
    int ECCEnabled;
    int pciBusID;
    int pciDeviceID;
    int pciDomainID;
    int asyncEngineCount;
    int unifiedAddressing;
    int memoryBusWidth;
    int l2CacheSize;
    int persistingL2CacheMaxSize;
    int maxThreadsPerMultiProcessor;
    size_t sharedMemPerMultiprocessor;
    int regsPerMultiprocessor;
    int managedMemory;
    int isMultiGpuBoard;
    int hostNativeAtomicSupported;
    int pageableMemoryAccess;
    int concurrentManagedAccess;
    int cooperativeLaunch;
    size_t sharedMemPerBlockOptin;
    int maxBlocksPerMultiProcessor;
    size_t reservedSharedMemPerBlock;
    int hostRegisterSupported;
    int memoryPoolsSupported;
};

/* Errors: every failing call also records its error as the "last error". */
const char *cudaGetErrorString(cudaError_t error);
const char *cudaGetErrorName(cudaError_t error);
cudaError_t cudaGetLastError(void);
cudaError_t cudaPeekAtLastError(void);

/* Devices. */
cudaError_t cudaGetDeviceCount(int *count);
cudaError_t cudaSetDevice(int device);
cudaError_t cudaGetDevice(int *device);
cudaError_t cudaGetDeviceProperties(cudaDeviceProp *prop, int device);
cudaError_t cudaDeviceGetAttribute(int *value, cudaDeviceAttr attr, int device);
cudaError_t cudaDeviceSynchronize(void);
cudaError_t cudaDeviceReset(void);
cudaError_t cudaSetDeviceFlags(unsigned int flags);
cudaError_t cudaDriverGetVersion(int *version);
cudaError_t cudaRuntimeGetVersion(int *version);
cudaError_t cudaMemGetInfo(size_t *free_bytes, size_t *total_bytes);

/* Memory. */
cudaError_t cudaMalloc(void **ptr, size_t size);
cudaError_t cudaFree(void *ptr);
cudaError_t cudaMallocHost(void **ptr, size_t size);
cudaError_t cudaHostAlloc(void **ptr, size_t size, unsigned int flags);
cudaError_t cudaFreeHost(void *ptr);
cudaError_t cudaHostRegister(void *ptr, size_t size, unsigned int flags);
cudaError_t cudaHostUnregister(void *ptr);
cudaError_t cudaMemcpy(void *dst, const void *src, size_t count, cudaMemcpyKind kind);
cudaError_t cudaMemcpyAsync(void *dst, const void *src, size_t count, cudaMemcpyKind kind,
                            cudaStream_t stream = 0);
cudaError_t cudaMemcpy2D(void *dst, size_t dpitch, const void *src, size_t spitch, size_t width,
                         size_t height, cudaMemcpyKind kind);
cudaError_t cudaMemcpy2DAsync(void *dst, size_t dpitch, const void *src, size_t spitch,
                              size_t width, size_t height, cudaMemcpyKind kind,
                              cudaStream_t stream = 0);
cudaError_t cudaMemset(void *ptr, int value, size_t count);
cudaError_t cudaMemsetAsync(void *ptr, int value, size_t count, cudaStream_t stream = 0);

/* Streams: work runs when it is enqueued, so every stream is always idle. */
cudaError_t cudaStreamCreate(cudaStream_t *stream);
cudaError_t cudaStreamCreateWithFlags(cudaStream_t *stream, unsigned int flags);
cudaError_t cudaStreamDestroy(cudaStream_t stream);
cudaError_t cudaStreamSynchronize(cudaStream_t stream);
cudaError_t cudaStreamQuery(cudaStream_t stream);
cudaError_t cudaStreamWaitEvent(cudaStream_t stream, cudaEvent_t event, unsigned int flags = 0);

/* Events: recording one takes the host time. */
cudaError_t cudaEventCreate(cudaEvent_t *event);
cudaError_t cudaEventCreateWithFlags(cudaEvent_t *event, unsigned int flags);
cudaError_t cudaEventDestroy(cudaEvent_t event);
cudaError_t cudaEventRecord(cudaEvent_t event, cudaStream_t stream = 0);
cudaError_t cudaEventSynchronize(cudaEvent_t event);
cudaError_t cudaEventQuery(cudaEvent_t event);
cudaError_t cudaEventElapsedTime(float *ms, cudaEvent_t start, cudaEvent_t end);

/* Kernel attributes: the maximum dynamic shared memory is recorded and checked at launch. */
cudaError_t cudaFuncSetAttribute(const void *func, cudaFuncAttribute attr, int value);
template <class T> cudaError_t cudaFuncSetAttribute(T *func, cudaFuncAttribute attr, int value)
{
    return cudaFuncSetAttribute(reinterpret_cast<const void *>(func), attr, value);
}

namespace emu {

/* The emulated device's properties (for the launch checks and cuBLAS). */
const cudaDeviceProp &device_properties();

/* Whether [ptr, ptr + size) lies inside one live cudaMalloc allocation, or inside memory a
 * device may read (cudaMallocHost / cudaHostRegister) when `host_ok`. */
bool device_range_ok(const void *ptr, size_t size, bool host_ok);

/* Records `error` as the last error and returns it. */
cudaError_t set_error(cudaError_t error);

/* cudaSuccess when a device is usable, else the error every call returns (no device, old
 * driver). */
cudaError_t runtime_status();

/* Whether `stream` is the default stream or one created and not yet destroyed. */
bool stream_valid(cudaStream_t stream);

} // namespace emu

#endif
