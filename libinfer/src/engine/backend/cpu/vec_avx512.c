/* vec_avx512.c - AVX-512 row kernels: 16 exponentials at a time, the vector form of cpu_expf()
 * (same operations, same bits); the last n % 16 elements go through masked loads and stores. */
#include <immintrin.h>
#include <math.h>

#include "cpu_gelu.h"
#include "cpu_math.h"
#include "vec.h"

static inline __m512 exp16(__m512 x)
{
    const __m512 lo = _mm512_set1_ps(CPU_EXP_LO);
    /* max/min return their second operand when one is NaN: a NaN x stays NaN, as in cpu_expf. */
    const __m512 clamped = _mm512_min_ps(_mm512_set1_ps(CPU_EXP_HI), _mm512_max_ps(lo, x));
    const __m512 n = _mm512_roundscale_ps(_mm512_mul_ps(clamped, _mm512_set1_ps(CPU_EXP_LOG2E)),
                                          _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    __m512 r = _mm512_fnmadd_ps(n, _mm512_set1_ps(CPU_EXP_LN2_HI), clamped);
    r = _mm512_fnmadd_ps(n, _mm512_set1_ps(CPU_EXP_LN2_LO), r);
    __m512 p = _mm512_set1_ps(CPU_EXP_P0);
    p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(CPU_EXP_P1));
    p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(CPU_EXP_P2));
    p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(CPU_EXP_P3));
    p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(CPU_EXP_P4));
    p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(CPU_EXP_P5));
    p = _mm512_fmadd_ps(_mm512_mul_ps(p, r), r, _mm512_add_ps(r, _mm512_set1_ps(1.0f)));
    const __m512i bits = _mm512_slli_epi32(_mm512_add_epi32(_mm512_cvtps_epi32(n), _mm512_set1_epi32(127)), 23);
    const __m512 e = _mm512_mul_ps(p, _mm512_castsi512_ps(bits));
    /* 0 below the range; NaN (unordered) passes. */
    return _mm512_maskz_mov_ps(_mm512_cmp_ps_mask(x, lo, _CMP_NLT_UQ), e);
}

static inline __m512 silu16(__m512 x)
{
    const __m512 e = exp16(_mm512_castsi512_ps(
        _mm512_xor_si512(_mm512_castps_si512(x), _mm512_set1_epi32((int)0x80000000u))));
    return _mm512_div_ps(x, _mm512_add_ps(_mm512_set1_ps(1.0f), e));
}

/* Lanes [i, n) of a partial vector, n - i < 16. */
static inline __mmask16 tail_mask(int64_t i, int64_t n)
{
    return (__mmask16)((1u << (n - i)) - 1);
}

static void silu_avx512(const float *x, float *y, int64_t n)
{
    int64_t i = 0;
    for (; i + 16 <= n; i += 16)
        _mm512_storeu_ps(y + i, silu16(_mm512_loadu_ps(x + i)));
    if (i < n) {
        const __mmask16 k = tail_mask(i, n);
        _mm512_mask_storeu_ps(y + i, k, silu16(_mm512_maskz_loadu_ps(k, x + i)));
    }
}

static void swiglu_avx512(const float *gate, const float *up, float *y, int64_t n)
{
    int64_t i = 0;
    for (; i + 16 <= n; i += 16)
        _mm512_storeu_ps(y + i, _mm512_mul_ps(silu16(_mm512_loadu_ps(gate + i)), _mm512_loadu_ps(up + i)));
    if (i < n) {
        const __mmask16 k = tail_mask(i, n);
        const __m512 v = _mm512_mul_ps(silu16(_mm512_maskz_loadu_ps(k, gate + i)),
                                       _mm512_maskz_loadu_ps(k, up + i));
        _mm512_mask_storeu_ps(y + i, k, v);
    }
}

/* gelu of 16 floats: x rounded to fp16 (vcvtps2ph, to nearest even as ggml's converter), the
 * table entry of those bits gathered; x at or above 10 passes through. */
static inline __m512 gelu16(const float *table, __m512 x)
{
    const __m256i half = _mm512_cvtps_ph(x, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    const __m512 g = _mm512_i32gather_ps(_mm512_cvtepu16_epi32(half), table, 4);
    return _mm512_mask_mov_ps(g, _mm512_cmp_ps_mask(x, _mm512_set1_ps(10.0f), _CMP_GE_OQ), x);
}

/* Lanes with x <= -10 (their result is 0). */
static inline __mmask16 below16(__m512 x)
{
    return _mm512_cmp_ps_mask(x, _mm512_set1_ps(-10.0f), _CMP_LE_OQ);
}

static void gelu_avx512(const float *table, const float *x, float *y, int64_t n)
{
    int64_t i = 0;
    for (; i + 16 <= n; i += 16) {
        const __m512 v = _mm512_loadu_ps(x + i);
        _mm512_storeu_ps(y + i, _mm512_maskz_mov_ps(~below16(v), gelu16(table, v)));
    }
    for (; i < n; i++)
        y[i] = cpu_gelu(table, x[i]);
}

static void geglu_avx512(const float *table, const float *gate, const float *up, float *y,
                         int64_t n)
{
    int64_t i = 0;
    for (; i + 16 <= n; i += 16) {
        const __m512 v = _mm512_loadu_ps(gate + i);
        const __m512 r = _mm512_mul_ps(gelu16(table, v), _mm512_loadu_ps(up + i));
        _mm512_storeu_ps(y + i, _mm512_maskz_mov_ps(~below16(v), r));
    }
    for (; i < n; i++)
        y[i] = cpu_geglu(table, gate[i], up[i]);
}

static float scale_mask_max_avx512(const float *x, const float *mask, float scale, float *y,
                                   int64_t n)
{
    const __m512 s = _mm512_set1_ps(scale);
    __m512 max = _mm512_set1_ps(-INFINITY);
    int64_t i = 0;
    for (; i + 16 <= n; i += 16) {
        __m512 v = _mm512_mul_ps(_mm512_loadu_ps(x + i), s);
        if (mask)
            v = _mm512_add_ps(v, _mm512_loadu_ps(mask + i));
        _mm512_storeu_ps(y + i, v);
        max = _mm512_max_ps(v, max); /* a NaN v leaves max as it was, as at the scalar level */
    }
    float m = _mm512_reduce_max_ps(max);
    for (; i < n; i++) {
        y[i] = mask ? x[i] * scale + mask[i] : x[i] * scale;
        m = y[i] > m ? y[i] : m;
    }
    return m;
}

/* The 8 lanes of the sum order of cpu_math.h in one vector of doubles: each 16 elements add
 * their first 8, then their last 8. */
static double exp_sum_avx512(float *x, float max, int64_t n)
{
    const __m512 m = _mm512_set1_ps(max);
    __m512d sum = _mm512_setzero_pd();
    int64_t i = 0;
    for (; i + 16 <= n; i += 16) {
        const __m512 e = exp16(_mm512_sub_ps(_mm512_loadu_ps(x + i), m));
        _mm512_storeu_ps(x + i, e);
        sum = _mm512_add_pd(sum, _mm512_cvtps_pd(_mm512_castps512_ps256(e)));
        sum = _mm512_add_pd(sum, _mm512_cvtps_pd(_mm512_extractf32x8_ps(e, 1)));
    }
    if (i < n) {
        const __mmask16 k = tail_mask(i, n);
        const __m512 e = exp16(_mm512_sub_ps(_mm512_maskz_loadu_ps(k, x + i), m));
        _mm512_mask_storeu_ps(x + i, k, e);
        if (i + 8 <= n) {
            sum = _mm512_add_pd(sum, _mm512_cvtps_pd(_mm512_castps512_ps256(e)));
            i += 8;
        }
    }
    double lanes[CPU_EXP_SUM_LANES];
    _mm512_storeu_pd(lanes, sum);
    double total = cpu_exp_sum_lanes(lanes);
    for (; i < n; i++)
        total += x[i];
    return total;
}

const cpu_vec_kernels cpu_vec_avx512 = {silu_avx512,  swiglu_avx512, gelu_avx512, geglu_avx512,
                                        scale_mask_max_avx512, exp_sum_avx512};
