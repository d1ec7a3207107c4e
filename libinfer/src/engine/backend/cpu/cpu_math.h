/* cpu_math.h - scalar maths the CPU kernels share. cpu_expf() is the exact scalar twin of the
 * SIMD levels' vector exponentials (vec_avx2.c, vec_avx512.c): the same operations in the same
 * order, fused multiply-adds included, so every level gives the same bits. */
#ifndef INF_CPU_MATH_H
#define INF_CPU_MATH_H

#include <math.h>
#include <stdint.h>
#include <string.h>

/* Constants of cpu_expf() and of the vector versions. */
#define CPU_EXP_LO (-87.0f)
#define CPU_EXP_HI 88.0f
#define CPU_EXP_LOG2E 1.44269504088896341f
#define CPU_EXP_LN2_HI 0.693359375f /* few mantissa bits: n * CPU_EXP_LN2_HI is exact */
#define CPU_EXP_LN2_LO (-2.12194440e-4f)
#define CPU_EXP_P0 1.9875691500e-4f
#define CPU_EXP_P1 1.3981999507e-3f
#define CPU_EXP_P2 8.3334519073e-3f
#define CPU_EXP_P3 4.1665795894e-2f
#define CPU_EXP_P4 1.6666665459e-1f
#define CPU_EXP_P5 5.0000001201e-1f

/* e^x to about 1 ulp for x in [-87, 88], 0 below (so -INFINITY gives 0), +large above, NaN for
 * NaN. Range reduction x = n ln2 + r with |r| <= ln2/2, then a degree-7 polynomial for e^r.
 * The multiply-adds are fmaf() because the AVX2/AVX-512 versions fuse them (fusing is the cheap
 * side there; -ffp-contract=off keeps the compiler from fusing anything else). The price is
 * paid only by the scalar level on x86, where fmaf() is a library call (baseline x86-64 has no
 * FMA instruction) and the loops calling this no longer vectorize; on arm64 fmaf() is one
 * instruction. */
static inline float cpu_expf(float x)
{
    const float round_magic = 12582912.0f; /* 1.5 * 2^23: adding it rounds to an integer */
    /* NaN stays NaN through the clamp (both comparisons are false). */
    float clamped = x < CPU_EXP_LO ? CPU_EXP_LO : (x > CPU_EXP_HI ? CPU_EXP_HI : x);
    float shifted = clamped * CPU_EXP_LOG2E + round_magic;
    float n = shifted - round_magic; /* clamped * log2e rounded to nearest, ties to even */
    float r = fmaf(-n, CPU_EXP_LN2_HI, clamped);
    r = fmaf(-n, CPU_EXP_LN2_LO, r);
    float p = CPU_EXP_P0;
    p = fmaf(p, r, CPU_EXP_P1);
    p = fmaf(p, r, CPU_EXP_P2);
    p = fmaf(p, r, CPU_EXP_P3);
    p = fmaf(p, r, CPU_EXP_P4);
    p = fmaf(p, r, CPU_EXP_P5);
    p = fmaf(p * r, r, r + 1.0f);
    /* n as an integer from the low mantissa bits of `shifted`, not by converting n: a NaN x
     * would make that conversion (and the shift) undefined; p is NaN then, and so is e^x. */
    int32_t shifted_bits;
    memcpy(&shifted_bits, &shifted, sizeof shifted_bits);
    uint32_t bits = (uint32_t)((shifted_bits & 0x007fffff) - 0x00400000 + 127) << 23;
    float scale;
    memcpy(&scale, &bits, sizeof scale);
    return x < CPU_EXP_LO ? 0.0f : p * scale;
}

/* x * sigmoid(x). */
static inline float cpu_silu(float x)
{
    return x / (1.0f + cpu_expf(-x));
}

/* Softmax's sum of e^x in double, in the order every level uses: CPU_EXP_SUM_LANES partial sums,
 * lane l adding elements i = l (mod lanes) below the last full group in order, then the lanes
 * combined as ((l0 + l4) + (l1 + l5)) + ((l2 + l6) + (l3 + l7)) (one 4-wide add, then a pairwise
 * reduction), then the remaining elements one by one. */
#define CPU_EXP_SUM_LANES 8

static inline double cpu_exp_sum_lanes(const double lanes[CPU_EXP_SUM_LANES])
{
    double half[4];
    for (int l = 0; l < 4; l++)
        half[l] = lanes[l] + lanes[l + 4];
    return (half[0] + half[1]) + (half[2] + half[3]);
}

#endif
