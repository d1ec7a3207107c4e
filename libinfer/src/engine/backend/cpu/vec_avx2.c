/* vec_avx2.c - AVX2 row kernels: 8 exponentials at a time, the vector form of cpu_expf() (same
 * operations, same bits); the last n % 8 elements go through cpu_expf() itself. */
#include <immintrin.h>
#include <math.h>

#include "cpu_gelu.h"
#include "cpu_math.h"
#include "vec.h"

static inline __m256 exp8(__m256 x)
{
    const __m256 lo = _mm256_set1_ps(CPU_EXP_LO);
    /* max/min return their second operand when one is NaN: a NaN x stays NaN, as in cpu_expf. */
    const __m256 clamped = _mm256_min_ps(_mm256_set1_ps(CPU_EXP_HI), _mm256_max_ps(lo, x));
    const __m256 n = _mm256_round_ps(_mm256_mul_ps(clamped, _mm256_set1_ps(CPU_EXP_LOG2E)),
                                     _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    __m256 r = _mm256_fnmadd_ps(n, _mm256_set1_ps(CPU_EXP_LN2_HI), clamped);
    r = _mm256_fnmadd_ps(n, _mm256_set1_ps(CPU_EXP_LN2_LO), r);
    __m256 p = _mm256_set1_ps(CPU_EXP_P0);
    p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(CPU_EXP_P1));
    p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(CPU_EXP_P2));
    p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(CPU_EXP_P3));
    p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(CPU_EXP_P4));
    p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(CPU_EXP_P5));
    p = _mm256_fmadd_ps(_mm256_mul_ps(p, r), r, _mm256_add_ps(r, _mm256_set1_ps(1.0f)));
    const __m256i bits = _mm256_slli_epi32(_mm256_add_epi32(_mm256_cvtps_epi32(n), _mm256_set1_epi32(127)), 23);
    const __m256 e = _mm256_mul_ps(p, _mm256_castsi256_ps(bits));
    /* 0 below the range; NaN (unordered) passes. */
    return _mm256_and_ps(e, _mm256_cmp_ps(x, lo, _CMP_NLT_UQ));
}

static inline __m256 silu8(__m256 x)
{
    const __m256 e = exp8(_mm256_xor_ps(x, _mm256_set1_ps(-0.0f)));
    return _mm256_div_ps(x, _mm256_add_ps(_mm256_set1_ps(1.0f), e));
}

static void silu_avx2(const float *x, float *y, int64_t n)
{
    int64_t i = 0;
    for (; i + 8 <= n; i += 8)
        _mm256_storeu_ps(y + i, silu8(_mm256_loadu_ps(x + i)));
    for (; i < n; i++)
        y[i] = cpu_silu(x[i]);
}

static void swiglu_avx2(const float *gate, const float *up, float *y, int64_t n)
{
    int64_t i = 0;
    for (; i + 8 <= n; i += 8)
        _mm256_storeu_ps(y + i, _mm256_mul_ps(silu8(_mm256_loadu_ps(gate + i)), _mm256_loadu_ps(up + i)));
    for (; i < n; i++)
        y[i] = cpu_silu(gate[i]) * up[i];
}

/* gelu of 8 floats: x rounded to fp16 (vcvtps2ph, to nearest even as ggml's converter), the
 * table entry of those bits gathered; x at or above 10 passes through. */
static inline __m256 gelu8(const float *table, __m256 x)
{
    const __m128i half = _mm256_cvtps_ph(x, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    const __m256 g = _mm256_i32gather_ps(table, _mm256_cvtepu16_epi32(half), 4);
    return _mm256_blendv_ps(g, x, _mm256_cmp_ps(x, _mm256_set1_ps(10.0f), _CMP_GE_OQ));
}

/* All ones in lanes with x > -10 (or NaN), zero where the result is 0. */
static inline __m256 kept8(__m256 x)
{
    return _mm256_cmp_ps(x, _mm256_set1_ps(-10.0f), _CMP_NLE_UQ);
}

static void gelu_avx2(const float *table, const float *x, float *y, int64_t n)
{
    int64_t i = 0;
    for (; i + 8 <= n; i += 8) {
        const __m256 v = _mm256_loadu_ps(x + i);
        _mm256_storeu_ps(y + i, _mm256_and_ps(kept8(v), gelu8(table, v)));
    }
    for (; i < n; i++)
        y[i] = cpu_gelu(table, x[i]);
}

static void geglu_avx2(const float *table, const float *gate, const float *up, float *y,
                       int64_t n)
{
    int64_t i = 0;
    for (; i + 8 <= n; i += 8) {
        const __m256 v = _mm256_loadu_ps(gate + i);
        const __m256 r = _mm256_mul_ps(gelu8(table, v), _mm256_loadu_ps(up + i));
        _mm256_storeu_ps(y + i, _mm256_and_ps(kept8(v), r));
    }
    for (; i < n; i++)
        y[i] = cpu_geglu(table, gate[i], up[i]);
}

static float scale_mask_max_avx2(const float *x, const float *mask, float scale, float *y,
                                 int64_t n)
{
    const __m256 s = _mm256_set1_ps(scale);
    __m256 max = _mm256_set1_ps(-INFINITY);
    int64_t i = 0;
    for (; i + 8 <= n; i += 8) {
        __m256 v = _mm256_mul_ps(_mm256_loadu_ps(x + i), s);
        if (mask)
            v = _mm256_add_ps(v, _mm256_loadu_ps(mask + i));
        _mm256_storeu_ps(y + i, v);
        max = _mm256_max_ps(v, max); /* a NaN v leaves max as it was, as at the scalar level */
    }
    float lanes[8], m = -INFINITY;
    _mm256_storeu_ps(lanes, max);
    for (int l = 0; l < 8; l++)
        m = lanes[l] > m ? lanes[l] : m;
    for (; i < n; i++) {
        y[i] = mask ? x[i] * scale + mask[i] : x[i] * scale;
        m = y[i] > m ? y[i] : m;
    }
    return m;
}

/* Lanes 0-3 of the sum order of cpu_math.h in sum_lo, lanes 4-7 in sum_hi. */
static double exp_sum_avx2(float *x, float max, int64_t n)
{
    const __m256 m = _mm256_set1_ps(max);
    __m256d sum_lo = _mm256_setzero_pd(), sum_hi = _mm256_setzero_pd();
    int64_t i = 0;
    for (; i + 8 <= n; i += 8) {
        const __m256 e = exp8(_mm256_sub_ps(_mm256_loadu_ps(x + i), m));
        _mm256_storeu_ps(x + i, e);
        sum_lo = _mm256_add_pd(sum_lo, _mm256_cvtps_pd(_mm256_castps256_ps128(e)));
        sum_hi = _mm256_add_pd(sum_hi, _mm256_cvtps_pd(_mm256_extractf128_ps(e, 1)));
    }
    double lanes[CPU_EXP_SUM_LANES];
    _mm256_storeu_pd(lanes, sum_lo);
    _mm256_storeu_pd(lanes + 4, sum_hi);
    double sum = cpu_exp_sum_lanes(lanes);
    for (; i < n; i++) {
        x[i] = cpu_expf(x[i] - max);
        sum += x[i];
    }
    return sum;
}

const cpu_vec_kernels cpu_vec_avx2 = {silu_avx2,  swiglu_avx2, gelu_avx2, geglu_avx2,
                                      scale_mask_max_avx2, exp_sum_avx2};
