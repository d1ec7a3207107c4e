/* quant_data.h - test inputs for the quantizers: blocks of 32 floats of many kinds (random,
 * exact rounding ties, zeros, extremes, denormals), shared by the SIMD and oracle tests. */
#ifndef QUANT_DATA_H
#define QUANT_DATA_H

#include <stdbool.h>
#include <stdint.h>

/* Which kinds of block to generate. */
typedef enum quant_data_set {
    /* Finite inputs on which ggml's reference is fully defined by C, so any faithful port
     * agrees with it: random data, ties, +0 blocks, +-65504, 1e-30, wide ranges. */
    QUANT_DATA_DEFINED,
    /* DEFINED plus blocks whose codes come from casting Inf/NaN to an integer, undefined in C
     * and fixed by x86's cvttss2si (which ggml, gguf-py's numpy and our kernels share on x86):
     * denormal blocks (1/d overflows), near-FLT_MAX blocks (max - min overflows), and random
     * bit patterns (every finite float). */
    QUANT_DATA_X86_CASTS,
    /* X86_CASTS plus signed-zero extremes (-0.0 blocks, zero minimum or maximum of either
     * sign), where ggml's first-wins compares pick a zero's sign that numpy's min/max/argmax do
     * not reproduce. */
    QUANT_DATA_ALL,
} quant_data_set;

/* Fill x[0..n) (n a multiple of 32) with blocks cycling through the kinds of `set`, from a
 * deterministic generator seeded with `seed`. */
void quant_data_fill(float *x, int64_t n, uint64_t seed, quant_data_set set);

/* Fill x[0..n) (n a multiple of 256) for the K-quant tests: every third super-block of 256 is
 * eight blocks of quant_data_fill(set), the others one kind throughout: Gaussian weights, tiny
 * (1e-25) or large (1e4) ones, signed zeros, one constant, or a single nonzero value. */
void quant_data_fill_k(float *x, int64_t n, uint64_t seed, quant_data_set set);

/* Fill a rows x cols matrix (cols a multiple of 256): even rows quant_data_fill_k(ALL), odd
 * rows Gaussian weights of one scale (2^-16 .. 2^7) with every seventh block of 32 zero. The
 * odd rows keep a row's mean square finite, which the legacy types' weighted search needs. */
void quant_data_fill_rows(float *x, int64_t rows, int64_t cols, uint64_t seed);

/* Next value of a splitmix64 generator. */
uint64_t quant_data_next(uint64_t *state);

#endif
