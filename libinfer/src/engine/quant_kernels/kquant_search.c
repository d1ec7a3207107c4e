/* kquant_search.c - the shared scale searches of the K-quant quantizers (see kquant_search.h).
 * Every expression keeps ggml's association and conversions (int codes become floats where
 * ggml's do, uint8_t/int8_t arrays wrap where ggml's do), because the codes chosen depend on
 * the last bit of these sums. */
#include "kquant_search.h"

#include <math.h>

/* Groups below this magnitude are all zero for the searches (ggml's GROUP_MAX_EPS). */
#define KQUANT_GROUP_EPS 1e-15f

static inline int clamp_int(int v, int lo, int hi)
{
    return v < lo ? lo : v > hi ? hi : v;
}

/* The element of largest magnitude, with its sign; the first one wins a tie. */
static float signed_max(int n, const float *x, float *amax_out)
{
    float max = 0.0f, amax = 0.0f;
    for (int i = 0; i < n; i++) {
        float ax = fabsf(x[i]);
        if (ax > amax) {
            amax = ax;
            max = x[i];
        }
    }
    *amax_out = amax;
    return max;
}

/* The weighted sums sum(w x l) and sum(w l^2) for the codes of inverse scale `iscale`. */
static void symmetric_sums(int n, int nmax, const float *x, const float *weights, float iscale,
                           float *sumlx, float *suml2)
{
    float slx = 0.0f, sl2 = 0.0f;
    for (int i = 0; i < n; i++) {
        int l = clamp_int(kquant_nearest_int(iscale * x[i]), -nmax, nmax - 1);
        float w = weights ? weights[i] : x[i] * x[i];
        slx += w * x[i] * (float)l;
        sl2 += w * (float)l * (float)l;
    }
    *sumlx = slx;
    *suml2 = sl2;
}

static void symmetric_codes(int n, int nmax, const float *x, float iscale, int8_t *L)
{
    for (int i = 0; i < n; i++)
        L[i] = (int8_t)(nmax + clamp_int(kquant_nearest_int(iscale * x[i]), -nmax, nmax - 1));
}

float kquant_symmetric_search(int n, int nmax, const float *x, int8_t *L, const float *weights)
{
    float amax;
    const float max = signed_max(n, x, &amax);
    if (amax < KQUANT_GROUP_EPS) {
        memset(L, 0, (size_t)n);
        return 0.0f;
    }
    float iscale = (float)-nmax / max;
    float sumlx, suml2;
    symmetric_sums(n, nmax, x, weights, iscale, &sumlx, &suml2);
    symmetric_codes(n, nmax, x, iscale, L);
    float scale = suml2 != 0.0f ? sumlx / suml2 : 0.0f;
    float best = scale * sumlx;
    for (int is = -9; is <= 9; is++) {
        if (is == 0)
            continue;
        iscale = -((float)nmax + 0.1f * (float)is) / max;
        symmetric_sums(n, nmax, x, weights, iscale, &sumlx, &suml2);
        if (suml2 > 0 && sumlx * sumlx > best * suml2) {
            symmetric_codes(n, nmax, x, iscale, L);
            scale = sumlx / suml2;
            best = scale * sumlx;
        }
    }
    return scale;
}

float kquant_q3_search(int n, int nmax, const float *x, int8_t *L)
{
    float amax;
    const float max = signed_max(n, x, &amax);
    if (amax < KQUANT_GROUP_EPS) {
        memset(L, 0, (size_t)n);
        return 0.0f;
    }
    const float iscale = (float)-nmax / max;
    float sumlx = 0.0f, suml2 = 0.0f;
    for (int i = 0; i < n; i++) {
        int l = clamp_int(kquant_nearest_int(iscale * x[i]), -nmax, nmax - 1);
        L[i] = (int8_t)l;
        float w = x[i] * x[i];
        sumlx += w * x[i] * (float)l;
        suml2 += w * (float)l * (float)l;
    }
    /* Move one code at a time to the value that best fits the others' scale. */
    for (int pass = 0; pass < 5; pass++) {
        int changed = 0;
        for (int i = 0; i < n; i++) {
            float w = x[i] * x[i];
            float slx = sumlx - w * x[i] * (float)L[i];
            if (!(slx > 0))
                continue;
            float sl2 = suml2 - w * (float)L[i] * (float)L[i];
            int l = clamp_int(kquant_nearest_int(x[i] * sl2 / slx), -nmax, nmax - 1);
            if (l == L[i])
                continue;
            slx += w * x[i] * (float)l;
            sl2 += w * (float)l * (float)l;
            if (sl2 > 0 && slx * slx * suml2 > sumlx * sumlx * sl2) {
                L[i] = (int8_t)l;
                sumlx = slx;
                suml2 = sl2;
                changed++;
            }
        }
        if (!changed)
            break;
    }
    for (int i = 0; i < n; i++)
        L[i] = (int8_t)(L[i] + nmax);
    return suml2 > 0.0f ? sumlx / suml2 : 0.0f;
}

/* Weighted error of codes L under scale and min: sum(w * |d|) or sum(w * d^2), d the
 * reconstruction error. */
static float affine_error(int n, const float *x, const float *weights, const uint8_t *L,
                          float scale, float min, bool use_mad)
{
    float err = 0.0f;
    for (int i = 0; i < n; i++) {
        float diff = scale * (float)L[i] + min - x[i];
        diff = use_mad ? fabsf(diff) : diff * diff;
        err += weights[i] * diff;
    }
    return err;
}

float kquant_min_search(int n, int nmax, const float *x, const float *weights, uint8_t *L,
                        float *min_out, float rmin, float rdelta, int nstep, bool use_mad)
{
    float min = x[0], max = x[0];
    float sum_w = weights[0];
    float sum_x = sum_w * x[0];
    for (int i = 1; i < n; i++) {
        if (x[i] < min)
            min = x[i];
        if (x[i] > max)
            max = x[i];
        sum_w += weights[i];
        sum_x += weights[i] * x[i];
    }
    if (min > 0)
        min = 0;
    if (max == min) {
        memset(L, 0, (size_t)n);
        *min_out = -min;
        return 0.0f;
    }
    float iscale = (float)nmax / (max - min);
    float scale = 1 / iscale;
    for (int i = 0; i < n; i++)
        L[i] = (uint8_t)clamp_int(kquant_nearest_int(iscale * (x[i] - min)), 0, nmax);
    float best_error = affine_error(n, x, weights, L, scale, min, use_mad);
    if (nstep < 1) {
        *min_out = -min;
        return scale;
    }
    uint8_t trial[KQUANT_MAX_GROUP];
    for (int is = 0; is <= nstep; is++) {
        iscale = (rmin + rdelta * (float)is + (float)nmax) / (max - min);
        float sum_l = 0, sum_l2 = 0, sum_xl = 0;
        for (int i = 0; i < n; i++) {
            int l = clamp_int(kquant_nearest_int(iscale * (x[i] - min)), 0, nmax);
            trial[i] = (uint8_t)l;
            float w = weights[i];
            sum_l += w * (float)l;
            sum_l2 += w * (float)l * (float)l;
            sum_xl += w * (float)l * x[i];
        }
        /* Least squares for scale and min, the min kept <= 0. */
        float D = sum_w * sum_l2 - sum_l * sum_l;
        if (!(D > 0))
            continue;
        float this_scale = (sum_w * sum_xl - sum_x * sum_l) / D;
        float this_min = (sum_l2 * sum_x - sum_l * sum_xl) / D;
        if (this_min > 0) {
            this_min = 0;
            this_scale = sum_xl / sum_l2;
        }
        float err = affine_error(n, x, weights, trial, this_scale, this_min, use_mad);
        if (err < best_error) {
            memcpy(L, trial, (size_t)n);
            best_error = err;
            scale = this_scale;
            min = this_min;
        }
    }
    *min_out = -min;
    return scale;
}

/* Weighted squared error of x against scale * min(nmax, round(iscale * x)). */
static float positive_error(int n, int nmax, const float *x, const float *weights, float iscale,
                            float scale)
{
    float mse = 0.0f;
    for (int i = 0; i < n; i++) {
        int l = kquant_nearest_int(iscale * x[i]);
        l = l < nmax ? l : nmax;
        float diff = x[i] - scale * (float)l;
        mse += weights[i] * diff * diff;
    }
    return mse;
}

float kquant_positive_search(int n, int nmax, const float *x, uint8_t *L, const float *weights)
{
    float max = 0.0f;
    for (int i = 0; i < n; i++)
        max = max > x[i] ? max : x[i];
    if (max < KQUANT_GROUP_EPS) {
        memset(L, 0, (size_t)n);
        return 0.0f;
    }
    float iscale = (float)nmax / max;
    for (int i = 0; i < n; i++)
        L[i] = (uint8_t)kquant_nearest_int(iscale * x[i]);
    /* The first error uses the stored (uint8_t) codes, unclamped, as ggml's does. */
    const float scale = 1 / iscale;
    float best_mse = 0.0f;
    for (int i = 0; i < n; i++) {
        float diff = x[i] - scale * (float)L[i];
        best_mse += weights[i] * diff * diff;
    }
    for (int is = -4; is <= 4; is++) {
        if (is == 0)
            continue;
        float iscale_is = (0.1f * (float)is + (float)nmax) / max;
        float mse = positive_error(n, nmax, x, weights, iscale_is, 1 / iscale_is);
        if (mse < best_mse) {
            best_mse = mse;
            iscale = iscale_is;
        }
    }
    float sumlx = 0.0f, suml2 = 0.0f;
    for (int i = 0; i < n; i++) {
        int l = kquant_nearest_int(iscale * x[i]);
        l = l < nmax ? l : nmax;
        L[i] = (uint8_t)l;
        sumlx += weights[i] * x[i] * (float)l;
        suml2 += weights[i] * (float)l * (float)l;
    }
    for (int pass = 0; pass < 5; pass++) {
        int changed = 0;
        for (int i = 0; i < n; i++) {
            float w = weights[i];
            float slx = sumlx - w * x[i] * (float)L[i];
            float sl2 = suml2 - w * (float)L[i] * (float)L[i];
            if (!(slx > 0 && sl2 > 0))
                continue;
            int l = kquant_nearest_int(x[i] * sl2 / slx);
            l = l < nmax ? l : nmax;
            if (l == L[i])
                continue;
            slx += w * x[i] * (float)l;
            sl2 += w * (float)l * (float)l;
            if (slx * slx * suml2 > sumlx * sumlx * sl2) {
                L[i] = (uint8_t)l;
                sumlx = slx;
                suml2 = sl2;
                changed++;
            }
        }
        if (!changed)
            break;
    }
    return suml2 > 0.0f ? sumlx / suml2 : 0.0f;
}
