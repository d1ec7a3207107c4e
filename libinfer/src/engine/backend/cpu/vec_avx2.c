/* vec_avx2.c - AVX2 row kernels: 8 exponentials at a time, same method as cpu_expf(). */
#include <immintrin.h>
#include <math.h>

#include "cpu_gelu.h"
#include "cpu_math.h"
#include "vec.h"

static inline __m256 exp8(__m256 x)
{
    const __m256 lo = _mm256_set1_ps(-87.0f), hi = _mm256_set1_ps(88.0f);
    const __m256 clamped = _mm256_min_ps(_mm256_max_ps(x, lo), hi);
    const __m256 n = _mm256_round_ps(_mm256_mul_ps(clamped, _mm256_set1_ps(1.44269504088896341f)),
                                     _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    __m256 r = _mm256_fnmadd_ps(n, _mm256_set1_ps(0.693359375f), clamped);
    r = _mm256_fnmadd_ps(n, _mm256_set1_ps(-2.12194440e-4f), r);
    __m256 p = _mm256_set1_ps(1.9875691500e-4f);
    p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.3981999507e-3f));
    p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(8.3334519073e-3f));
    p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(4.1665795894e-2f));
    p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.6666665459e-1f));
    p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(5.0000001201e-1f));
    p = _mm256_fmadd_ps(_mm256_mul_ps(p, r), r, _mm256_add_ps(r, _mm256_set1_ps(1.0f)));
    const __m256i bits = _mm256_slli_epi32(_mm256_add_epi32(_mm256_cvtps_epi32(n), _mm256_set1_epi32(127)), 23);
    const __m256 e = _mm256_mul_ps(p, _mm256_castsi256_ps(bits));
    return _mm256_and_ps(e, _mm256_cmp_ps(x, lo, _CMP_GE_OQ));
}

static inline __m256 silu8(__m256 x)
{
    const __m256 e = exp8(_mm256_sub_ps(_mm256_setzero_ps(), x));
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
        max = _mm256_max_ps(max, v);
    }
    float lanes[8], m = -INFINITY;
    _mm256_storeu_ps(lanes, max);
    for (int l = 0; l < 8; l++)
        m = lanes[l] > m ? lanes[l] : m;
    for (; i < n; i++) {
        y[i] = x[i] * scale + (mask ? mask[i] : 0.0f);
        m = y[i] > m ? y[i] : m;
    }
    return m;
}

static double exp_sum_avx2(float *x, float max, int64_t n)
{
    const __m256 m = _mm256_set1_ps(max);
    __m256d sum0 = _mm256_setzero_pd(), sum1 = _mm256_setzero_pd();
    int64_t i = 0;
    for (; i + 8 <= n; i += 8) {
        const __m256 e = exp8(_mm256_sub_ps(_mm256_loadu_ps(x + i), m));
        _mm256_storeu_ps(x + i, e);
        sum0 = _mm256_add_pd(sum0, _mm256_cvtps_pd(_mm256_castps256_ps128(e)));
        sum1 = _mm256_add_pd(sum1, _mm256_cvtps_pd(_mm256_extractf128_ps(e, 1)));
    }
    double lanes[4];
    _mm256_storeu_pd(lanes, _mm256_add_pd(sum0, sum1));
    double sum = lanes[0] + lanes[1] + lanes[2] + lanes[3];
    for (; i < n; i++) {
        x[i] = cpu_expf(x[i] - max);
        sum += x[i];
    }
    return sum;
}

const cpu_vec_kernels cpu_vec_avx2 = {silu_avx2,  swiglu_avx2, gelu_avx2, geglu_avx2,
                                      scale_mask_max_avx2, exp_sum_avx2};
