/* Every SIMD kernel against the scalar reference, byte for byte (quantize) and bit for bit
 * (dequantize), on random data, ties, zeros, extremes and denormals, at every level this CPU
 * has. */
#include <stdlib.h>
#include <string.h>

#include <ggtk/inf_quant.h>
#include "quant_blocks.h"
#include "quant_data.h"
#include "test.h"

static const ggtk_tensor_type kernel_types[] = {
    GGTK_TENSOR_F16,  GGTK_TENSOR_BF16, GGTK_TENSOR_Q4_0, GGTK_TENSOR_Q4_1,
    GGTK_TENSOR_Q5_0, GGTK_TENSOR_Q5_1, GGTK_TENSOR_Q8_0, GGTK_TENSOR_Q8_1,
};
#define N_TYPES (sizeof kernel_types / sizeof kernel_types[0])

static size_t type_bytes(ggtk_tensor_type type, int64_t n)
{
    uint64_t bytes = 0;
    ggtk_tensor_type_bytes(type, (uint64_t)n, &bytes);
    return (size_t)bytes;
}

static uint32_t float_bits(float f)
{
    uint32_t u;
    memcpy(&u, &f, sizeof u);
    return u;
}

/* Index of the first differing byte, or -1. */
static int64_t first_difference(const void *a, const void *b, size_t bytes)
{
    const uint8_t *x = a, *y = b;
    for (size_t i = 0; i < bytes; i++)
        if (x[i] != y[i])
            return (int64_t)i;
    return -1;
}

#define REQUIRE_SIMD()                                                                     \
    do {                                                                                   \
        if (inf_simd_detect() == INF_SIMD_SCALAR)                                          \
            SKIP("this CPU has no SIMD level beyond scalar");                              \
    } while (0)

TEST(test_simd_quantize_matches_scalar_bytes)
{
    REQUIRE_SIMD();
    const int64_t n = 32 * 4096;
    float *x = malloc((size_t)n * sizeof *x);
    uint8_t *want = malloc((size_t)n * 4), *got = malloc((size_t)n * 4);
    CHECK(x && want && got);
    quant_data_fill(x, n, 42, QUANT_DATA_ALL);
    for (size_t t = 0; t < N_TYPES; t++) {
        size_t bytes = type_bytes(kernel_types[t], n);
        inf_quant_kernels_at(kernel_types[t], INF_SIMD_SCALAR)->from_float(x, want, n);
        for (int level = INF_SIMD_AVX2; level <= (int)inf_simd_detect(); level++) {
            memset(got, 0xCD, bytes);
            inf_quant_kernels_at(kernel_types[t], (inf_simd_level)level)->from_float(x, got, n);
            int64_t at = first_difference(want, got, bytes);
            CHECK_MSG(at < 0, "%s at %s: byte %lld (block %lld) %02x, scalar %02x",
                      ggtk_tensor_type_info_get(kernel_types[t])->name,
                      inf_simd_level_name((inf_simd_level)level), (long long)at,
                      (long long)(at / ggtk_tensor_type_info_get(kernel_types[t])->block_bytes),
                      got[at], want[at]);
        }
    }
    free(x), free(want), free(got);
}

TEST(test_simd_dequantize_matches_scalar_bits)
{
    REQUIRE_SIMD();
    const int64_t n = 32 * 4096;
    float *x = malloc((size_t)n * sizeof *x), *want = malloc((size_t)n * sizeof *want);
    float *got = malloc((size_t)n * sizeof *got);
    uint8_t *q = malloc((size_t)n * 4);
    CHECK(x && want && got && q);
    quant_data_fill(x, n, 7, QUANT_DATA_ALL);
    for (size_t t = 0; t < N_TYPES; t++) {
        const ggtk_tensor_type type = kernel_types[t];
        size_t bytes = type_bytes(type, n);
        /* first half: real quantized data; second half: random bytes (any scale, NaN, Inf) */
        inf_quant_kernels_at(type, INF_SIMD_SCALAR)->from_float(x, q, n);
        uint64_t state = 99;
        for (size_t i = bytes / 2; i < bytes; i++)
            q[i] = (uint8_t)quant_data_next(&state);
        inf_quant_kernels_at(type, INF_SIMD_SCALAR)->to_float(q, want, n);
        for (int level = INF_SIMD_AVX2; level <= (int)inf_simd_detect(); level++) {
            memset(got, 0xCD, (size_t)n * sizeof *got);
            inf_quant_kernels_at(type, (inf_simd_level)level)->to_float(q, got, n);
            int64_t at = first_difference(want, got, (size_t)n * sizeof *got);
            CHECK_MSG(at < 0, "%s at %s: element %lld", ggtk_tensor_type_info_get(type)->name,
                      inf_simd_level_name((inf_simd_level)level), (long long)(at / 4));
        }
    }
    free(x), free(want), free(got), free(q);
}

/* Every dequantizer, the dequantize-only types included, on blocks of random bytes: any scale
 * (NaN, Inf and denormal ones too), any code. */
TEST(test_simd_dequantize_random_block_bytes_like_scalar)
{
    REQUIRE_SIMD();
    const int64_t n = 256 * 1024;
    uint8_t *q = malloc((size_t)n * 4);
    float *want = malloc((size_t)n * sizeof *want), *got = malloc((size_t)n * sizeof *got);
    CHECK(q && want && got);
    for (int t = 0; t < quant_blocks_type_count; t++) {
        const ggtk_tensor_type type = quant_blocks_types[t];
        uint64_t state = 1234 + (uint64_t)type;
        for (size_t i = 0; i < type_bytes(type, n); i++)
            q[i] = (uint8_t)quant_data_next(&state);
        inf_quant_kernels_at(type, INF_SIMD_SCALAR)->to_float(q, want, n);
        for (int level = INF_SIMD_AVX2; level <= (int)inf_simd_detect(); level++) {
            memset(got, 0xCD, (size_t)n * sizeof *got);
            inf_quant_kernels_at(type, (inf_simd_level)level)->to_float(q, got, n);
            int64_t at = first_difference(want, got, (size_t)n * sizeof *got);
            CHECK_MSG(at < 0, "%s at %s: element %lld", ggtk_tensor_type_info_get(type)->name,
                      inf_simd_level_name((inf_simd_level)level), (long long)(at / 4));
        }
    }
    free(q), free(want), free(got);
}

TEST(test_simd_fp16_and_bf16_widen_every_bit_pattern_like_scalar)
{
    REQUIRE_SIMD();
    uint16_t *h = malloc(65536 * sizeof *h);
    float *want = malloc(65536 * sizeof *want), *got = malloc(65536 * sizeof *got);
    CHECK(h && want && got);
    for (uint32_t i = 0; i < 65536; i++)
        h[i] = (uint16_t)i;
    const ggtk_tensor_type types[2] = {GGTK_TENSOR_F16, GGTK_TENSOR_BF16};
    for (int t = 0; t < 2; t++) {
        inf_quant_kernels_at(types[t], INF_SIMD_SCALAR)->to_float(h, want, 65536);
        for (int level = INF_SIMD_AVX2; level <= (int)inf_simd_detect(); level++) {
            inf_quant_kernels_at(types[t], (inf_simd_level)level)->to_float(h, got, 65536);
            int64_t at = first_difference(want, got, 65536 * sizeof *got);
            CHECK_MSG(at < 0, "%s %s: pattern 0x%04llx", ggtk_tensor_type_info_get(types[t])->name,
                      inf_simd_level_name((inf_simd_level)level), (long long)(at / 4));
        }
    }
    free(h), free(want), free(got);
}

/* A sweep over float bit patterns in steps of 251 (about 17 million values: every exponent,
 * denormals, values next to every rounding boundary class, NaNs with many payloads). */
TEST(test_simd_fp16_and_bf16_narrow_float_sweep_like_scalar)
{
    REQUIRE_SIMD();
    const int64_t chunk = 1 << 20;
    float *x = malloc((size_t)chunk * sizeof *x);
    uint16_t *want = malloc((size_t)chunk * sizeof *want), *got = malloc((size_t)chunk * 2);
    CHECK(x && want && got);
    const ggtk_tensor_type types[2] = {GGTK_TENSOR_F16, GGTK_TENSOR_BF16};
    uint64_t bits = 0;
    while (bits <= 0xFFFFFFFFull) {
        int64_t n = 0;
        for (; n < chunk && bits <= 0xFFFFFFFFull; n++, bits += 251) {
            uint32_t u = (uint32_t)bits;
            memcpy(&x[n], &u, sizeof u);
        }
        for (int t = 0; t < 2; t++) {
            inf_quant_kernels_at(types[t], INF_SIMD_SCALAR)->from_float(x, want, n);
            for (int level = INF_SIMD_AVX2; level <= (int)inf_simd_detect(); level++) {
                inf_quant_kernels_at(types[t], (inf_simd_level)level)->from_float(x, got, n);
                int64_t at = first_difference(want, got, (size_t)n * 2);
                CHECK_MSG(at < 0, "%s %s: float bits 0x%08x -> %04x, scalar %04x",
                          ggtk_tensor_type_info_get(types[t])->name,
                          inf_simd_level_name((inf_simd_level)level),
                          (unsigned)float_bits(x[at / 2]), got[at / 2], want[at / 2]);
            }
        }
    }
    free(x), free(want), free(got);
}

TEST(test_simd_float_conversions_handle_every_tail_length)
{
    REQUIRE_SIMD();
    float x[67], back_want[67], back_got[67];
    uint16_t want[67], got[67];
    quant_data_fill(x, 64, 5, QUANT_DATA_ALL);
    x[64] = 1.0f, x[65] = -2.5f, x[66] = 3e-7f;
    const ggtk_tensor_type types[2] = {GGTK_TENSOR_F16, GGTK_TENSOR_BF16};
    for (int t = 0; t < 2; t++)
        for (int level = INF_SIMD_AVX2; level <= (int)inf_simd_detect(); level++)
            for (int n = 0; n <= 67; n++) {
                const inf_quant_kernels *ref = inf_quant_kernels_at(types[t], INF_SIMD_SCALAR);
                const inf_quant_kernels *k = inf_quant_kernels_at(types[t], (inf_simd_level)level);
                memset(got, 0xEE, sizeof got);
                memset(want, 0xEE, sizeof want);
                ref->from_float(x, want, n);
                k->from_float(x, got, n);
                CHECK_MSG(memcmp(want, got, sizeof got) == 0, "narrow n=%d", n);
                memset(back_got, 0xEE, sizeof back_got);
                memset(back_want, 0xEE, sizeof back_want);
                ref->to_float(want, back_want, n);
                k->to_float(want, back_got, n);
                CHECK_MSG(memcmp(back_want, back_got, sizeof back_got) == 0, "widen n=%d", n);
            }
}

TEST(test_quantize_rows_bytes_do_not_depend_on_thread_count)
{
    const int64_t rows = 37, cols = 32 * 7;
    float *x = malloc((size_t)(rows * cols) * sizeof *x);
    uint8_t *one = malloc((size_t)(rows * cols) * 4), *many = malloc((size_t)(rows * cols) * 4);
    float *back_one = malloc((size_t)(rows * cols) * sizeof(float));
    float *back_many = malloc((size_t)(rows * cols) * sizeof(float));
    CHECK(x && one && many && back_one && back_many);
    quant_data_fill(x, rows * cols, 3, QUANT_DATA_ALL);
    for (size_t t = 0; t < N_TYPES; t++) {
        size_t bytes = type_bytes(kernel_types[t], rows * cols);
        CHECK(inf_quantize_row(kernel_types[t], x, one, rows * cols));
        CHECK(inf_dequantize_row(kernel_types[t], one, back_one, rows * cols));
        for (int threads = 2; threads <= 5; threads += 3) {
            memset(many, 0, bytes);
            CHECK(inf_quantize_rows(kernel_types[t], x, many, rows, cols, threads));
            CHECK(memcmp(one, many, bytes) == 0);
            CHECK(inf_dequantize_rows(kernel_types[t], one, back_many, rows, cols, threads));
            CHECK(memcmp(back_one, back_many, (size_t)(rows * cols) * sizeof(float)) == 0);
        }
    }
    free(x), free(one), free(many), free(back_one), free(back_many);
}
