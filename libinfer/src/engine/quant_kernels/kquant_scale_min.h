/* kquant_scale_min.h - the scale and minimum search Q4_K and Q5_K share (8 sub-blocks of 32,
 * 6-bit scales and minimums under fp16 d and dmin). Private to libinfer. */
#ifndef INF_KQUANT_SCALE_MIN_H
#define INF_KQUANT_SCALE_MIN_H

#include "kquant_quantize.h"

/* The header fields of a Q4_K/Q5_K super-block, as searched. */
typedef struct kquant_scale_min {
    inf_fp16 d;
    inf_fp16 dmin;
    uint8_t scales[QUANT_KSCALE_BYTES];
} kquant_scale_min;

/* The trial scales of the reference search: codes 0..nmax, nstep + 1 trials from rmin in steps
 * of rdelta (see kquant_min_search). */
typedef struct kquant_search_params {
    int nmax;
    float rmin, rdelta;
    int nstep;
} kquant_search_params;

/* ggml's reference search of a super-block x[0..256): fills *out and the codes L[0..256). */
void kquant_scale_min_reference(const float *x, const kquant_search_params *p, uint8_t *L,
                                kquant_scale_min *out);

/* ggml's importance-weighted search with weights qw[0..256); cap_codes caps the 6-bit codes at
 * 63 as Q5_K does (Q4_K does not). */
void kquant_scale_min_weighted(const float *x, const float *qw, int nmax, bool cap_codes,
                               uint8_t *L, kquant_scale_min *out);

#endif
