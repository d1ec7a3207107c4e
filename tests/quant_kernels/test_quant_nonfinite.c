/* Quantizer blocks holding NaN or +-Inf, and huge finite blocks: every level must store the
 * defined NaN block (see inf_quantize_row) for non-finite input and the scalar reference's
 * bytes for finite input, without reading outside the block (run under `make test SAN=1`). */
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <ggtk/inf_quant.h>
#include "quant_data.h"
#include "test.h"

static const ggtk_tensor_type block_types[] = {
    GGTK_TENSOR_Q4_0, GGTK_TENSOR_Q4_1, GGTK_TENSOR_Q5_0,
    GGTK_TENSOR_Q5_1, GGTK_TENSOR_Q8_0, GGTK_TENSOR_Q8_1,
};
#define N_BLOCK_TYPES (sizeof block_types / sizeof block_types[0])

/* Block kinds, in the order fill_block cycles through them; the first N_NONFINITE hold NaN or
 * Inf, the rest are finite. */
enum { N_KINDS = 12, N_NONFINITE = 8 };

static float nan_with(uint64_t bits)
{
    uint32_t u = 0x7F800001u | (uint32_t)(bits & 0x803FFFFFu) | (uint32_t)(bits >> 40 & 1) << 22;
    float f;
    memcpy(&f, &u, sizeof f);
    return f;
}

/* Fill one block of the given kind: non-finite values at random places among ordinary ones
 * (first, last and middle positions all occur), all-NaN and all-Inf blocks, and finite blocks
 * whose scale overflows half precision or whose range overflows float. */
static void fill_block(float *x, int kind, uint64_t *state)
{
    for (int j = 0; j < 32; j++)
        x[j] = (float)((int64_t)(quant_data_next(state) % 2001) - 1000) * 0.01f;
    const int at = (int)(quant_data_next(state) % 32);
    switch (kind) {
    case 0: x[at] = nan_with(quant_data_next(state)); break;
    case 1: x[at] = INFINITY; break;
    case 2: x[at] = -INFINITY; break;
    case 3: x[at] = nan_with(quant_data_next(state)), x[(at + 7) % 32] = INFINITY; break;
    case 4: x[0] = NAN, x[31] = -INFINITY; break;
    case 5: for (int j = 0; j < 32; j++) x[j] = nan_with(quant_data_next(state)); break;
    case 6: for (int j = 0; j < 32; j++) x[j] = j % 2 ? INFINITY : -INFINITY; break;
    case 7: x[31] = NAN, x[at] = FLT_MAX; break;
    case 8: x[at] = FLT_MAX; break;
    case 9: x[at] = -FLT_MAX, x[(at + 1) % 32] = FLT_MAX; break;
    case 10: for (int j = 0; j < 32; j++) x[j] *= 1e36f; break;
    default: x[at] = 1e6f; break; /* the Q4_0 scale 1e6 / 8 still fits a half; Q4_1's does not */
    }
}

/* n floats (a multiple of 32) cycling through the kinds. Allocated with exactly n elements, so
 * a kernel reading past the last block reads past the allocation (AddressSanitizer sees it). */
static float *nonfinite_input(int64_t n, uint64_t seed)
{
    float *x = malloc((size_t)n * sizeof *x);
    for (int64_t b = 0; x && b < n / 32; b++)
        fill_block(x + 32 * b, (int)(b % N_KINDS), &seed);
    return x;
}

static size_t block_bytes(ggtk_tensor_type type)
{
    return ggtk_tensor_type_info_get(type)->block_bytes;
}

/* Scale halves a block starts with: d, plus m (Q4_1, Q5_1) or s (Q8_1). */
static int scale_halves(ggtk_tensor_type type)
{
    return type == GGTK_TENSOR_Q4_1 || type == GGTK_TENSOR_Q5_1 || type == GGTK_TENSOR_Q8_1 ? 2 : 1;
}

/* Whether `block` is the NaN block: every scale half 0x7E00, every other byte 0. */
static bool is_nan_block(ggtk_tensor_type type, const uint8_t *block)
{
    for (size_t i = 0; i < block_bytes(type); i++) {
        bool scale = i < 2 * (size_t)scale_halves(type);
        uint8_t want = !scale ? 0x00 : i % 2 ? 0x7E : 0x00;
        if (block[i] != want)
            return false;
    }
    return true;
}

TEST(test_nonfinite_blocks_quantize_to_nan_blocks_at_every_level)
{
    const int64_t n = 32 * N_KINDS * 8;
    float *x = nonfinite_input(n, 11), *back = malloc((size_t)n * sizeof *back);
    uint8_t *q = malloc((size_t)n * 4);
    CHECK(x && back && q);
    for (size_t t = 0; t < N_BLOCK_TYPES; t++) {
        const ggtk_tensor_type type = block_types[t];
        for (int level = INF_SIMD_SCALAR; level <= (int)inf_simd_detect(); level++) {
            const inf_quant_kernels *k = inf_quant_kernels_at(type, (inf_simd_level)level);
            memset(q, 0xCD, (size_t)n * 4);
            k->from_float(x, q, n);
            k->to_float(q, back, n);
            int wrong = 0, finite_out = 0;
            for (int64_t b = 0; b < n / 32; b++) {
                if (b % N_KINDS >= N_NONFINITE)
                    continue;
                wrong += !is_nan_block(type, q + b * block_bytes(type));
                for (int j = 0; j < 32; j++)
                    finite_out += !isnan(back[32 * b + j]);
            }
            CHECK_MSG(wrong == 0 && finite_out == 0,
                      "%s at %s: %d non-finite blocks not the NaN block, %d finite outputs",
                      ggtk_tensor_type_info_get(type)->name,
                      inf_simd_level_name((inf_simd_level)level), wrong, finite_out);
        }
    }
    free(x), free(back), free(q);
}

TEST(test_simd_quantize_matches_scalar_on_nonfinite_and_huge_blocks)
{
    if (inf_simd_detect() == INF_SIMD_SCALAR)
        SKIP("this CPU has no SIMD level beyond scalar");
    const int64_t n = 32 * N_KINDS * 64;
    float *x = nonfinite_input(n, 5);
    uint8_t *want = malloc((size_t)n * 4), *got = malloc((size_t)n * 4);
    CHECK(x && want && got);
    const ggtk_tensor_type types[] = {GGTK_TENSOR_F16,  GGTK_TENSOR_BF16, GGTK_TENSOR_Q4_0,
                                      GGTK_TENSOR_Q4_1, GGTK_TENSOR_Q5_0, GGTK_TENSOR_Q5_1,
                                      GGTK_TENSOR_Q8_0, GGTK_TENSOR_Q8_1};
    for (size_t t = 0; t < sizeof types / sizeof types[0]; t++) {
        const ggtk_tensor_type_info *info = ggtk_tensor_type_info_get(types[t]);
        const size_t bytes = (size_t)(n / info->block_size) * info->block_bytes;
        inf_quant_kernels_at(types[t], INF_SIMD_SCALAR)->from_float(x, want, n);
        for (int level = INF_SIMD_AVX2; level <= (int)inf_simd_detect(); level++) {
            memset(got, 0xCD, bytes);
            inf_quant_kernels_at(types[t], (inf_simd_level)level)->from_float(x, got, n);
            size_t at = 0;
            while (at < bytes && got[at] == want[at])
                at++;
            CHECK_MSG(at == bytes, "%s at %s: byte %zu (block kind %d) %02x, scalar %02x",
                      info->name, inf_simd_level_name((inf_simd_level)level), at,
                      (int)(at / info->block_bytes * info->block_size / 32 % N_KINDS),
                      at < bytes ? got[at] : 0, at < bytes ? want[at] : 0);
        }
    }
    free(x), free(want), free(got);
}
