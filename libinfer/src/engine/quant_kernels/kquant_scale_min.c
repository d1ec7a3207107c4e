/* kquant_scale_min.c - the part Q4_K and Q5_K share: 8 sub-blocks of 32, each with a 6-bit
 * scale and a 6-bit minimum relative to the super-block's fp16 d and dmin, searched by
 * ggml's rules (see kquant_scale_min.h). The callers pack the codes. */
#include "kquant_scale_min.h"

/* Codes from the stored (rounded) scales and minimums; a sub-block whose scale rounded to zero
 * keeps the search's codes. */
static void requantize(const float *x, int nmax, uint8_t *L, const kquant_scale_min *out)
{
    const float d_all = quant_fp16_to_fp32(out->d), dmin_all = quant_fp16_to_fp32(out->dmin);
    for (int j = 0; j < QUANT_KBLOCK / 32; j++) {
        uint8_t sc, m;
        quant_kscale_min(out->scales, j, &sc, &m);
        const float d = d_all * (float)sc;
        if (d == 0.0f)
            continue;
        const float dm = dmin_all * (float)m;
        for (int i = 0; i < 32; i++) {
            int l = kquant_nearest_int((x[32 * j + i] + dm) / d);
            L[32 * j + i] = (uint8_t)(l < 0 ? 0 : l > nmax ? nmax : l);
        }
    }
}

void kquant_scale_min_reference(const float *x, const kquant_search_params *p, uint8_t *L,
                                kquant_scale_min *out)
{
    float weights[32], mins[8], scales[8];
    float max_scale = 0.0f, max_min = 0.0f;
    for (int j = 0; j < 8; j++) {
        /* Weights |x| + the sub-block's root mean square. */
        float sum_x2 = 0.0f;
        for (int i = 0; i < 32; i++)
            sum_x2 += x[32 * j + i] * x[32 * j + i];
        const float av_x = sqrtf(sum_x2 / 32);
        for (int i = 0; i < 32; i++)
            weights[i] = av_x + fabsf(x[32 * j + i]);
        scales[j] = kquant_min_search(32, p->nmax, x + 32 * j, weights, L + 32 * j, &mins[j],
                                      p->rmin, p->rdelta, p->nstep, false);
        if (scales[j] > max_scale)
            max_scale = scales[j];
        if (mins[j] > max_min)
            max_min = mins[j];
    }
    const float inv_scale = max_scale > 0 ? 63.0f / max_scale : 0.0f;
    const float inv_min = max_min > 0 ? 63.0f / max_min : 0.0f;
    for (int j = 0; j < 8; j++) {
        uint8_t ls = (uint8_t)kquant_nearest_int(inv_scale * scales[j]);
        uint8_t lm = (uint8_t)kquant_nearest_int(inv_min * mins[j]);
        kquant_put_scale_min(out->scales, j, ls < 63 ? ls : 63, lm < 63 ? lm : 63);
    }
    out->d = quant_fp32_to_fp16(max_scale / 63.0f);
    out->dmin = quant_fp32_to_fp16(max_min / 63.0f);
    requantize(x, p->nmax, L, out);
}

void kquant_scale_min_weighted(const float *x, const float *qw, int nmax, bool cap_codes,
                               uint8_t *L, kquant_scale_min *out)
{
    float weights[32], sw[8], mins[8], scales[8];
    uint8_t Ls[8], Lm[8];
    float sum_x2 = 0.0f;
    for (int i = 0; i < QUANT_KBLOCK; i++)
        sum_x2 += x[i] * x[i];
    const float sigma2 = 2 * sum_x2 / (float)QUANT_KBLOCK;
    for (int j = 0; j < 8; j++) {
        float sumw = 0.0f;
        for (int i = 0; i < 32; i++) {
            weights[i] = qw[32 * j + i] * sqrtf(sigma2 + x[32 * j + i] * x[32 * j + i]);
            sumw += weights[i];
        }
        sw[j] = sumw;
        scales[j] = kquant_min_search(32, nmax, x + 32 * j, weights, L + 32 * j, &mins[j], -0.9f,
                                      0.05f, 36, false);
    }
    const float d_block = kquant_positive_search(8, 63, scales, Ls, sw);
    const float m_block = kquant_positive_search(8, 63, mins, Lm, sw);
    for (int j = 0; j < 8; j++) {
        /* Q5_K caps the codes at 63 (a negative code wrapped to uint8_t becomes 63), Q4_K does
         * not (it stores the wrapped byte). */
        uint8_t ls = Ls[j], lm = Lm[j];
        if (cap_codes) {
            ls = ls < 63 ? ls : 63;
            lm = lm < 63 ? lm : 63;
        }
        kquant_put_scale_min(out->scales, j, ls, lm);
    }
    out->d = quant_fp32_to_fp16(d_block);
    out->dmin = quant_fp32_to_fp16(m_block);
    requantize(x, nmax, L, out);
}
