/* emu_half.h - __half, __half2 and __nv_bfloat16 as cuda_fp16.h / cuda_bf16.h define them, with
 * the conversions rounding exactly as the hardware does (to nearest even; subnormals kept; NaN
 * becomes the canonical 0x7fff). Arithmetic on halves is done in float and rounded once, which
 * gives the correctly rounded result for + - * / (float has more than twice the bits). */
#ifndef INF_CUDA_EMU_HALF_H
#define INF_CUDA_EMU_HALF_H

#include <cstdint>
#include <cstring>

namespace emu {

inline uint32_t float_bits(float f)
{
    uint32_t u;
    std::memcpy(&u, &f, sizeof u);
    return u;
}

inline float bits_float(uint32_t u)
{
    float f;
    std::memcpy(&f, &u, sizeof f);
    return f;
}

/* IEEE binary16 from binary32, round to nearest even. */
inline uint16_t float_to_half_bits(float f)
{
    uint32_t u = float_bits(f);
    uint16_t sign = static_cast<uint16_t>((u >> 16) & 0x8000u);
    uint32_t abs = u & 0x7fffffffu;
    if (abs > 0x7f800000u)
        return 0x7fff;
    if (abs >= 0x477ff000u) /* rounds to >= 65520: infinity */
        return static_cast<uint16_t>(sign | 0x7c00u);
    if (abs < 0x38800000u) { /* below 2^-14: a subnormal half (or zero) */
        if (abs < 0x33000000u) /* below 2^-25: rounds to zero (2^-25 itself is a tie to even 0) */
            return sign;
        uint32_t mant = (abs & 0x007fffffu) | 0x00800000u;
        int shift = 126 - static_cast<int>(abs >> 23); /* 14..24 */
        uint32_t half = mant >> shift;
        uint32_t rest = mant & ((1u << shift) - 1u);
        uint32_t tie = 1u << (shift - 1);
        if (rest > tie || (rest == tie && (half & 1u)))
            half++;
        return static_cast<uint16_t>(sign | half);
    }
    /* Normal: rebias the exponent, round the 13 dropped bits (a carry may reach the exponent). */
    uint32_t h = ((abs - 0x38000000u) >> 13);
    uint32_t rest = abs & 0x1fffu;
    if (rest > 0x1000u || (rest == 0x1000u && (h & 1u)))
        h++;
    return static_cast<uint16_t>(sign | h);
}

inline float half_bits_to_float(uint16_t h)
{
    uint32_t sign = static_cast<uint32_t>(h & 0x8000u) << 16;
    uint32_t exp = (h >> 10) & 0x1fu;
    uint32_t mant = h & 0x3ffu;
    if (exp == 0x1f)
        return bits_float(sign | 0x7f800000u | (mant << 13));
    if (exp == 0) {
        if (mant == 0)
            return bits_float(sign);
        float f = static_cast<float>(mant) * (1.0f / 16777216.0f); /* mant * 2^-24, exact */
        return sign ? -f : f;
    }
    return bits_float(sign | ((exp + 112u) << 23) | (mant << 13));
}

/* bfloat16 from binary32, round to nearest even. */
inline uint16_t float_to_bf16_bits(float f)
{
    uint32_t u = float_bits(f);
    if ((u & 0x7fffffffu) > 0x7f800000u)
        return 0x7fff;
    u += 0x7fffu + ((u >> 16) & 1u);
    return static_cast<uint16_t>(u >> 16);
}

inline float bf16_bits_to_float(uint16_t b)
{
    return bits_float(static_cast<uint32_t>(b) << 16);
}

} // namespace emu

struct __half_raw {
    unsigned short x;
};

struct __half {
    unsigned short __x;
    __half() = default;
    __half(float f) : __x(emu::float_to_half_bits(f)) {}
    __half(double d) : __x(emu::float_to_half_bits(static_cast<float>(d))) {}
    __half(int i) : __x(emu::float_to_half_bits(static_cast<float>(i))) {}
    __half(__half_raw r) : __x(r.x) {}
    operator float() const { return emu::half_bits_to_float(__x); }
    operator __half_raw() const { return __half_raw{__x}; }
};

struct __half2 {
    __half x;
    __half y;
    __half2() = default;
    __half2(__half a, __half b) : x(a), y(b) {}
};

struct __nv_bfloat16_raw {
    unsigned short x;
};

struct __nv_bfloat16 {
    unsigned short __x;
    __nv_bfloat16() = default;
    __nv_bfloat16(float f) : __x(emu::float_to_bf16_bits(f)) {}
    __nv_bfloat16(double d) : __x(emu::float_to_bf16_bits(static_cast<float>(d))) {}
    __nv_bfloat16(__nv_bfloat16_raw r) : __x(r.x) {}
    operator float() const { return emu::bf16_bits_to_float(__x); }
    operator __nv_bfloat16_raw() const { return __nv_bfloat16_raw{__x}; }
};

struct __nv_bfloat162 {
    __nv_bfloat16 x;
    __nv_bfloat16 y;
    __nv_bfloat162() = default;
    __nv_bfloat162(__nv_bfloat16 a, __nv_bfloat16 b) : x(a), y(b) {}
};

typedef __half half;
typedef __half2 half2;
typedef __nv_bfloat16 nv_bfloat16;
typedef __nv_bfloat162 nv_bfloat162;

static_assert(sizeof(__half) == 2 && sizeof(__half2) == 4, "half layouts match the device's");
static_assert(sizeof(__nv_bfloat16) == 2 && sizeof(__nv_bfloat162) == 4, "bf16 layouts match");

inline __half __float2half(float f)
{
    return __half_raw{emu::float_to_half_bits(f)};
}
inline __half __float2half_rn(float f)
{
    return __float2half(f);
}
inline float __half2float(__half h)
{
    return emu::half_bits_to_float(h.__x);
}
inline __half2 __float2half2_rn(float f)
{
    return __half2(__float2half(f), __float2half(f));
}
inline __half2 __floats2half2_rn(float a, float b)
{
    return __half2(__float2half(a), __float2half(b));
}
inline __half2 __halves2half2(__half a, __half b)
{
    return __half2(a, b);
}
inline __half2 make_half2(__half a, __half b)
{
    return __half2(a, b);
}
inline __half2 __half2half2(__half a)
{
    return __half2(a, a);
}
inline float __low2float(__half2 h)
{
    return __half2float(h.x);
}
inline float __high2float(__half2 h)
{
    return __half2float(h.y);
}
inline __half __low2half(__half2 h)
{
    return h.x;
}
inline __half __high2half(__half2 h)
{
    return h.y;
}
inline unsigned short __half_as_ushort(__half h)
{
    return h.__x;
}
inline __half __ushort_as_half(unsigned short u)
{
    return __half_raw{u};
}
inline short __half_as_short(__half h)
{
    return static_cast<short>(h.__x);
}
inline __half __short_as_half(short s)
{
    return __half_raw{static_cast<unsigned short>(s)};
}

inline __half __hadd(__half a, __half b)
{
    return __float2half(__half2float(a) + __half2float(b));
}
inline __half __hsub(__half a, __half b)
{
    return __float2half(__half2float(a) - __half2float(b));
}
inline __half __hmul(__half a, __half b)
{
    return __float2half(__half2float(a) * __half2float(b));
}
inline __half __hdiv(__half a, __half b)
{
    return __float2half(__half2float(a) / __half2float(b));
}
inline __half __hneg(__half a)
{
    return __half_raw{static_cast<unsigned short>(a.__x ^ 0x8000u)};
}
/* a*b+c is exact in double (22-bit product), so one rounding to half follows. */
inline __half __hfma(__half a, __half b, __half c)
{
    double r = static_cast<double>(__half2float(a)) * __half2float(b) + __half2float(c);
    return __float2half(static_cast<float>(r));
}
inline __half2 __hadd2(__half2 a, __half2 b)
{
    return __half2(__hadd(a.x, b.x), __hadd(a.y, b.y));
}
inline __half2 __hmul2(__half2 a, __half2 b)
{
    return __half2(__hmul(a.x, b.x), __hmul(a.y, b.y));
}
inline __half2 __hfma2(__half2 a, __half2 b, __half2 c)
{
    return __half2(__hfma(a.x, b.x, c.x), __hfma(a.y, b.y, c.y));
}
inline bool __hisnan(__half h)
{
    return (h.__x & 0x7fffu) > 0x7c00u;
}
inline bool __hisinf(__half h)
{
    return (h.__x & 0x7fffu) == 0x7c00u;
}

inline __nv_bfloat16 __float2bfloat16(float f)
{
    return __nv_bfloat16_raw{emu::float_to_bf16_bits(f)};
}
inline __nv_bfloat16 __float2bfloat16_rn(float f)
{
    return __float2bfloat16(f);
}
inline float __bfloat162float(__nv_bfloat16 b)
{
    return emu::bf16_bits_to_float(b.__x);
}
inline __nv_bfloat162 __floats2bfloat162_rn(float a, float b)
{
    return __nv_bfloat162(__float2bfloat16(a), __float2bfloat16(b));
}
inline float __low2float(__nv_bfloat162 h)
{
    return __bfloat162float(h.x);
}
inline float __high2float(__nv_bfloat162 h)
{
    return __bfloat162float(h.y);
}
inline unsigned short __bfloat16_as_ushort(__nv_bfloat16 b)
{
    return b.__x;
}
inline __nv_bfloat16 __ushort_as_bfloat16(unsigned short u)
{
    return __nv_bfloat16_raw{u};
}

#endif
