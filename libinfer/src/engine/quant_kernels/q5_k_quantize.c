/* q5_k_quantize.c - Q5_K quantizers: as Q4_K with 5-bit codes, the fifth bits kept in qh. */
#include "kquant_scale_min.h"

static const kquant_search_params q5_k_search = {.nmax = 31, .rmin = -0.5f, .rdelta = 0.1f,
                                                 .nstep = 15};

/* Low nibbles as Q4_K's qs; the fifth bit of element 64 * p + j is bit 2p of qh[j], of
 * element 64 * p + 32 + j bit 2p + 1. */
static void q5_k_store(const kquant_scale_min *h, const uint8_t *L, block_q5_K *y)
{
    y->d = h->d;
    y->dmin = h->dmin;
    memcpy(y->scales, h->scales, sizeof y->scales);
    memset(y->qh, 0, sizeof y->qh);
    for (int p = 0; p < QUANT_KBLOCK / 64; p++) {
        for (int j = 0; j < 32; j++) {
            int lo = L[64 * p + j], hi = L[64 * p + 32 + j];
            y->qh[j] |= (uint8_t)(((lo > 15) << (2 * p)) | ((hi > 15) << (2 * p + 1)));
            y->qs[32 * p + j] = (uint8_t)((lo > 15 ? lo - 16 : lo) | ((hi > 15 ? hi - 16 : hi) << 4));
        }
    }
}

static void q5_k_reference(const float *x, void *block)
{
    uint8_t L[QUANT_KBLOCK];
    kquant_scale_min h;
    kquant_scale_min_reference(x, &q5_k_search, L, &h);
    q5_k_store(&h, L, block);
}

static void q5_k_weighted(const float *x, const float *qw, float row_sigma2, void *block)
{
    (void)row_sigma2;
    uint8_t L[QUANT_KBLOCK];
    kquant_scale_min h;
    kquant_scale_min_weighted(x, qw, 31, true, L, &h);
    q5_k_store(&h, L, block);
}

static const search_quant_type q5_k = {
    .block_size = QUANT_KBLOCK,
    .block_bytes = sizeof(block_q5_K),
    .reference = q5_k_reference,
    .weighted = q5_k_weighted,
    .d_offset = offsetof(block_q5_K, d),
    .min_offset = offsetof(block_q5_K, dmin),
};

void inf_q5_k_from_float_scalar(const float *src, void *dst, int64_t n)
{
    search_quantize_reference(&q5_k, src, dst, n);
}

int64_t inf_q5_k_from_float_imatrix(const float *src, void *dst, int64_t n, const float *imatrix)
{
    return search_quantize_weighted(&q5_k, src, dst, n, imatrix);
}
