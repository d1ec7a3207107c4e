/* cpu_math.h - scalar maths the CPU kernels share, written so loops calling it vectorize
 * (no branches, no library calls). */
#ifndef INF_CPU_MATH_H
#define INF_CPU_MATH_H

#include <stdint.h>
#include <string.h>

/* e^x to about 1 ulp for x in [-87, 88], 0 below (so -INFINITY gives 0), +large above.
 * Range reduction x = n ln2 + r with |r| <= ln2/2, then a degree-7 polynomial for e^r. */
static inline float cpu_expf(float x)
{
    const float log2e = 1.44269504088896341f;
    const float ln2_hi = 0.693359375f, ln2_lo = -2.12194440e-4f;
    const float round_magic = 12582912.0f; /* 1.5 * 2^23: adding it rounds to an integer */
    float clamped = x < -87.0f ? -87.0f : (x > 88.0f ? 88.0f : x);
    float shifted = clamped * log2e + round_magic;
    float n = shifted - round_magic;
    float r = clamped - n * ln2_hi - n * ln2_lo;
    float p = 1.9875691500e-4f;
    p = p * r + 1.3981999507e-3f;
    p = p * r + 8.3334519073e-3f;
    p = p * r + 4.1665795894e-2f;
    p = p * r + 1.6666665459e-1f;
    p = p * r + 5.0000001201e-1f;
    p = p * r * r + r + 1.0f;
    /* n as an integer from the low mantissa bits of `shifted`, not by converting n: a NaN x
     * would make that conversion (and the shift) undefined; p is NaN then, and so is e^x. */
    int32_t shifted_bits;
    memcpy(&shifted_bits, &shifted, sizeof shifted_bits);
    uint32_t bits = (uint32_t)((shifted_bits & 0x007fffff) - 0x00400000 + 127) << 23;
    float scale;
    memcpy(&scale, &bits, sizeof scale);
    return x < -87.0f ? 0.0f : p * scale;
}

/* x * sigmoid(x). */
static inline float cpu_silu(float x)
{
    return x / (1.0f + cpu_expf(-x));
}

#endif
