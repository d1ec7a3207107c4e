/* test_emu_half.cpp - the emulator's half and bfloat16 conversions round as the device does (to
 * nearest even, subnormals kept, overflow to infinity): every half value round-trips, a sweep of
 * floats matches numpy's float16 and an independent computation in double, and bfloat16
 * matches known bit patterns and the same double computation. */
#include "emu_test.h"

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <vector>

namespace {

float from_bits(uint32_t u)
{
    float f;
    memcpy(&f, &u, 4);
    return f;
}

/* Nearest value of a binary format with `mant_bits` stored mantissa bits and smallest normal
 * exponent `min_exp`, computed in double as |f| / ulp rounded to an integer (ties to even). */
double round_to_format(float f, int mant_bits, int min_exp)
{
    double a = fabs(static_cast<double>(f));
    if (a == 0.0)
        return f;
    int e = static_cast<int>(floor(log2(a)));
    if (ldexp(1.0, e) > a) /* log2 rounding near powers of two */
        e--;
    if (e < min_exp)
        e = min_exp;
    double ulp = ldexp(1.0, e - mant_bits);
    double r = nearbyint(a / ulp) * ulp;
    return f < 0 ? -r : r;
}

uint16_t half_reference(float f)
{
    if (std::isnan(f))
        return 0x7fff;
    double r = round_to_format(f, 10, -14);
    uint16_t sign = std::signbit(f) ? 0x8000 : 0;
    double a = fabs(r);
    if (a >= 65536.0)
        return sign | 0x7c00;
    if (a < ldexp(1.0, -14))
        return sign | static_cast<uint16_t>(a / ldexp(1.0, -24));
    int e = static_cast<int>(floor(log2(a)));
    uint16_t mant = static_cast<uint16_t>((a / ldexp(1.0, e) - 1.0) * 1024.0);
    return sign | static_cast<uint16_t>((e + 15) << 10) | mant;
}

uint16_t bf16_reference(float f)
{
    if (std::isnan(f))
        return 0x7fff;
    double r = round_to_format(f, 7, -126);
    if (fabs(r) >= ldexp(1.0, 128))
        return std::signbit(f) ? 0xff80 : 0x7f80;
    float rf = static_cast<float>(r); /* exact: r has 8 significant bits */
    uint32_t u;
    memcpy(&u, &rf, 4);
    return static_cast<uint16_t>(u >> 16);
}

/* Floats that exercise rounding: every 65521st bit pattern, each half value and its neighbours
 * and midpoints (exactly between two halves, and one float ulp either side). */
std::vector<float> sweep()
{
    std::vector<float> v;
    for (uint64_t u = 0; u < (1ull << 32); u += 65521)
        v.push_back(from_bits(static_cast<uint32_t>(u)));
    for (uint32_t h = 0; h < 0x7c00; h++) {
        float lo = __half2float(__ushort_as_half(static_cast<uint16_t>(h)));
        float hi = __half2float(__ushort_as_half(static_cast<uint16_t>(h + 1)));
        float mid = lo + (hi - lo) / 2; /* exact in float */
        for (float x : {lo, mid, nextafterf(mid, 0.0f), nextafterf(mid, INFINITY)}) {
            v.push_back(x);
            v.push_back(-x);
        }
    }
    for (float x : {65504.0f, 65519.99f, 65520.0f, 1e30f, INFINITY, -INFINITY, 5.96e-8f, 2.98e-8f, 2.9802326e-8f})
        v.push_back(x);
    return v;
}

TEST(test_emulator_every_half_round_trips)
{
    for (uint32_t h = 0; h < 0x10000; h++) {
        __half x = __ushort_as_half(static_cast<uint16_t>(h));
        float f = __half2float(x);
        uint16_t back = __half_as_ushort(__float2half(f));
        bool nan = (h & 0x7fff) > 0x7c00;
        CHECK_MSG(nan ? std::isnan(f) && back == 0x7fff : back == h, "half %04x -> %g -> %04x", h, f, back);
    }
}

TEST(test_emulator_float2half_matches_a_reference_in_double)
{
    for (float f : sweep()) {
        uint16_t got = __half_as_ushort(__float2half(f)), want = half_reference(f);
        CHECK_MSG(got == want, "__float2half(%a) = %04x, want %04x", static_cast<double>(f), got, want);
    }
}

TEST(test_emulator_float2half_matches_numpy)
{
    if (system("python3 -c 'import numpy' 2>/dev/null") != 0)
        SKIP("numpy is not installed");
    std::vector<float> values = sweep();
    std::string in = test_tmpfile("half_in.bin"), out = test_tmpfile("half_out.bin");
    FILE *f = fopen(in.c_str(), "wb");
    CHECK(f && fwrite(values.data(), 4, values.size(), f) == values.size() && fclose(f) == 0);
    const char *script = __FILE__;
    std::string dir(script, strrchr(script, '/') - script);
    int status = test_run(nullptr, "python3 '%s/py/half_oracle.py' '%s' '%s'", dir.c_str(), in.c_str(), out.c_str());
    CHECK_MSG(status == 0, "half_oracle.py exited with %d", status);
    std::vector<uint16_t> want(values.size());
    f = fopen(out.c_str(), "rb");
    CHECK(f && fread(want.data(), 2, want.size(), f) == want.size());
    fclose(f);
    for (size_t i = 0; i < values.size(); i++) {
        if (std::isnan(values[i]))
            continue; /* numpy keeps NaN payloads; the device gives 0x7fff */
        uint16_t got = __half_as_ushort(__float2half(values[i]));
        CHECK_MSG(got == want[i], "__float2half(%a) = %04x, numpy %04x", static_cast<double>(values[i]), got, want[i]);
    }
}

TEST(test_emulator_bfloat16_rounding)
{
    struct {
        uint32_t in;
        uint16_t out;
    } known[] = {
        {0x3f800000, 0x3f80}, /* 1 */
        {0x3f808000, 0x3f80}, /* tie, even stays */
        {0x3f818000, 0x3f82}, /* tie, odd rounds up */
        {0x3f808001, 0x3f81}, /* above the tie */
        {0x7f7fffff, 0x7f80}, /* FLT_MAX overflows */
        {0x00000001, 0x0000}, /* smallest subnormal rounds to 0 */
        {0x00008000, 0x0000}, /* tie to even 0 */
        {0x00018000, 0x0002}, /* subnormal tie up */
        {0x80000000, 0x8000}, /* -0 */
        {0x7fc00001, 0x7fff}, /* NaN */
        {0xff800000, 0xff80}, /* -inf */
    };
    for (const auto &k : known) {
        uint16_t got = __bfloat16_as_ushort(__float2bfloat16(from_bits(k.in)));
        CHECK_MSG(got == k.out, "__float2bfloat16(%08x) = %04x, want %04x", k.in, got, k.out);
    }
    for (float f : sweep()) {
        uint16_t got = __bfloat16_as_ushort(__float2bfloat16(f)), want = bf16_reference(f);
        CHECK_MSG(got == want, "__float2bfloat16(%a) = %04x, want %04x", static_cast<double>(f), got, want);
        uint32_t back;
        float g = __bfloat162float(__ushort_as_bfloat16(got));
        memcpy(&back, &g, 4);
        CHECK(back == static_cast<uint32_t>(got) << 16);
    }
}

TEST(test_emulator_half2_helpers_and_half_arithmetic)
{
    __half2 h = __floats2half2_rn(1.5f, -2.25f);
    CHECK(__low2float(h) == 1.5f && __high2float(h) == -2.25f);
    float2 f = __half22float2(h);
    CHECK(f.x == 1.5f && f.y == -2.25f);
    /* 2049 is not a half: the sum of 2048 and 1 rounds to even (2048). */
    CHECK(__half2float(__hadd(__float2half(2048.0f), __float2half(1.0f))) == 2048.0f);
    CHECK(__half2float(__hfma(__float2half(3.0f), __float2half(0.5f), __float2half(0.25f))) == 1.75f);
    __half implicit = 0.1f;
    CHECK(static_cast<float>(implicit) == __half2float(__float2half(0.1f)));
}

} // namespace
