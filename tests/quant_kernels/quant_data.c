/* quant_data.c - block generators for the quantizer tests (see quant_data.h). */
#include "quant_data.h"

#include <float.h>
#include <math.h>
#include <string.h>

uint64_t quant_data_next(uint64_t *state)
{
    uint64_t z = (*state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

static double uniform(uint64_t *s)
{
    return (double)(quant_data_next(s) >> 11) * 0x1p-53;
}

static int below(uint64_t *s, int n)
{
    return (int)(quant_data_next(s) % (uint64_t)n);
}

static float gaussian(uint64_t *s)
{
    double u = uniform(s), v = uniform(s);
    return (float)(sqrt(-2.0 * log(u + 1e-300)) * cos(6.283185307179586 * v));
}

typedef void (*block_fn)(float *x, uint64_t *s);

/* Gaussian values, scale 1e-6 .. 1e6. */
static void block_random(float *x, uint64_t *s)
{
    float scale = powf(10.0f, (float)(uniform(s) * 12.0 - 6.0));
    for (int j = 0; j < 32; j++)
        x[j] = gaussian(s) * scale;
}

/* amax = 127 * 2^e makes d = 2^e exact, so x / d = k + 0.5 are exact rounding ties for Q8. */
static void block_q8_ties(float *x, uint64_t *s)
{
    float step = ldexpf(1.0f, below(s, 40) - 20);
    for (int j = 0; j < 32; j++)
        x[j] = ((float)(below(s, 254) - 127) + 0.5f) * step;
    x[below(s, 32)] = (below(s, 2) ? 127.0f : -127.0f) * step;
}

/* max = -8 * 2^e makes d = 2^e exact, so x * id + 8.5 lands exactly on integers and halves. */
static void block_q4_ties(float *x, uint64_t *s)
{
    float step = ldexpf(1.0f, below(s, 40) - 20);
    for (int j = 0; j < 32; j++)
        x[j] = (float)(below(s, 31) - 15) * 0.5f * step;
    x[below(s, 32)] = 0.49999997f * step;
    x[below(s, 32)] = (below(s, 2) ? -8.0f : 8.0f) * step;
}

/* Values on a grid of 1/2 steps so that (x - min) * id hits exact halves for Q4_1/Q5_1. */
static void block_min_ties(float *x, uint64_t *s)
{
    float step = ldexpf(1.0f, below(s, 20) - 10);
    int levels = below(s, 2) ? 15 : 31;
    for (int j = 0; j < 32; j++)
        x[j] = (float)below(s, 2 * levels + 1) * 0.5f * step - 3.0f * step;
    x[0] = -3.0f * step;
    x[1] = (float)levels * step - 3.0f * step;
}

static void block_zero(float *x, uint64_t *s)
{
    (void)s;
    memset(x, 0, 32 * sizeof *x);
}

/* One nonzero value, +-, anywhere. */
static void block_single(float *x, uint64_t *s)
{
    block_zero(x, s);
    x[below(s, 32)] = gaussian(s) * 100.0f;
}

/* The largest magnitude appears with both signs: the first one decides Q4_0/Q5_0's d. */
static void block_twin_extremes(float *x, uint64_t *s)
{
    block_random(x, s);
    float a = 0.0f;
    for (int j = 0; j < 32; j++)
        a = fmaxf(a, fabsf(x[j]));
    int i = below(s, 31);
    x[i] = below(s, 2) ? a * 2 : -a * 2;
    x[i + 1 + below(s, 31 - i)] = -x[i];
}

/* fp16's largest finite values among small ones; d and m must not overflow. */
static void block_fp16_extremes(float *x, uint64_t *s)
{
    for (int j = 0; j < 32; j++)
        x[j] = gaussian(s) * 1000.0f;
    x[below(s, 32)] = 65504.0f;
    x[below(s, 32)] = -65504.0f;
}

static void block_tiny(float *x, uint64_t *s)
{
    for (int j = 0; j < 32; j++)
        x[j] = gaussian(s) * 1e-30f;
}

/* 1e30 next to 1e-30 and zeros: everything small quantizes to the middle code. */
static void block_wide_range(float *x, uint64_t *s)
{
    for (int j = 0; j < 32; j++) {
        int k = below(s, 3);
        x[j] = k == 0 ? gaussian(s) * 1e30f : k == 1 ? gaussian(s) * 1e-30f : 0.0f;
    }
}

/* ReLU-like: minimum exactly +0 among positives. */
static void block_relu(float *x, uint64_t *s)
{
    for (int j = 0; j < 32; j++)
        x[j] = fmaxf(gaussian(s), 0.0f);
    x[below(s, 32)] = 0.0f;
}

/* All equal: max - min = 0 gives d = 0 for Q4_1/Q5_1. */
static void block_constant(float *x, uint64_t *s)
{
    float v = gaussian(s);
    for (int j = 0; j < 32; j++)
        x[j] = v;
}

static void block_negative_zero(float *x, uint64_t *s)
{
    (void)s;
    for (int j = 0; j < 32; j++)
        x[j] = -0.0f;
}

/* +0 and -0 mixed with values of one sign, so the zero is the minimum or the maximum. */
static void block_signed_zero_extreme(float *x, uint64_t *s)
{
    float sign = below(s, 2) ? 1.0f : -1.0f;
    for (int j = 0; j < 32; j++)
        x[j] = sign * (fabsf(gaussian(s)) + 0.1f);
    for (int k = 0; k < 3; k++)
        x[below(s, 32)] = below(s, 2) ? -0.0f : 0.0f;
}

/* Denormals only: 1/d overflows to Inf and codes come from x86's cast of Inf/NaN. */
static void block_denormal(float *x, uint64_t *s)
{
    for (int j = 0; j < 32; j++)
        x[j] = gaussian(s) * 1e-40f;
}

/* Near FLT_MAX with both signs: max - min overflows to Inf. */
static void block_huge(float *x, uint64_t *s)
{
    for (int j = 0; j < 32; j++)
        x[j] = (float)(uniform(s) * 2.0 - 1.0) * FLT_MAX;
}

/* Random bit patterns, NaN and Inf replaced by random finite values. */
static void block_bits(float *x, uint64_t *s)
{
    for (int j = 0; j < 32; j++) {
        uint32_t u = (uint32_t)quant_data_next(s);
        if ((u & 0x7F800000) == 0x7F800000)
            u &= 0xBFFFFFFF;
        memcpy(&x[j], &u, sizeof u);
    }
}

static const block_fn defined_blocks[] = {
    block_random,  block_q8_ties,       block_q4_ties,       block_min_ties,
    block_zero,    block_single,        block_twin_extremes, block_fp16_extremes,
    block_tiny,    block_wide_range,    block_relu,          block_constant,
};

static const block_fn x86_cast_blocks[] = {block_denormal, block_huge, block_bits};

static const block_fn signed_zero_blocks[] = {block_negative_zero, block_signed_zero_extreme};

#define COUNT(a) ((int)(sizeof(a) / sizeof((a)[0])))

void quant_data_fill(float *x, int64_t n, uint64_t seed, quant_data_set set)
{
    const int n_defined = COUNT(defined_blocks), n_casts = COUNT(x86_cast_blocks);
    const int kinds = n_defined + (set >= QUANT_DATA_X86_CASTS ? n_casts : 0) +
                      (set >= QUANT_DATA_ALL ? COUNT(signed_zero_blocks) : 0);
    uint64_t state = seed;
    for (int64_t b = 0; b < n / 32; b++) {
        int k = (int)(b % kinds);
        block_fn fill = k < n_defined             ? defined_blocks[k]
                        : k < n_defined + n_casts ? x86_cast_blocks[k - n_defined]
                                                  : signed_zero_blocks[k - n_defined - n_casts];
        fill(x + 32 * b, &state);
    }
}

/* One whole super-block of a single kind (see quant_data_fill_k). */
static void superblock_uniform_kind(float *x, int kind, uint64_t *s)
{
    const float scale = kind == 1 ? 1e-25f : kind == 2 ? 1e4f : 0.02f;
    const float v = gaussian(s);
    for (int j = 0; j < 256; j++) {
        switch (kind) {
        case 3: x[j] = below(s, 2) ? -0.0f : 0.0f; break;
        case 4: x[j] = v; break;
        case 5: x[j] = j == 77 ? v : 0.0f; break;
        default: x[j] = gaussian(s) * scale; break; /* 0 weights, 1 tiny, 2 large */
        }
    }
}

void quant_data_fill_k(float *x, int64_t n, uint64_t seed, quant_data_set set)
{
    uint64_t state = seed;
    quant_data_fill(x, n, seed, set);
    for (int64_t b = 0; b < n / 256; b++)
        if (b % 3 != 0) /* every third super-block keeps the mixed blocks */
            superblock_uniform_kind(x + 256 * b, (int)(b / 3 % 6), &state);
}

void quant_data_fill_rows(float *x, int64_t rows, int64_t cols, uint64_t seed)
{
    uint64_t state = seed;
    for (int64_t r = 0; r < rows; r++) {
        float *row = x + r * cols;
        if (r % 2 == 0) {
            quant_data_fill_k(row, cols, seed + (uint64_t)r, QUANT_DATA_ALL);
            continue;
        }
        const float scale = ldexpf(1.0f, below(&state, 24) - 16);
        for (int64_t j = 0; j < cols; j++)
            row[j] = j / 32 % 7 == 3 ? 0.0f : gaussian(&state) * scale;
    }
}
