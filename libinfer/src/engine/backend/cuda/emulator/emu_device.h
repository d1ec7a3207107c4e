/* emu_device.h - the device-code language of cuda_compat.cuh for the host compiler: qualifiers,
 * vector types, thread indices, barriers, warp shuffles, atomics, __dp4a and the maths names.
 *
 * A thread block runs on one OS thread, its threads as fibers (emu_scheduler.cpp). The index
 * variables below are globals the scheduler rewrites at each switch, so a kernel reads them as
 * ordinary variables; every call that may switch (barriers, shuffles) is out of line, so the
 * compiler reloads them after it. Atomics need no locking: only one fiber runs at a time and none
 * switches inside an atomic. */
#ifndef INF_CUDA_EMU_DEVICE_H
#define INF_CUDA_EMU_DEVICE_H

#include <cmath>
#include <cstdint>
#include <cstring>
#include <type_traits>

#include "emu_half.h"

#define __global__
#define __device__
#define __host__
#define __constant__
#define __forceinline__ inline
#define __noinline__ __attribute__((noinline))
#define __restrict__ __restrict
#define __align__(n) alignas(n)
#define __launch_bounds__(...)
/* Blocks run one after another on one thread, so one static array serves every block in turn
 * (real shared memory is not initialised either). */
#define __shared__ static

/* ---- vector types ---------------------------------------------------------------------- */

struct uint3 {
    unsigned int x, y, z;
};

struct dim3 {
    unsigned int x, y, z;
    constexpr dim3(unsigned int vx = 1, unsigned int vy = 1, unsigned int vz = 1)
        : x(vx), y(vy), z(vz)
    {
    }
    constexpr dim3(uint3 v) : x(v.x), y(v.y), z(v.z) {}
};

#define INF_EMU_VEC2(T, name, align)                                                             \
    struct alignas(align) name {                                                                 \
        T x, y;                                                                                  \
    };                                                                                           \
    inline name make_##name(T x, T y)                                                            \
    {                                                                                            \
        return name{x, y};                                                                       \
    }
#define INF_EMU_VEC3(T, name)                                                                    \
    struct name {                                                                                \
        T x, y, z;                                                                               \
    };                                                                                           \
    inline name make_##name(T x, T y, T z)                                                       \
    {                                                                                            \
        return name{x, y, z};                                                                    \
    }
#define INF_EMU_VEC4(T, name, align)                                                             \
    struct alignas(align) name {                                                                 \
        T x, y, z, w;                                                                            \
    };                                                                                           \
    inline name make_##name(T x, T y, T z, T w)                                                  \
    {                                                                                            \
        return name{x, y, z, w};                                                                 \
    }

INF_EMU_VEC2(float, float2, 8)
INF_EMU_VEC3(float, float3)
INF_EMU_VEC4(float, float4, 16)
INF_EMU_VEC2(int, int2, 8)
INF_EMU_VEC3(int, int3)
INF_EMU_VEC4(int, int4, 16)
INF_EMU_VEC2(unsigned int, uint2, 8)
INF_EMU_VEC4(unsigned int, uint4, 16)
INF_EMU_VEC2(short, short2, 4)
INF_EMU_VEC2(unsigned short, ushort2, 4)
INF_EMU_VEC4(signed char, char4, 4)
INF_EMU_VEC4(unsigned char, uchar4, 4)
INF_EMU_VEC2(double, double2, 16)
INF_EMU_VEC2(long long, longlong2, 16)

inline uint3 make_uint3(unsigned int x, unsigned int y, unsigned int z)
{
    return uint3{x, y, z};
}

inline float2 __half22float2(__half2 h)
{
    return float2{__half2float(h.x), __half2float(h.y)};
}
inline __half2 __float22half2_rn(float2 f)
{
    return __floats2half2_rn(f.x, f.y);
}
inline float2 __bfloat1622float2(__nv_bfloat162 b)
{
    return float2{__bfloat162float(b.x), __bfloat162float(b.y)};
}

/* ---- thread indices ---------------------------------------------------------------------- */

extern uint3 threadIdx;
extern uint3 blockIdx;
extern dim3 blockDim;
extern dim3 gridDim;
constexpr int warpSize = 32;

namespace emu {

/* The running thread's rank in its block (x fastest) and the number of lanes its warp has. */
extern unsigned int thread_rank;
extern unsigned int warp_lanes;
/* The launch's dynamic shared memory (16-byte aligned). */
extern unsigned char *dynamic_shared;

/* Block barrier: returns when every thread of the block has called it from the same place. */
void syncthreads(const char *file, int line);
/* Warp exchange: stores this lane's 8 bytes, waits for every lane of the warp, and returns the
 * warp's 32 slots (valid until this lane's next exchange). */
const uint64_t *warp_exchange(uint64_t bits);

template <typename T> inline uint64_t to_bits(T v)
{
    static_assert(sizeof(T) <= 8 && std::is_trivially_copyable<T>::value, "shuffles move <= 8 bytes");
    uint64_t u = 0;
    std::memcpy(&u, &v, sizeof v);
    return u;
}

template <typename T> inline T from_bits(uint64_t u)
{
    T v;
    std::memcpy(&v, &u, sizeof v);
    return v;
}

/* The value lane `src` gave, or this lane's own when `src` is outside the warp or marked -1
 * (the rules of the real shuffles for out-of-range sources). */
template <typename T> inline T shuffle_from(T var, int src)
{
    const uint64_t *slots = warp_exchange(to_bits(var));
    if (src < 0 || static_cast<unsigned int>(src) >= warp_lanes)
        return var;
    return from_bits<T>(slots[src]);
}

inline int lane_id()
{
    return static_cast<int>(thread_rank & 31u);
}

} // namespace emu

/* ---- barriers and warp operations -------------------------------------------------------- */

#define __syncthreads() emu::syncthreads(__FILE__, __LINE__)

inline void __syncwarp(unsigned int mask = 0xffffffffu)
{
    (void)mask;
    emu::warp_exchange(0);
}

template <typename T> inline T __shfl_sync(unsigned int mask, T var, int src_lane, int width = warpSize)
{
    (void)mask;
    int segment = emu::lane_id() & ~(width - 1);
    return emu::shuffle_from(var, segment + (src_lane & (width - 1)));
}

template <typename T>
inline T __shfl_xor_sync(unsigned int mask, T var, int lane_mask, int width = warpSize)
{
    (void)mask;
    int lane = emu::lane_id();
    int src = lane ^ lane_mask;
    int segment_end = (lane & ~(width - 1)) + width;
    return emu::shuffle_from(var, src < segment_end ? src : -1);
}

template <typename T>
inline T __shfl_down_sync(unsigned int mask, T var, unsigned int delta, int width = warpSize)
{
    (void)mask;
    int lane = emu::lane_id();
    int in_segment = lane & (width - 1);
    int src = in_segment + static_cast<int>(delta) < width ? lane + static_cast<int>(delta) : -1;
    return emu::shuffle_from(var, src);
}

template <typename T>
inline T __shfl_up_sync(unsigned int mask, T var, unsigned int delta, int width = warpSize)
{
    (void)mask;
    int lane = emu::lane_id();
    int in_segment = lane & (width - 1);
    int src = in_segment >= static_cast<int>(delta) ? lane - static_cast<int>(delta) : -1;
    return emu::shuffle_from(var, src);
}

inline unsigned int __ballot_sync(unsigned int mask, int predicate)
{
    (void)mask;
    const uint64_t *slots = emu::warp_exchange(predicate != 0);
    unsigned int ballot = 0;
    for (unsigned int lane = 0; lane < emu::warp_lanes; lane++)
        ballot |= static_cast<unsigned int>(slots[lane] != 0) << lane;
    return ballot;
}

inline int __all_sync(unsigned int mask, int predicate)
{
    unsigned int lanes = emu::warp_lanes;
    unsigned int full = lanes == 32 ? 0xffffffffu : (1u << lanes) - 1u;
    return __ballot_sync(mask, predicate) == full;
}

inline int __any_sync(unsigned int mask, int predicate)
{
    return __ballot_sync(mask, predicate) != 0;
}

inline unsigned int __activemask()
{
    unsigned int lanes = emu::warp_lanes;
    return lanes == 32 ? 0xffffffffu : (1u << lanes) - 1u;
}

/* ---- atomics ----------------------------------------------------------------------------- */

namespace emu {
/* The operand types follow the address (atomicAdd(float *, 1) converts 1, as the real overloads
 * do). */
template <typename T> using operand = typename std::enable_if<true, T>::type;
} // namespace emu

template <typename T> inline T atomicAdd(T *address, emu::operand<T> value)
{
    T old = *address;
    *address = static_cast<T>(old + value);
    return old;
}
template <typename T> inline T atomicSub(T *address, emu::operand<T> value)
{
    T old = *address;
    *address = static_cast<T>(old - value);
    return old;
}
template <typename T> inline T atomicMax(T *address, emu::operand<T> value)
{
    T old = *address;
    *address = old < value ? value : old;
    return old;
}
template <typename T> inline T atomicMin(T *address, emu::operand<T> value)
{
    T old = *address;
    *address = value < old ? value : old;
    return old;
}
template <typename T> inline T atomicExch(T *address, emu::operand<T> value)
{
    T old = *address;
    *address = value;
    return old;
}
template <typename T> inline T atomicCAS(T *address, emu::operand<T> compare, emu::operand<T> value)
{
    T old = *address;
    if (old == compare)
        *address = value;
    return old;
}
template <typename T> inline T atomicOr(T *address, emu::operand<T> value)
{
    T old = *address;
    *address = old | value;
    return old;
}
template <typename T> inline T atomicAnd(T *address, emu::operand<T> value)
{
    T old = *address;
    *address = old & value;
    return old;
}

/* ---- integer intrinsics ------------------------------------------------------------------ */

/* Sum of the four byte products plus c, wrapping like the hardware. */
inline int __dp4a(int a, int b, int c)
{
    uint32_t sum = static_cast<uint32_t>(c);
    for (int i = 0; i < 4; i++) {
        int8_t x = static_cast<int8_t>(static_cast<uint32_t>(a) >> (8 * i));
        int8_t y = static_cast<int8_t>(static_cast<uint32_t>(b) >> (8 * i));
        sum += static_cast<uint32_t>(x * y);
    }
    return static_cast<int>(sum);
}
inline unsigned int __dp4a(unsigned int a, unsigned int b, unsigned int c)
{
    unsigned int sum = c;
    for (int i = 0; i < 4; i++)
        sum += ((a >> (8 * i)) & 0xffu) * ((b >> (8 * i)) & 0xffu);
    return sum;
}
inline int __popc(unsigned int x)
{
    return __builtin_popcount(x);
}
inline int __popcll(unsigned long long x)
{
    return __builtin_popcountll(x);
}
inline int __clz(int x)
{
    return x == 0 ? 32 : __builtin_clz(static_cast<unsigned int>(x));
}
inline int __ffs(int x)
{
    return __builtin_ffs(x);
}
inline unsigned int __brev(unsigned int x)
{
    x = ((x >> 1) & 0x55555555u) | ((x & 0x55555555u) << 1);
    x = ((x >> 2) & 0x33333333u) | ((x & 0x33333333u) << 2);
    x = ((x >> 4) & 0x0f0f0f0fu) | ((x & 0x0f0f0f0fu) << 4);
    x = ((x >> 8) & 0x00ff00ffu) | ((x & 0x00ff00ffu) << 8);
    return (x >> 16) | (x << 16);
}
/* Bytes of the 8-byte value (y:x) picked by the four selector nibbles of s. */
inline unsigned int __byte_perm(unsigned int x, unsigned int y, unsigned int s)
{
    uint64_t both = (static_cast<uint64_t>(y) << 32) | x;
    unsigned int r = 0;
    for (int i = 0; i < 4; i++)
        r |= static_cast<unsigned int>((both >> (8 * ((s >> (4 * i)) & 7u))) & 0xffu) << (8 * i);
    return r;
}
inline unsigned int __umulhi(unsigned int a, unsigned int b)
{
    return static_cast<unsigned int>((static_cast<uint64_t>(a) * b) >> 32);
}
inline int __mulhi(int a, int b)
{
    return static_cast<int>((static_cast<int64_t>(a) * b) >> 32);
}
inline int __mul24(int a, int b)
{
    return a * b;
}
inline float __int_as_float(int i)
{
    return emu::bits_float(static_cast<uint32_t>(i));
}
inline float __uint_as_float(unsigned int u)
{
    return emu::bits_float(u);
}
inline int __float_as_int(float f)
{
    return static_cast<int>(emu::float_bits(f));
}
inline unsigned int __float_as_uint(float f)
{
    return emu::float_bits(f);
}

/* Read-only cache loads are plain loads. */
template <typename T> inline T __ldg(const T *p)
{
    return *p;
}

/* ---- maths: the fast-maths names map to the correctly rounded (libm) functions ------------ */

/* glibc declares (but does not export) __expf and friends, so these names are macros. */
#define __expf(x) expf(x)
#define __logf(x) logf(x)
#define __sinf(x) sinf(x)
#define __cosf(x) cosf(x)
#define __tanf(x) tanf(x)
#define __powf(x, y) powf((x), (y))
#define __exp10f(x) exp10f(x)
#define __log2f(x) log2f(x)
#define __log10f(x) log10f(x)
#define __tanhf(x) tanhf(x)
#define __sincosf(x, s, c) sincosf((x), (s), (c))

inline float __fdividef(float a, float b)
{
    return a / b;
}
inline float __frcp_rn(float x)
{
    return 1.0f / x;
}
inline float __fsqrt_rn(float x)
{
    return sqrtf(x);
}
inline float rsqrtf(float x)
{
    return 1.0f / sqrtf(x);
}
inline float __frsqrt_rn(float x)
{
    return 1.0f / sqrtf(x);
}
inline float __fadd_rn(float a, float b)
{
    return a + b;
}
inline float __fsub_rn(float a, float b)
{
    return a - b;
}
inline float __fmul_rn(float a, float b)
{
    return a * b;
}
inline float __fdiv_rn(float a, float b)
{
    return a / b;
}
inline float __fmaf_rn(float a, float b, float c)
{
    return fmaf(a, b, c);
}
inline float __saturatef(float x)
{
    return x < 0.0f ? 0.0f : (x > 1.0f ? 1.0f : (x == x ? x : 0.0f));
}
inline int __float2int_rn(float x)
{
    return static_cast<int>(rintf(x));
}
inline int __float2int_rz(float x)
{
    return static_cast<int>(x);
}
inline unsigned int __float2uint_rn(float x)
{
    return static_cast<unsigned int>(rintf(x));
}
inline float __int2float_rn(int i)
{
    return static_cast<float>(i);
}

/* min/max overloads as the CUDA headers give them (device code has no std::min). */
#define INF_EMU_MINMAX(T)                                                                        \
    inline T min(T a, T b)                                                                       \
    {                                                                                            \
        return b < a ? b : a;                                                                    \
    }                                                                                            \
    inline T max(T a, T b)                                                                       \
    {                                                                                            \
        return a < b ? b : a;                                                                    \
    }
INF_EMU_MINMAX(int)
INF_EMU_MINMAX(unsigned int)
INF_EMU_MINMAX(long)
INF_EMU_MINMAX(unsigned long)
INF_EMU_MINMAX(long long)
INF_EMU_MINMAX(unsigned long long)
inline float min(float a, float b)
{
    return fminf(a, b);
}
inline float max(float a, float b)
{
    return fmaxf(a, b);
}
inline double min(double a, double b)
{
    return fmin(a, b);
}
inline double max(double a, double b)
{
    return fmax(a, b);
}

#endif
