/* emu_memory.cpp - device and pinned memory of emu_runtime.h: allocation, copies, memsets.
 *
 * Device memory is host memory kept in a table of live allocations, so that copies and memsets
 * can be checked against it (a range outside every allocation is cudaErrorInvalidValue, which a
 * real GPU would report later as an illegal address, or not at all), and so that each device's
 * memory size bounds what cudaMalloc gives. Each allocation is mapped on its own with an
 * inaccessible page right after its (256-byte rounded) end, so that a kernel reading or writing
 * past it faults at once (emu_scheduler.cpp reports the fault), and freed memory stays reserved
 * but inaccessible for the next `quarantine_limit` frees, so that a use after free faults too. */
#include "emu_runtime.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <map>
#include <mutex>
#include <sys/mman.h>
#include <unistd.h>

namespace emu {

namespace {

enum region_kind { DEVICE, PINNED, REGISTERED };

struct region {
    size_t size;    /* as asked for: copies past it fail even inside the alignment padding */
    size_t charged; /* counted against the memory of `device` */
    region_kind kind;
    int device;
    void *map;      /* DEVICE: the mapping holding it, guard page included */
    size_t map_size;
};

std::mutex memory_mutex; /* guards everything below */
std::map<uintptr_t, region> regions; /* by start address; regions never overlap */
size_t device_bytes_live[max_devices]; /* by device */
constexpr size_t device_alignment = 256;
constexpr size_t quarantine_limit = 1024;

/* Mappings of freed device memory, oldest first: inaccessible, their pages given back. */
std::deque<std::pair<void *, size_t>> quarantine;

/* The region holding [p, p+size), or regions.end(). Caller holds memory_mutex. */
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

/* The region of `kind` that starts at p, or regions.end(): what a free or an unregister must be
 * given. Caller holds memory_mutex. */
std::map<uintptr_t, region>::iterator region_starting_at(const void *p, region_kind kind)
{
    auto it = regions.find(reinterpret_cast<uintptr_t>(p));
    return it != regions.end() && it->second.kind == kind ? it : regions.end();
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

/* Whether a copy of `count` bytes of `kind` may touch dst and src. */
bool copy_ok(void *dst, const void *src, size_t count, cudaMemcpyKind kind)
{
    std::lock_guard<std::mutex> lock(memory_mutex);
    switch (kind) {
    case cudaMemcpyHostToHost:
        return true;
    case cudaMemcpyHostToDevice:
        return is_device(dst, count) && !is_device(src, 1);
    case cudaMemcpyDeviceToHost:
        return is_device(src, count) && !is_device(dst, 1);
    case cudaMemcpyDeviceToDevice:
        return is_device(dst, count) && is_device(src, count);
    case cudaMemcpyDefault:
        /* Either side may be host memory, but a side starting in device memory must stay in it. */
        return (!is_device(dst, 1) || is_device(dst, count)) && (!is_device(src, 1) || is_device(src, count));
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
    std::lock_guard<std::mutex> lock(memory_mutex);
    regions[reinterpret_cast<uintptr_t>(p)] = region{size, 0, PINNED, -1, nullptr, 0};
    *ptr = p;
    return cudaSuccess;
}

/* `rounded` bytes ending right before an inaccessible page; NULL when out of memory. */
void *map_device(size_t rounded, void **map, size_t *map_size)
{
    size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
    size_t body = (rounded + page - 1) / page * page;
    *map_size = body + page;
    *map = mmap(nullptr, *map_size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (*map == MAP_FAILED)
        return nullptr;
    mprotect(static_cast<char *>(*map) + body, page, PROT_NONE);
    return static_cast<char *>(*map) + (body - rounded);
}


/* Returns `error`, recording it as the last error when it is one. */
cudaError_t result(cudaError_t error)
{
    return error == cudaSuccess ? error : set_error(error);
}

} // namespace

bool device_range_ok(const void *ptr, size_t size, bool host_ok)
{
    std::lock_guard<std::mutex> lock(memory_mutex);
    auto it = find_region(ptr, size);
    return it != regions.end() && (host_ok || it->second.kind == DEVICE);
}

/* Makes a freed allocation's mapping inaccessible (releasing its pages) and unmaps the oldest
 * one beyond the quarantine's size. Caller holds memory_mutex. */
static void retire_mapping(void *map, size_t size)
{
    mmap(map, size, PROT_NONE, MAP_FIXED | MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    quarantine.emplace_back(map, size);
    if (quarantine.size() > quarantine_limit) {
        munmap(quarantine.front().first, quarantine.front().second);
        quarantine.pop_front();
    }
}

const char *describe_address(const void *ptr)
{
    uintptr_t a = reinterpret_cast<uintptr_t>(ptr);
    for (const auto &freed : quarantine) {
        uintptr_t map = reinterpret_cast<uintptr_t>(freed.first);
        if (a >= map && a < map + freed.second)
            return "inside freed device memory";
    }
    for (const auto &entry : regions) {
        const region &r = entry.second;
        if (r.kind != DEVICE)
            continue;
        uintptr_t map = reinterpret_cast<uintptr_t>(r.map);
        if (a >= map && a < map + r.map_size)
            return "past the end of a device allocation";
    }
    return "outside every device allocation";
}

} // namespace emu

using emu::result;

cudaError_t cudaDeviceReset(void)
{
    cudaError_t init = emu::runtime_status();
    if (init != cudaSuccess)
        return result(init);
    std::lock_guard<std::mutex> lock(emu::memory_mutex);
    for (auto it = emu::regions.begin(); it != emu::regions.end();) {
        if (it->second.kind == emu::DEVICE && it->second.device == emu::current_device()) {
            emu::retire_mapping(it->second.map, it->second.map_size);
            it = emu::regions.erase(it);
        } else {
            ++it;
        }
    }
    emu::device_bytes_live[emu::current_device()] = 0;
    return cudaSuccess;
}

cudaError_t cudaMemGetInfo(size_t *free_bytes, size_t *total_bytes)
{
    cudaError_t init = emu::runtime_status();
    if (init != cudaSuccess)
        return result(init);
    if (!free_bytes || !total_bytes)
        return result(cudaErrorInvalidValue);
    std::lock_guard<std::mutex> lock(emu::memory_mutex);
    size_t total = emu::device_memory_size();
    *total_bytes = total;
    size_t live = emu::device_bytes_live[emu::current_device()];
    *free_bytes = live < total ? total - live : 0;
    return cudaSuccess;
}

cudaError_t cudaMalloc(void **ptr, size_t size)
{
    cudaError_t init = emu::runtime_status();
    if (init != cudaSuccess)
        return result(init);
    if (!ptr)
        return result(cudaErrorInvalidValue);
    *ptr = nullptr;
    if (size == 0)
        return cudaSuccess;
    size_t rounded = (size + emu::device_alignment - 1) / emu::device_alignment * emu::device_alignment;
    int device = emu::current_device();
    {
        std::lock_guard<std::mutex> lock(emu::memory_mutex);
        size_t &live = emu::device_bytes_live[device];
        if (rounded < size || rounded > emu::device_memory_size() - std::min(emu::device_memory_size(), live))
            return result(cudaErrorMemoryAllocation);
        live += rounded;
    }
    void *map;
    size_t map_size;
    void *p = emu::map_device(rounded, &map, &map_size);
    std::lock_guard<std::mutex> lock(emu::memory_mutex);
    if (!p) {
        emu::device_bytes_live[device] -= rounded;
        return result(cudaErrorMemoryAllocation);
    }
    const char *fill = getenv("INF_CUDA_EMU_FILL");
    if (!fill || strcmp(fill, "0") != 0)
        memset(p, 0xff, rounded);
    emu::regions[reinterpret_cast<uintptr_t>(p)] = emu::region{size, rounded, emu::DEVICE, device, map, map_size};
    *ptr = p;
    return cudaSuccess;
}

cudaError_t cudaFree(void *ptr)
{
    cudaError_t init = emu::runtime_status();
    if (init != cudaSuccess)
        return result(init);
    if (!ptr)
        return cudaSuccess;
    std::lock_guard<std::mutex> lock(emu::memory_mutex);
    auto it = emu::region_starting_at(ptr, emu::DEVICE);
    if (it == emu::regions.end())
        return result(cudaErrorInvalidValue);
    emu::device_bytes_live[it->second.device] -= it->second.charged;
    emu::retire_mapping(it->second.map, it->second.map_size);
    emu::regions.erase(it);
    return cudaSuccess;
}

cudaError_t cudaMallocAsync(void **ptr, size_t size, cudaStream_t stream)
{
    if (!emu::stream_valid(stream))
        return result(cudaErrorInvalidResourceHandle);
    return cudaMalloc(ptr, size);
}

cudaError_t cudaFreeAsync(void *ptr, cudaStream_t stream)
{
    if (!emu::stream_valid(stream))
        return result(cudaErrorInvalidResourceHandle);
    return cudaFree(ptr);
}

cudaError_t cudaPointerGetAttributes(cudaPointerAttributes *attributes, const void *ptr)
{
    cudaError_t init = emu::runtime_status();
    if (init != cudaSuccess)
        return result(init);
    if (!attributes)
        return result(cudaErrorInvalidValue);
    std::lock_guard<std::mutex> lock(emu::memory_mutex);
    auto it = emu::find_region(ptr, 1);
    attributes->device = it != emu::regions.end() && it->second.device >= 0 ? it->second.device : emu::current_device();
    attributes->type = cudaMemoryTypeUnregistered;
    attributes->devicePointer = nullptr;
    attributes->hostPointer = nullptr;
    if (it != emu::regions.end()) {
        bool device = it->second.kind == emu::DEVICE;
        attributes->type = device ? cudaMemoryTypeDevice : cudaMemoryTypeHost;
        attributes->devicePointer = const_cast<void *>(ptr);
        attributes->hostPointer = device ? nullptr : const_cast<void *>(ptr);
    }
    return cudaSuccess;
}

cudaError_t cudaMallocHost(void **ptr, size_t size)
{
    cudaError_t init = emu::runtime_status();
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
    cudaError_t init = emu::runtime_status();
    if (init != cudaSuccess)
        return result(init);
    if (!ptr)
        return cudaSuccess;
    std::lock_guard<std::mutex> lock(emu::memory_mutex);
    auto it = emu::region_starting_at(ptr, emu::PINNED);
    if (it == emu::regions.end())
        return result(cudaErrorInvalidValue);
    emu::regions.erase(it);
    free(ptr);
    return cudaSuccess;
}

cudaError_t cudaHostRegister(void *ptr, size_t size, unsigned int flags)
{
    (void)flags;
    cudaError_t init = emu::runtime_status();
    if (init != cudaSuccess)
        return result(init);
    if (!ptr || size == 0)
        return result(cudaErrorInvalidValue);
    std::lock_guard<std::mutex> lock(emu::memory_mutex);
    uintptr_t start = reinterpret_cast<uintptr_t>(ptr);
    if (emu::overlaps_any(start, size))
        return result(cudaErrorHostMemoryAlreadyRegistered);
    emu::regions[start] = emu::region{size, 0, emu::REGISTERED, -1, nullptr, 0};
    return cudaSuccess;
}

cudaError_t cudaHostUnregister(void *ptr)
{
    cudaError_t init = emu::runtime_status();
    if (init != cudaSuccess)
        return result(init);
    std::lock_guard<std::mutex> lock(emu::memory_mutex);
    auto it = emu::region_starting_at(ptr, emu::REGISTERED);
    if (it == emu::regions.end())
        return result(cudaErrorHostMemoryNotRegistered);
    emu::regions.erase(it);
    return cudaSuccess;
}

cudaError_t cudaMemcpyAsync(void *dst, const void *src, size_t count, cudaMemcpyKind kind, cudaStream_t stream)
{
    cudaError_t init = emu::runtime_status();
    if (init != cudaSuccess)
        return result(init);
    if (!emu::stream_valid(stream))
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
    cudaError_t init = emu::runtime_status();
    if (init != cudaSuccess)
        return result(init);
    if (!emu::stream_valid(stream))
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
    cudaError_t init = emu::runtime_status();
    if (init != cudaSuccess)
        return result(init);
    if (!emu::stream_valid(stream))
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

