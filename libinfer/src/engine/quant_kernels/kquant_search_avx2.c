/* kquant_search_avx2.c - kquant_min_search for 8 groups at once with AVX2, one group per lane.
 * Each lane performs exactly the scalar search's float operations in the scalar order (IEEE
 * add, mul, div, compare and select; no FMA), so the codes, scales and minimums are bit for bit
 * those of kquant_search.c: the speed comes from running 8 groups side by side, not from
 * reordering any sum. */
#include <immintrin.h>

#include "kquant_search.h"

/* kquant_nearest_int in every lane. */
static inline __m256i nearest_int8(__m256 v)
{
    __m256i bits = _mm256_castps_si256(_mm256_add_ps(v, _mm256_set1_ps(12582912.0f)));
    return _mm256_sub_epi32(_mm256_and_si256(bits, _mm256_set1_epi32(0x007FFFFF)),
                            _mm256_set1_epi32(0x00400000));
}

/* round(iscale * (x - min)) clamped to [0, nmax]. */
static inline __m256i affine_code(__m256 iscale, __m256 x, __m256 min, __m256i nmax)
{
    __m256i l = nearest_int8(_mm256_mul_ps(iscale, _mm256_sub_ps(x, min)));
    return _mm256_min_epi32(_mm256_max_epi32(l, _mm256_setzero_si256()), nmax);
}

/* sum(w * |scale * L + min - x|) or sum(w * (scale * L + min - x)^2), in element order. */
static inline __m256 affine_error8(int n, const __m256 *x, const __m256 *w, const __m256i *L,
                                   __m256 scale, __m256 min, bool use_mad)
{
    const __m256 abs_mask = _mm256_castsi256_ps(_mm256_set1_epi32(0x7FFFFFFF));
    __m256 err = _mm256_setzero_ps();
    for (int i = 0; i < n; i++) {
        __m256 diff = _mm256_sub_ps(
            _mm256_add_ps(_mm256_mul_ps(scale, _mm256_cvtepi32_ps(L[i])), min), x[i]);
        diff = use_mad ? _mm256_and_ps(diff, abs_mask) : _mm256_mul_ps(diff, diff);
        err = _mm256_add_ps(err, _mm256_mul_ps(w[i], diff));
    }
    return err;
}

void kquant_min_search_x8_avx2(int n, int nmax, const float *x, const float *weights, uint8_t *L,
                               float *scales, float *mins, float rmin, float rdelta, int nstep,
                               bool use_mad)
{
    if (n < 1 || n > KQUANT_MAX_GROUP)
        return;
    const __m256i stride = _mm256_mullo_epi32(_mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7),
                                              _mm256_set1_epi32(n));
    const __m256i vnmax = _mm256_set1_epi32(nmax);
    const __m256 zero = _mm256_setzero_ps();
    __m256 xv[KQUANT_MAX_GROUP], wv[KQUANT_MAX_GROUP];
    __m256i lv[KQUANT_MAX_GROUP], trial[KQUANT_MAX_GROUP];
    for (int i = 0; i < n; i++) {
        xv[i] = _mm256_i32gather_ps(x + i, stride, 4);
        wv[i] = _mm256_i32gather_ps(weights + i, stride, 4);
    }
    /* minps(a, b) is a < b ? a : b, the scalar `if (x < min) min = x` (maxps likewise). */
    __m256 min = xv[0], max = xv[0], sum_w = wv[0];
    __m256 sum_x = _mm256_mul_ps(sum_w, xv[0]);
    for (int i = 1; i < n; i++) {
        min = _mm256_min_ps(xv[i], min);
        max = _mm256_max_ps(xv[i], max);
        sum_w = _mm256_add_ps(sum_w, wv[i]);
        sum_x = _mm256_add_ps(sum_x, _mm256_mul_ps(wv[i], xv[i]));
    }
    min = _mm256_blendv_ps(min, zero, _mm256_cmp_ps(min, zero, _CMP_GT_OQ));
    const __m256 flat = _mm256_cmp_ps(max, min, _CMP_EQ_OQ);
    const __m256 flat_min = min;
    __m256 iscale = _mm256_div_ps(_mm256_set1_ps((float)nmax), _mm256_sub_ps(max, min));
    __m256 scale = _mm256_div_ps(_mm256_set1_ps(1.0f), iscale);
    for (int i = 0; i < n; i++)
        lv[i] = affine_code(iscale, xv[i], min, vnmax);
    __m256 best = affine_error8(n, xv, wv, lv, scale, min, use_mad);
    for (int is = 0; nstep >= 1 && is <= nstep; is++) {
        /* The scalar search's numerator, then per lane over the lane's current max - min. */
        const float num = rmin + rdelta * (float)is + (float)nmax;
        iscale = _mm256_div_ps(_mm256_set1_ps(num), _mm256_sub_ps(max, min));
        __m256 sum_l = zero, sum_l2 = zero, sum_xl = zero;
        for (int i = 0; i < n; i++) {
            trial[i] = affine_code(iscale, xv[i], min, vnmax);
            __m256 lf = _mm256_cvtepi32_ps(trial[i]);
            __m256 wl = _mm256_mul_ps(wv[i], lf);
            sum_l = _mm256_add_ps(sum_l, wl);
            sum_l2 = _mm256_add_ps(sum_l2, _mm256_mul_ps(wl, lf));
            sum_xl = _mm256_add_ps(sum_xl, _mm256_mul_ps(wl, xv[i]));
        }
        __m256 D = _mm256_sub_ps(_mm256_mul_ps(sum_w, sum_l2), _mm256_mul_ps(sum_l, sum_l));
        __m256 fits = _mm256_cmp_ps(D, zero, _CMP_GT_OQ);
        if (_mm256_movemask_ps(fits) == 0)
            continue;
        __m256 this_scale = _mm256_div_ps(
            _mm256_sub_ps(_mm256_mul_ps(sum_w, sum_xl), _mm256_mul_ps(sum_x, sum_l)), D);
        __m256 this_min = _mm256_div_ps(
            _mm256_sub_ps(_mm256_mul_ps(sum_l2, sum_x), _mm256_mul_ps(sum_l, sum_xl)), D);
        __m256 positive = _mm256_cmp_ps(this_min, zero, _CMP_GT_OQ);
        this_min = _mm256_blendv_ps(this_min, zero, positive);
        this_scale = _mm256_blendv_ps(this_scale, _mm256_div_ps(sum_xl, sum_l2), positive);
        __m256 err = affine_error8(n, xv, wv, trial, this_scale, this_min, use_mad);
        __m256 take = _mm256_and_ps(fits, _mm256_cmp_ps(err, best, _CMP_LT_OQ));
        if (_mm256_movemask_ps(take) == 0)
            continue;
        for (int i = 0; i < n; i++)
            lv[i] = _mm256_castps_si256(_mm256_blendv_ps(_mm256_castsi256_ps(lv[i]),
                                                         _mm256_castsi256_ps(trial[i]), take));
        best = _mm256_blendv_ps(best, err, take);
        scale = _mm256_blendv_ps(scale, this_scale, take);
        min = _mm256_blendv_ps(min, this_min, take);
    }
    /* A flat group: codes 0, scale 0, the minimum as clamped. */
    scale = _mm256_blendv_ps(scale, zero, flat);
    min = _mm256_blendv_ps(min, flat_min, flat);
    const __m256 sign = _mm256_set1_ps(-0.0f);
    _mm256_storeu_ps(scales, scale);
    _mm256_storeu_ps(mins, _mm256_xor_ps(min, sign));
    const int flat_bits = _mm256_movemask_ps(flat);
    for (int i = 0; i < n; i++) {
        int32_t lanes[8];
        _mm256_storeu_si256((__m256i *)lanes, lv[i]);
        for (int g = 0; g < 8; g++)
            L[n * g + i] = (uint8_t)((flat_bits >> g) & 1 ? 0 : lanes[g]);
    }
}

/* round(iscale * x) clamped to [-nmax, nmax - 1]. */
static inline __m256i symmetric_code(__m256 iscale, __m256 x, int nmax)
{
    __m256i l = nearest_int8(_mm256_mul_ps(iscale, x));
    return _mm256_min_epi32(_mm256_max_epi32(l, _mm256_set1_epi32(-nmax)),
                            _mm256_set1_epi32(nmax - 1));
}

/* sum(w x l) and sum(w l^2) in element order, wx = w * x. */
static inline void symmetric_sums8(int n, int nmax, const __m256 *x, const __m256 *w,
                                   const __m256 *wx, __m256 iscale, __m256i *l, __m256 *slx,
                                   __m256 *sl2)
{
    __m256 a = _mm256_setzero_ps(), b = _mm256_setzero_ps();
    for (int i = 0; i < n; i++) {
        l[i] = symmetric_code(iscale, x[i], nmax);
        __m256 lf = _mm256_cvtepi32_ps(l[i]);
        a = _mm256_add_ps(a, _mm256_mul_ps(wx[i], lf));
        b = _mm256_add_ps(b, _mm256_mul_ps(_mm256_mul_ps(w[i], lf), lf));
    }
    *slx = a;
    *sl2 = b;
}

void kquant_symmetric_search_x8_avx2(int n, int nmax, const float *x, const float *weights,
                                     int8_t *L, float *scales)
{
    if (n < 1 || n > KQUANT_MAX_GROUP)
        return;
    const __m256i stride = _mm256_mullo_epi32(_mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7),
                                              _mm256_set1_epi32(n));
    const __m256 zero = _mm256_setzero_ps();
    const __m256 abs_mask = _mm256_castsi256_ps(_mm256_set1_epi32(0x7FFFFFFF));
    __m256 xv[KQUANT_MAX_GROUP], wv[KQUANT_MAX_GROUP], wxv[KQUANT_MAX_GROUP];
    __m256i lv[KQUANT_MAX_GROUP], trial[KQUANT_MAX_GROUP];
    __m256 max = zero, amax = zero;
    for (int i = 0; i < n; i++) {
        xv[i] = _mm256_i32gather_ps(x + i, stride, 4);
        wv[i] = weights ? _mm256_i32gather_ps(weights + i, stride, 4) : _mm256_mul_ps(xv[i], xv[i]);
        wxv[i] = _mm256_mul_ps(wv[i], xv[i]);
        __m256 ax = _mm256_and_ps(xv[i], abs_mask);
        __m256 larger = _mm256_cmp_ps(ax, amax, _CMP_GT_OQ);
        amax = _mm256_blendv_ps(amax, ax, larger);
        max = _mm256_blendv_ps(max, xv[i], larger);
    }
    const __m256 tiny = _mm256_cmp_ps(amax, _mm256_set1_ps(1e-15f), _CMP_LT_OQ);
    __m256 iscale = _mm256_div_ps(_mm256_set1_ps((float)-nmax), max);
    __m256 slx, sl2;
    symmetric_sums8(n, nmax, xv, wv, wxv, iscale, lv, &slx, &sl2);
    /* scalar: suml2 != 0 ? sumlx / suml2 : 0 (NaN != 0 holds) */
    __m256 scale = _mm256_blendv_ps(zero, _mm256_div_ps(slx, sl2),
                                    _mm256_cmp_ps(sl2, zero, _CMP_NEQ_UQ));
    __m256 best = _mm256_mul_ps(scale, slx);
    for (int is = -9; is <= 9; is++) {
        if (is == 0)
            continue;
        const float num = -((float)nmax + 0.1f * (float)is);
        iscale = _mm256_div_ps(_mm256_set1_ps(num), max);
        symmetric_sums8(n, nmax, xv, wv, wxv, iscale, trial, &slx, &sl2);
        __m256 take = _mm256_and_ps(
            _mm256_cmp_ps(sl2, zero, _CMP_GT_OQ),
            _mm256_cmp_ps(_mm256_mul_ps(slx, slx), _mm256_mul_ps(best, sl2), _CMP_GT_OQ));
        if (_mm256_movemask_ps(take) == 0)
            continue;
        for (int i = 0; i < n; i++)
            lv[i] = _mm256_castps_si256(_mm256_blendv_ps(_mm256_castsi256_ps(lv[i]),
                                                         _mm256_castsi256_ps(trial[i]), take));
        scale = _mm256_blendv_ps(scale, _mm256_div_ps(slx, sl2), take);
        best = _mm256_blendv_ps(best, _mm256_mul_ps(scale, slx), take);
    }
    /* A group below 1e-15: codes 0, scale 0. */
    _mm256_storeu_ps(scales, _mm256_blendv_ps(scale, zero, tiny));
    const int tiny_bits = _mm256_movemask_ps(tiny);
    for (int i = 0; i < n; i++) {
        int32_t lanes[8];
        _mm256_storeu_si256((__m256i *)lanes, lv[i]);
        for (int g = 0; g < 8; g++)
            L[n * g + i] = (int8_t)((tiny_bits >> g) & 1 ? 0 : nmax + lanes[g]);
    }
}
