/* emu_runtime.cpp - the CUDA runtime subset of emu_runtime.h on host memory.
 *
 * Device memory is aligned host memory kept in a table of live allocations, so that copies and
 * memsets can be checked against it (a range outside every allocation is cudaErrorInvalidValue,
 * which a real GPU would report later as an illegal address, or not at all), and so that the
 * emulated memory size bounds what cudaMalloc gives. All work is synchronous: streams and events
 * only have to be valid handles. */
#include "emu_launch.h"
#include "emu_runtime.h"

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>
#include <set>

struct CUstream_st {
    unsigned int flags;
};

struct CUevent_st {
    unsigned int flags;
    bool recorded;
    std::chrono::steady_clock::time_point when;
};

namespace emu {

namespace {

enum region_kind { DEVICE, PINNED, REGISTERED };

struct region {
    size_t size;    /* as asked for: copies past it fail even inside the alignment padding */
    size_t charged; /* counted against the device memory */
    region_kind kind;
};

std::mutex state_mutex;
std::map<uintptr_t, region> regions; /* by start address; regions never overlap */
size_t device_bytes_live;
std::set<cudaStream_t> streams;
std::set<cudaEvent_t> events;
thread_local cudaError_t last_error = cudaSuccess;
thread_local int current_device = 0;

constexpr size_t device_alignment = 256;

size_t env_size(const char *name, size_t fallback)
{
    const char *value = getenv(name);
    if (!value || !*value)
        return fallback;
    char *end;
    unsigned long long n = strtoull(value, &end, 0);
    return *end == '\0' ? static_cast<size_t>(n) : fallback;
}

bool driver_too_old()
{
    const char *fail = getenv("INF_CUDA_EMU_FAIL");
    return fail && strcmp(fail, "driver") == 0;
}

int device_count()
{
    return static_cast<int>(env_size("INF_CUDA_EMU_DEVICES", 1));
}

size_t memory_size()
{
    return env_size("INF_CUDA_EMU_MEMORY", static_cast<size_t>(8) << 30);
}

/* cudaSuccess when the runtime can talk to a device, else the error every call then returns. */
cudaError_t init_error()
{
    if (driver_too_old())
        return cudaErrorInsufficientDriver;
    if (device_count() <= 0)
        return cudaErrorNoDevice;
    return cudaSuccess;
}

/* Returns `error`, recording it as the last error when it is one. */
cudaError_t result(cudaError_t error)
{
    return error == cudaSuccess ? error : set_error(error);
}

/* The region holding [p, p+size), or regions.end(). Caller holds state_mutex. */
std::map<uintptr_t, region>::iterator find_region(const void *p, size_t size)
{
    uintptr_t start = reinterpret_cast<uintptr_t>(p);
    auto it = regions.upper_bound(start);
    if (it == regions.begin())
        return regions.end();
    --it;
    if (start - it->first > it->second.size || size > it->second.size - (start - it->first))
        return regions.end();
    return it;
}

bool is_device(const void *p, size_t size)
{
    auto it = find_region(p, size);
    return it != regions.end() && it->second.kind == DEVICE;
}

bool overlaps_any(uintptr_t start, size_t size)
{
    auto it = regions.lower_bound(start);
    if (it != regions.end() && it->first < start + size)
        return true;
    if (it == regions.begin())
        return false;
    --it;
    return it->first + it->second.size > start;
}

bool stream_ok(cudaStream_t stream)
{
    if (stream == nullptr || stream == cudaStreamLegacy || stream == cudaStreamPerThread)
        return true;
    std::lock_guard<std::mutex> lock(state_mutex);
    return streams.count(stream) != 0;
}

/* Whether a copy of `count` bytes of `kind` may touch dst and src. */
bool copy_ok(void *dst, const void *src, size_t count, cudaMemcpyKind kind)
{
    std::lock_guard<std::mutex> lock(state_mutex);
    switch (kind) {
    case cudaMemcpyHostToHost:
        return true;
    case cudaMemcpyHostToDevice:
        return is_device(dst, count) && !is_device(src, 1);
    case cudaMemcpyDeviceToHost:
        return is_device(src, count) && !is_device(dst, 1);
    case cudaMemcpyDeviceToDevice:
        return is_device(dst, count) && is_device(src, count);
    case cudaMemcpyDefault: {
        /* Either side may be host memory, but a device pointer must hold the whole range. */
        bool dst_dev = find_region(dst, 1) != regions.end() && find_region(dst, 1)->second.kind == DEVICE;
        bool src_dev = find_region(src, 1) != regions.end() && find_region(src, 1)->second.kind == DEVICE;
        return (!dst_dev || is_device(dst, count)) && (!src_dev || is_device(src, count));
    }
    }
    return false;
}

cudaError_t host_alloc(void **ptr, size_t size)
{
    if (!ptr)
        return cudaErrorInvalidValue;
    *ptr = nullptr;
    if (size == 0)
        return cudaSuccess;
    void *p = aligned_alloc(device_alignment, (size + device_alignment - 1) / device_alignment * device_alignment);
    if (!p)
        return cudaErrorMemoryAllocation;
    std::lock_guard<std::mutex> lock(state_mutex);
    regions[reinterpret_cast<uintptr_t>(p)] = region{size, 0, PINNED};
    *ptr = p;
    return cudaSuccess;
}

void fill_properties(cudaDeviceProp *p)
{
    memset(p, 0, sizeof *p);
    int major = 8, minor = 0;
    const char *cc = getenv("INF_CUDA_EMU_CC");
    if (cc && sscanf(cc, "%d.%d", &major, &minor) != 2) {
        major = 8;
        minor = 0;
    }
    snprintf(p->name, sizeof p->name, "ggtk CUDA emulator");
    memcpy(p->uuid.bytes, "ggtk-cuda-emu\0\0", sizeof p->uuid.bytes);
    p->totalGlobalMem = memory_size();
    p->major = major;
    p->minor = minor;
    /* Per-architecture limits of the usual data-centre / desktop chips (A100, RTX 30xx, RTX
     * 40xx, H100); the launch checks use them. */
    int cc10 = major * 10 + minor;
    if (cc10 >= 90) {
        p->multiProcessorCount = 132;
        p->sharedMemPerMultiprocessor = 233472;
        p->l2CacheSize = 50 << 20;
        p->maxThreadsPerMultiProcessor = 2048;
        p->maxBlocksPerMultiProcessor = 32;
        p->memoryBusWidth = 5120;
    } else if (cc10 == 86 || cc10 == 87 || cc10 == 89) {
        p->multiProcessorCount = cc10 == 89 ? 128 : 82;
        p->sharedMemPerMultiprocessor = 102400;
        p->l2CacheSize = cc10 == 89 ? 72 << 20 : 6 << 20;
        p->maxThreadsPerMultiProcessor = 1536;
        p->maxBlocksPerMultiProcessor = cc10 == 89 ? 24 : 16;
        p->memoryBusWidth = 384;
    } else if (cc10 < 80) {
        p->multiProcessorCount = 40;
        p->sharedMemPerMultiprocessor = 65536;
        p->l2CacheSize = 4 << 20;
        p->maxThreadsPerMultiProcessor = 1024;
        p->maxBlocksPerMultiProcessor = 16;
        p->memoryBusWidth = 256;
    } else {
        p->multiProcessorCount = 108;
        p->sharedMemPerMultiprocessor = 167936;
        p->l2CacheSize = 40 << 20;
        p->maxThreadsPerMultiProcessor = 2048;
        p->maxBlocksPerMultiProcessor = 32;
        p->memoryBusWidth = 5120;
    }
    p->reservedSharedMemPerBlock = 1024;
    p->sharedMemPerBlockOptin = p->sharedMemPerMultiprocessor - p->reservedSharedMemPerBlock;
    p->sharedMemPerBlock = 48 * 1024;
    p->regsPerBlock = 65536;
    p->regsPerMultiprocessor = 65536;
    p->warpSize = 32;
    p->memPitch = 2147483647;
    p->maxThreadsPerBlock = 1024;
    p->maxThreadsDim[0] = 1024;
    p->maxThreadsDim[1] = 1024;
    p->maxThreadsDim[2] = 64;
    p->maxGridSize[0] = 2147483647;
    p->maxGridSize[1] = 65535;
    p->maxGridSize[2] = 65535;
    p->totalConstMem = 65536;
    p->textureAlignment = 512;
    p->canMapHostMemory = 1;
    p->concurrentKernels = 1;
    p->asyncEngineCount = 2;
    p->unifiedAddressing = 1;
    p->managedMemory = 1;
    p->hostNativeAtomicSupported = 0;
    p->cooperativeLaunch = 1;
    p->hostRegisterSupported = 1;
    p->memoryPoolsSupported = 1;
}

} // namespace

cudaError_t set_error(cudaError_t error)
{
    last_error = error;
    return error;
}

const cudaDeviceProp &device_properties()
{
    static thread_local cudaDeviceProp prop;
    fill_properties(&prop);
    return prop;
}

bool device_range_ok(const void *ptr, size_t size, bool host_ok)
{
    std::lock_guard<std::mutex> lock(state_mutex);
    auto it = find_region(ptr, size);
    return it != regions.end() && (host_ok || it->second.kind == DEVICE);
}

bool stream_valid(cudaStream_t stream)
{
    return stream_ok(stream);
}

cudaError_t runtime_status()
{
    return init_error();
}

} // namespace emu

using emu::result;

const char *cudaGetErrorName(cudaError_t error)
{
    switch (error) {
#define INF_EMU_NAME(e)                                                                          \
    case e:                                                                                      \
        return #e;
        INF_EMU_NAME(cudaSuccess)
        INF_EMU_NAME(cudaErrorInvalidValue)
        INF_EMU_NAME(cudaErrorMemoryAllocation)
        INF_EMU_NAME(cudaErrorInitializationError)
        INF_EMU_NAME(cudaErrorInvalidConfiguration)
        INF_EMU_NAME(cudaErrorInvalidPitchValue)
        INF_EMU_NAME(cudaErrorInvalidSymbol)
        INF_EMU_NAME(cudaErrorInvalidDevicePointer)
        INF_EMU_NAME(cudaErrorInvalidMemcpyDirection)
        INF_EMU_NAME(cudaErrorInsufficientDriver)
        INF_EMU_NAME(cudaErrorInvalidDeviceFunction)
        INF_EMU_NAME(cudaErrorNoDevice)
        INF_EMU_NAME(cudaErrorInvalidDevice)
        INF_EMU_NAME(cudaErrorInvalidResourceHandle)
        INF_EMU_NAME(cudaErrorNotReady)
        INF_EMU_NAME(cudaErrorIllegalAddress)
        INF_EMU_NAME(cudaErrorLaunchOutOfResources)
        INF_EMU_NAME(cudaErrorHostMemoryAlreadyRegistered)
        INF_EMU_NAME(cudaErrorHostMemoryNotRegistered)
        INF_EMU_NAME(cudaErrorLaunchFailure)
        INF_EMU_NAME(cudaErrorNotSupported)
        INF_EMU_NAME(cudaErrorUnknown)
#undef INF_EMU_NAME
    }
    return "cudaErrorUnknown";
}

/* The texts of the real runtime, so that messages read the same with and without a GPU. */
const char *cudaGetErrorString(cudaError_t error)
{
    switch (error) {
    case cudaSuccess: return "no error";
    case cudaErrorInvalidValue: return "invalid argument";
    case cudaErrorMemoryAllocation: return "out of memory";
    case cudaErrorInitializationError: return "initialization error";
    case cudaErrorInvalidConfiguration: return "invalid configuration argument";
    case cudaErrorInvalidPitchValue: return "invalid pitch argument";
    case cudaErrorInvalidSymbol: return "invalid device symbol";
    case cudaErrorInvalidDevicePointer: return "invalid device pointer";
    case cudaErrorInvalidMemcpyDirection: return "invalid copy direction for memcpy";
    case cudaErrorInsufficientDriver: return "CUDA driver version is insufficient for CUDA runtime version";
    case cudaErrorInvalidDeviceFunction: return "invalid device function";
    case cudaErrorNoDevice: return "no CUDA-capable device is detected";
    case cudaErrorInvalidDevice: return "invalid device ordinal";
    case cudaErrorInvalidResourceHandle: return "invalid resource handle";
    case cudaErrorNotReady: return "device not ready";
    case cudaErrorIllegalAddress: return "an illegal memory access was encountered";
    case cudaErrorLaunchOutOfResources: return "too many resources requested for launch";
    case cudaErrorHostMemoryAlreadyRegistered: return "part or all of the requested memory range is already mapped";
    case cudaErrorHostMemoryNotRegistered: return "pointer does not correspond to a registered memory region";
    case cudaErrorLaunchFailure: return "unspecified launch failure";
    case cudaErrorNotSupported: return "operation not supported";
    case cudaErrorUnknown: return "unknown error";
    }
    return "unrecognized error code";
}

cudaError_t cudaGetLastError(void)
{
    cudaError_t error = emu::last_error;
    emu::last_error = cudaSuccess;
    return error;
}

cudaError_t cudaPeekAtLastError(void)
{
    return emu::last_error;
}

cudaError_t cudaGetDeviceCount(int *count)
{
    if (!count)
        return result(cudaErrorInvalidValue);
    *count = 0;
    cudaError_t init = emu::init_error();
    if (init != cudaSuccess)
        return result(init);
    *count = emu::device_count();
    return cudaSuccess;
}

cudaError_t cudaSetDevice(int device)
{
    cudaError_t init = emu::init_error();
    if (init != cudaSuccess)
        return result(init);
    if (device < 0 || device >= emu::device_count())
        return result(cudaErrorInvalidDevice);
    emu::current_device = device;
    return cudaSuccess;
}

cudaError_t cudaGetDevice(int *device)
{
    if (!device)
        return result(cudaErrorInvalidValue);
    cudaError_t init = emu::init_error();
    if (init != cudaSuccess)
        return result(init);
    *device = emu::current_device;
    return cudaSuccess;
}

cudaError_t cudaGetDeviceProperties(cudaDeviceProp *prop, int device)
{
    if (!prop)
        return result(cudaErrorInvalidValue);
    cudaError_t init = emu::init_error();
    if (init != cudaSuccess)
        return result(init);
    if (device < 0 || device >= emu::device_count())
        return result(cudaErrorInvalidDevice);
    *prop = emu::device_properties();
    return cudaSuccess;
}

cudaError_t cudaDeviceGetAttribute(int *value, cudaDeviceAttr attr, int device)
{
    cudaDeviceProp prop;
    cudaError_t error = cudaGetDeviceProperties(&prop, device);
    if (error != cudaSuccess)
        return error;
    if (!value)
        return result(cudaErrorInvalidValue);
    switch (attr) {
    case cudaDevAttrMaxThreadsPerBlock: *value = prop.maxThreadsPerBlock; break;
    case cudaDevAttrMaxBlockDimX: *value = prop.maxThreadsDim[0]; break;
    case cudaDevAttrMaxBlockDimY: *value = prop.maxThreadsDim[1]; break;
    case cudaDevAttrMaxBlockDimZ: *value = prop.maxThreadsDim[2]; break;
    case cudaDevAttrMaxGridDimX: *value = prop.maxGridSize[0]; break;
    case cudaDevAttrMaxGridDimY: *value = prop.maxGridSize[1]; break;
    case cudaDevAttrMaxGridDimZ: *value = prop.maxGridSize[2]; break;
    case cudaDevAttrMaxSharedMemoryPerBlock: *value = static_cast<int>(prop.sharedMemPerBlock); break;
    case cudaDevAttrTotalConstantMemory: *value = static_cast<int>(prop.totalConstMem); break;
    case cudaDevAttrWarpSize: *value = prop.warpSize; break;
    case cudaDevAttrMaxRegistersPerBlock: *value = prop.regsPerBlock; break;
    case cudaDevAttrClockRate: *value = 1410000; break;
    case cudaDevAttrMultiProcessorCount: *value = prop.multiProcessorCount; break;
    case cudaDevAttrConcurrentKernels: *value = prop.concurrentKernels; break;
    case cudaDevAttrPciBusId: *value = prop.pciBusID; break;
    case cudaDevAttrL2CacheSize: *value = prop.l2CacheSize; break;
    case cudaDevAttrMaxThreadsPerMultiProcessor: *value = prop.maxThreadsPerMultiProcessor; break;
    case cudaDevAttrUnifiedAddressing: *value = prop.unifiedAddressing; break;
    case cudaDevAttrComputeCapabilityMajor: *value = prop.major; break;
    case cudaDevAttrComputeCapabilityMinor: *value = prop.minor; break;
    case cudaDevAttrMaxSharedMemoryPerMultiprocessor: *value = static_cast<int>(prop.sharedMemPerMultiprocessor); break;
    case cudaDevAttrMaxSharedMemoryPerBlockOptin: *value = static_cast<int>(prop.sharedMemPerBlockOptin); break;
    case cudaDevAttrMaxBlocksPerMultiprocessor: *value = prop.maxBlocksPerMultiProcessor; break;
    case cudaDevAttrMemoryPoolsSupported: *value = prop.memoryPoolsSupported; break;
    default: return result(cudaErrorInvalidValue);
    }
    return cudaSuccess;
}

cudaError_t cudaDeviceSynchronize(void)
{
    return result(emu::init_error());
}

cudaError_t cudaDeviceReset(void)
{
    cudaError_t init = emu::init_error();
    if (init != cudaSuccess)
        return result(init);
    std::lock_guard<std::mutex> lock(emu::state_mutex);
    for (auto it = emu::regions.begin(); it != emu::regions.end();) {
        if (it->second.kind == emu::DEVICE) {
            free(reinterpret_cast<void *>(it->first));
            it = emu::regions.erase(it);
        } else {
            ++it;
        }
    }
    emu::device_bytes_live = 0;
    return cudaSuccess;
}

cudaError_t cudaSetDeviceFlags(unsigned int flags)
{
    (void)flags;
    return result(emu::init_error());
}

/* A driver "too old" reports CUDA 12.2; otherwise driver and runtime are both CUDA 13.0. */
cudaError_t cudaDriverGetVersion(int *version)
{
    if (!version)
        return result(cudaErrorInvalidValue);
    *version = emu::driver_too_old() ? 12020 : 13000;
    return cudaSuccess;
}

cudaError_t cudaRuntimeGetVersion(int *version)
{
    if (!version)
        return result(cudaErrorInvalidValue);
    *version = 13000;
    return cudaSuccess;
}

cudaError_t cudaMemGetInfo(size_t *free_bytes, size_t *total_bytes)
{
    cudaError_t init = emu::init_error();
    if (init != cudaSuccess)
        return result(init);
    if (!free_bytes || !total_bytes)
        return result(cudaErrorInvalidValue);
    std::lock_guard<std::mutex> lock(emu::state_mutex);
    size_t total = emu::memory_size();
    *total_bytes = total;
    *free_bytes = emu::device_bytes_live < total ? total - emu::device_bytes_live : 0;
    return cudaSuccess;
}

cudaError_t cudaMalloc(void **ptr, size_t size)
{
    cudaError_t init = emu::init_error();
    if (init != cudaSuccess)
        return result(init);
    if (!ptr)
        return result(cudaErrorInvalidValue);
    *ptr = nullptr;
    if (size == 0)
        return cudaSuccess;
    size_t rounded = (size + emu::device_alignment - 1) / emu::device_alignment * emu::device_alignment;
    {
        std::lock_guard<std::mutex> lock(emu::state_mutex);
        if (rounded < size || rounded > emu::memory_size() - std::min(emu::memory_size(), emu::device_bytes_live))
            return result(cudaErrorMemoryAllocation);
        emu::device_bytes_live += rounded;
    }
    void *p = aligned_alloc(emu::device_alignment, rounded);
    std::lock_guard<std::mutex> lock(emu::state_mutex);
    if (!p) {
        emu::device_bytes_live -= rounded;
        return result(cudaErrorMemoryAllocation);
    }
    const char *fill = getenv("INF_CUDA_EMU_FILL");
    if (!fill || strcmp(fill, "0") != 0)
        memset(p, 0xff, rounded);
    emu::regions[reinterpret_cast<uintptr_t>(p)] = emu::region{size, rounded, emu::DEVICE};
    *ptr = p;
    return cudaSuccess;
}

cudaError_t cudaFree(void *ptr)
{
    cudaError_t init = emu::init_error();
    if (init != cudaSuccess)
        return result(init);
    if (!ptr)
        return cudaSuccess;
    std::lock_guard<std::mutex> lock(emu::state_mutex);
    auto it = emu::regions.find(reinterpret_cast<uintptr_t>(ptr));
    if (it == emu::regions.end() || it->second.kind != emu::DEVICE)
        return result(cudaErrorInvalidValue);
    emu::device_bytes_live -= it->second.charged;
    emu::regions.erase(it);
    free(ptr);
    return cudaSuccess;
}

cudaError_t cudaMallocHost(void **ptr, size_t size)
{
    cudaError_t init = emu::init_error();
    if (init != cudaSuccess)
        return result(init);
    return result(emu::host_alloc(ptr, size));
}

cudaError_t cudaHostAlloc(void **ptr, size_t size, unsigned int flags)
{
    (void)flags;
    return cudaMallocHost(ptr, size);
}

cudaError_t cudaFreeHost(void *ptr)
{
    cudaError_t init = emu::init_error();
    if (init != cudaSuccess)
        return result(init);
    if (!ptr)
        return cudaSuccess;
    std::lock_guard<std::mutex> lock(emu::state_mutex);
    auto it = emu::regions.find(reinterpret_cast<uintptr_t>(ptr));
    if (it == emu::regions.end() || it->second.kind != emu::PINNED)
        return result(cudaErrorInvalidValue);
    emu::regions.erase(it);
    free(ptr);
    return cudaSuccess;
}

cudaError_t cudaHostRegister(void *ptr, size_t size, unsigned int flags)
{
    (void)flags;
    cudaError_t init = emu::init_error();
    if (init != cudaSuccess)
        return result(init);
    if (!ptr || size == 0)
        return result(cudaErrorInvalidValue);
    std::lock_guard<std::mutex> lock(emu::state_mutex);
    uintptr_t start = reinterpret_cast<uintptr_t>(ptr);
    if (emu::overlaps_any(start, size))
        return result(cudaErrorHostMemoryAlreadyRegistered);
    emu::regions[start] = emu::region{size, 0, emu::REGISTERED};
    return cudaSuccess;
}

cudaError_t cudaHostUnregister(void *ptr)
{
    cudaError_t init = emu::init_error();
    if (init != cudaSuccess)
        return result(init);
    std::lock_guard<std::mutex> lock(emu::state_mutex);
    auto it = emu::regions.find(reinterpret_cast<uintptr_t>(ptr));
    if (it == emu::regions.end() || it->second.kind != emu::REGISTERED)
        return result(cudaErrorHostMemoryNotRegistered);
    emu::regions.erase(it);
    return cudaSuccess;
}

cudaError_t cudaMemcpyAsync(void *dst, const void *src, size_t count, cudaMemcpyKind kind, cudaStream_t stream)
{
    cudaError_t init = emu::init_error();
    if (init != cudaSuccess)
        return result(init);
    if (!emu::stream_ok(stream))
        return result(cudaErrorInvalidResourceHandle);
    if (kind < cudaMemcpyHostToHost || kind > cudaMemcpyDefault)
        return result(cudaErrorInvalidMemcpyDirection);
    if (count == 0)
        return cudaSuccess;
    if (!dst || !src || !emu::copy_ok(dst, src, count, kind))
        return result(cudaErrorInvalidValue);
    memmove(dst, src, count);
    return cudaSuccess;
}

cudaError_t cudaMemcpy(void *dst, const void *src, size_t count, cudaMemcpyKind kind)
{
    return cudaMemcpyAsync(dst, src, count, kind, nullptr);
}

cudaError_t cudaMemcpy2DAsync(void *dst, size_t dpitch, const void *src, size_t spitch, size_t width,
                              size_t height, cudaMemcpyKind kind, cudaStream_t stream)
{
    cudaError_t init = emu::init_error();
    if (init != cudaSuccess)
        return result(init);
    if (!emu::stream_ok(stream))
        return result(cudaErrorInvalidResourceHandle);
    if (kind < cudaMemcpyHostToHost || kind > cudaMemcpyDefault)
        return result(cudaErrorInvalidMemcpyDirection);
    if (width == 0 || height == 0)
        return cudaSuccess;
    if (width > dpitch || width > spitch)
        return result(cudaErrorInvalidPitchValue);
    if (!dst || !src || !emu::copy_ok(dst, src, 0, kind) ||
        !emu::copy_ok(static_cast<char *>(dst) + dpitch * (height - 1), static_cast<const char *>(src) + spitch * (height - 1),
                      width, kind))
        return result(cudaErrorInvalidValue);
    for (size_t row = 0; row < height; row++)
        memmove(static_cast<char *>(dst) + row * dpitch, static_cast<const char *>(src) + row * spitch, width);
    return cudaSuccess;
}

cudaError_t cudaMemcpy2D(void *dst, size_t dpitch, const void *src, size_t spitch, size_t width, size_t height,
                         cudaMemcpyKind kind)
{
    return cudaMemcpy2DAsync(dst, dpitch, src, spitch, width, height, kind, nullptr);
}

cudaError_t cudaMemsetAsync(void *ptr, int value, size_t count, cudaStream_t stream)
{
    cudaError_t init = emu::init_error();
    if (init != cudaSuccess)
        return result(init);
    if (!emu::stream_ok(stream))
        return result(cudaErrorInvalidResourceHandle);
    if (count == 0)
        return cudaSuccess;
    if (!emu::device_range_ok(ptr, count, false))
        return result(cudaErrorInvalidValue);
    memset(ptr, value, count);
    return cudaSuccess;
}

cudaError_t cudaMemset(void *ptr, int value, size_t count)
{
    return cudaMemsetAsync(ptr, value, count, nullptr);
}

cudaError_t cudaStreamCreateWithFlags(cudaStream_t *stream, unsigned int flags)
{
    cudaError_t init = emu::init_error();
    if (init != cudaSuccess)
        return result(init);
    if (!stream || (flags & ~static_cast<unsigned int>(cudaStreamNonBlocking)) != 0)
        return result(cudaErrorInvalidValue);
    *stream = new CUstream_st{flags};
    std::lock_guard<std::mutex> lock(emu::state_mutex);
    emu::streams.insert(*stream);
    return cudaSuccess;
}

cudaError_t cudaStreamCreate(cudaStream_t *stream)
{
    return cudaStreamCreateWithFlags(stream, cudaStreamDefault);
}

cudaError_t cudaStreamDestroy(cudaStream_t stream)
{
    cudaError_t init = emu::init_error();
    if (init != cudaSuccess)
        return result(init);
    std::lock_guard<std::mutex> lock(emu::state_mutex);
    if (emu::streams.erase(stream) == 0)
        return result(cudaErrorInvalidResourceHandle);
    delete stream;
    return cudaSuccess;
}

cudaError_t cudaStreamSynchronize(cudaStream_t stream)
{
    cudaError_t init = emu::init_error();
    if (init != cudaSuccess)
        return result(init);
    return result(emu::stream_ok(stream) ? cudaSuccess : cudaErrorInvalidResourceHandle);
}

cudaError_t cudaStreamQuery(cudaStream_t stream)
{
    return cudaStreamSynchronize(stream);
}

namespace emu {
namespace {
bool event_ok(cudaEvent_t event)
{
    std::lock_guard<std::mutex> lock(state_mutex);
    return events.count(event) != 0;
}
} // namespace
} // namespace emu

cudaError_t cudaStreamWaitEvent(cudaStream_t stream, cudaEvent_t event, unsigned int flags)
{
    (void)flags;
    cudaError_t init = emu::init_error();
    if (init != cudaSuccess)
        return result(init);
    if (!emu::stream_ok(stream) || !emu::event_ok(event))
        return result(cudaErrorInvalidResourceHandle);
    return cudaSuccess;
}

cudaError_t cudaEventCreateWithFlags(cudaEvent_t *event, unsigned int flags)
{
    cudaError_t init = emu::init_error();
    if (init != cudaSuccess)
        return result(init);
    if (!event)
        return result(cudaErrorInvalidValue);
    *event = new CUevent_st{flags, false, {}};
    std::lock_guard<std::mutex> lock(emu::state_mutex);
    emu::events.insert(*event);
    return cudaSuccess;
}

cudaError_t cudaEventCreate(cudaEvent_t *event)
{
    return cudaEventCreateWithFlags(event, cudaEventDefault);
}

cudaError_t cudaEventDestroy(cudaEvent_t event)
{
    cudaError_t init = emu::init_error();
    if (init != cudaSuccess)
        return result(init);
    std::lock_guard<std::mutex> lock(emu::state_mutex);
    if (emu::events.erase(event) == 0)
        return result(cudaErrorInvalidResourceHandle);
    delete event;
    return cudaSuccess;
}

cudaError_t cudaEventRecord(cudaEvent_t event, cudaStream_t stream)
{
    cudaError_t init = emu::init_error();
    if (init != cudaSuccess)
        return result(init);
    if (!emu::event_ok(event) || !emu::stream_ok(stream))
        return result(cudaErrorInvalidResourceHandle);
    event->recorded = true;
    event->when = std::chrono::steady_clock::now();
    return cudaSuccess;
}

cudaError_t cudaEventSynchronize(cudaEvent_t event)
{
    cudaError_t init = emu::init_error();
    if (init != cudaSuccess)
        return result(init);
    return result(emu::event_ok(event) ? cudaSuccess : cudaErrorInvalidResourceHandle);
}

cudaError_t cudaEventQuery(cudaEvent_t event)
{
    return cudaEventSynchronize(event);
}

cudaError_t cudaEventElapsedTime(float *ms, cudaEvent_t start, cudaEvent_t end)
{
    cudaError_t init = emu::init_error();
    if (init != cudaSuccess)
        return result(init);
    if (!ms)
        return result(cudaErrorInvalidValue);
    if (!emu::event_ok(start) || !emu::event_ok(end))
        return result(cudaErrorInvalidResourceHandle);
    if (((start->flags | end->flags) & cudaEventDisableTiming) || !start->recorded || !end->recorded)
        return result(cudaErrorInvalidResourceHandle);
    *ms = std::chrono::duration<float, std::milli>(end->when - start->when).count();
    return cudaSuccess;
}

cudaError_t cudaFuncSetAttribute(const void *func, cudaFuncAttribute attr, int value)
{
    cudaError_t init = emu::init_error();
    if (init != cudaSuccess)
        return result(init);
    if (!func)
        return result(cudaErrorInvalidDeviceFunction);
    if (attr == cudaFuncAttributeMaxDynamicSharedMemorySize) {
        if (value < 0 || static_cast<size_t>(value) > emu::device_properties().sharedMemPerBlockOptin)
            return result(cudaErrorInvalidValue);
        emu::set_kernel_shared_limit(func, value);
        return cudaSuccess;
    }
    if (attr == cudaFuncAttributePreferredSharedMemoryCarveout)
        return result(value >= -1 && value <= 100 ? cudaSuccess : cudaErrorInvalidValue);
    return result(cudaErrorInvalidValue);
}
