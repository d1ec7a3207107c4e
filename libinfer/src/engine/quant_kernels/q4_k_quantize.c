/* q4_k_quantize.c - Q4_K quantizers: 8 sub-blocks of 32 with 4-bit codes, 6-bit scales and
 * minimums (searched in kquant_scale_min.c). */
#include "kquant_scale_min.h"

static const kquant_search_params q4_k_search = {.nmax = 15, .rmin = -1.0f, .rdelta = 0.1f,
                                                 .nstep = 20};

/* qs[32 * p + j]: element 64 * p + j in the low nibble, 64 * p + 32 + j in the high one. */
static void q4_k_store(const kquant_scale_min *h, const uint8_t *L, block_q4_K *y)
{
    y->d = h->d;
    y->dmin = h->dmin;
    memcpy(y->scales, h->scales, sizeof y->scales);
    for (int p = 0; p < QUANT_KBLOCK / 64; p++)
        for (int j = 0; j < 32; j++)
            y->qs[32 * p + j] = (uint8_t)(L[64 * p + j] | (L[64 * p + 32 + j] << 4));
}

static void q4_k_reference(const float *x, void *block)
{
    uint8_t L[QUANT_KBLOCK];
    kquant_scale_min h;
    kquant_scale_min_reference(x, &q4_k_search, L, &h);
    q4_k_store(&h, L, block);
}

static void q4_k_weighted(const float *x, const float *qw, float row_sigma2, void *block)
{
    (void)row_sigma2;
    uint8_t L[QUANT_KBLOCK];
    kquant_scale_min h;
    kquant_scale_min_weighted(x, qw, 15, false, L, &h);
    q4_k_store(&h, L, block);
}

static const search_quant_type q4_k = {
    .block_size = QUANT_KBLOCK,
    .block_bytes = sizeof(block_q4_K),
    .reference = q4_k_reference,
    .weighted = q4_k_weighted,
    .d_offset = offsetof(block_q4_K, d),
    .min_offset = offsetof(block_q4_K, dmin),
};

void inf_q4_k_from_float_scalar(const float *src, void *dst, int64_t n)
{
    search_quantize_reference(&q4_k, src, dst, n);
}

int64_t inf_q4_k_from_float_imatrix(const float *src, void *dst, int64_t n, const float *imatrix)
{
    return search_quantize_weighted(&q4_k, src, dst, n, imatrix);
}
