/* kquant_search.h - the scale searches the K-quant quantizers (and the importance-weighted legacy
 * quantizers) share: for a group of values, integer codes and a scale (and a minimum) that
 * minimise a weighted squared or absolute error. They follow ggml's make_qx_quants,
 * make_q3_quants, make_qkx2_quants/make_qkx3_quants and make_qp_quants operation for operation
 * (same float order, no fused multiply-add), so the bytes written equal ggml's on every CPU.
 * Private to libinfer. */
#ifndef INF_KQUANT_SEARCH_H
#define INF_KQUANT_SEARCH_H

#include <stdbool.h>
#include <stdint.h>
#include <string.h>

/* The largest group a search handles (a Q4_K/Q5_K sub-block, or a legacy 32-element block). */
#define KQUANT_MAX_GROUP 32

/* Round to nearest, ties to even, by adding 1.5 * 2^23 and reading the low mantissa bits, as
 * ggml does: exact for |v| < 2^22; for anything else (huge, Inf, NaN) the same bit arithmetic
 * gives the same, platform-independent integer (a NaN's sign bit never reaches the result). */
static inline int kquant_nearest_int(float v)
{
    float shifted = v + 12582912.0f;
    int32_t bits;
    memcpy(&bits, &shifted, sizeof bits);
    return (bits & 0x007FFFFF) - 0x00400000;
}

/* Symmetric codes L[i] = l + nmax, l in [-nmax, nmax - 1], for x ~ scale * l, minimising
 * sum(w * (x - scale * l)^2) over 19 trial scales around nmax / max|x| (ggml's make_qx_quants
 * with rmse_type 1). weights NULL means w = x^2. Returns the scale; 0 (codes 0) when max|x| is
 * below 1e-15. */
float kquant_symmetric_search(int n, int nmax, const float *x, int8_t *L, const float *weights);

/* Symmetric 3-bit-style codes for the Q3_K reference (ggml's make_q3_quants with do_rmse): a
 * first guess, then up to five passes moving single codes while the x^2-weighted fit improves.
 * L[i] = l + nmax. Returns the scale (0 for a group below 1e-15). */
float kquant_q3_search(int n, int nmax, const float *x, int8_t *L);

/* Codes L[i] in [0, nmax] with x ~ scale * L - min_out, min_out >= 0 (ggml's make_qkx2_quants
 * and make_qkx3_quants, identical for finite input): nstep + 1 trial scales
 * (rmin + rdelta * is + nmax) / (max - min), each refined by weighted least squares for scale
 * and minimum, the best by weighted squared (or absolute, use_mad) error kept. weights must not
 * be NULL. Returns the scale; *min_out receives the minimum to subtract. */
float kquant_min_search(int n, int nmax, const float *x, const float *weights, uint8_t *L,
                        float *min_out, float rmin, float rdelta, int nstep, bool use_mad);

/* Codes L[i] in [0, nmax] for non-negative x (the sub-block scales or minimums of an
 * importance-weighted super-block) with x ~ scale * L (ggml's make_qp_quants): 9 trial scales,
 * then up to five passes moving single codes. Returns the scale (0 when max x < 1e-15). */
float kquant_positive_search(int n, int nmax, const float *x, uint8_t *L, const float *weights);

#endif
