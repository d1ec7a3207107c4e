/* neon_check.c - arm64-only check that the NEON quantization and F16/BF16 kernels write exactly
 * the bytes the scalar ones do, that the NEON matrix product gives the scalar one's floats
 * (matmul_check.c), and that the K-quant and importance-weighted quantizers write
 * on arm64 the bytes recorded from ggml on x86-64 (tests/quant_kernels/kquant_golden.c). Not
 * part of the x86 test runner: `make cross-check-arm64` (run by `make test`) cross-compiles it
 * with the quant sources and runs it under qemu-aarch64. Exit status 0 means every block and
 * value matched. */
#include <float.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include <ggtk/inf_simd.h>
#include "engine/quant_kernels/quant_internal.h"
#include "engine/quant_kernels/quant_kblocks.h"
#include "kquant_golden.h"
#include "matmul_check.h"

#define BLOCKS 4096
#define N ((int64_t)BLOCKS * QUANT_BLOCK)

typedef void (*from_fn)(const float *, void *, int64_t);
typedef void (*to_fn)(const void *, float *, int64_t);

static uint64_t rng_state = 0x9E3779B97F4A7C15u;

static uint32_t rng_u32(void)
{
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return (uint32_t)(rng_state >> 32);
}

static float rng_unit(void)
{
    return (float)(rng_u32() >> 8) * 0x1p-24f * 2.0f - 1.0f;
}

/* Special values the exactness rules are about: signed zeros, denormals, the float limits,
 * infinities, NaNs and numbers near the int32 conversion bounds. */
static const float specials[] = {0.0f,      -0.0f,         FLT_MIN,        -FLT_MIN,
                                 1e-45f,    -1e-45f,       1e-40f,         FLT_MAX,
                                 -FLT_MAX,  INFINITY,      -INFINITY,      NAN,
                                 -NAN,      2147483648.0f, -2147483904.0f, 65504.0f,
                                 65520.0f,  0.5f,          -0.5f,          1.5f};
#define SPECIALS ((int)(sizeof specials / sizeof specials[0]))

/* Block kinds: each block of the input is filled in one of these ways. */
#define BLOCK_KINDS 12
static void fill_block(float *x, int kind)
{
    for (int j = 0; j < QUANT_BLOCK; j++) {
        switch (kind) {
        case 0: /* ordinary weights */
            x[j] = rng_unit() * 0.1f;
            break;
        case 1: /* ties: max 127 (or -8 for Q4_0's signed max) makes codes land on k + 0.5 */
            x[j] = j == 0 ? 127.0f : (float)((int)(rng_u32() % 253) - 126) + 0.5f;
            break;
        case 2: /* Q4_0 ties: d = -1, x * id + 8.5 lands on integers and halves */
            x[j] = j == 3 ? 8.0f : (float)((int)(rng_u32() % 33) - 16) * 0.25f;
            break;
        case 3: /* all zero, with signs */
            x[j] = (rng_u32() & 1) ? -0.0f : 0.0f;
            break;
        case 4: /* random bit patterns: NaNs, infinities, denormals, everything */
            x[j] = quant_f32_from_bits(rng_u32());
            break;
        case 5: /* mostly ordinary with one special value */
        case 10: /* ordinary with one NaN or +-Inf, anywhere in the block */
            x[j] = rng_unit() * 1e3f;
            break;
        case 6: /* tiny (denormal) blocks, where 1/d overflows */
            x[j] = quant_f32_from_bits(rng_u32() & 0x807FFFFF);
            break;
        case 7: /* equal magnitudes of both signs: the first one decides the sign of max */
            x[j] = (rng_u32() & 1) ? 3.0f : -3.0f;
            break;
        case 8: /* all NaN, any payload and sign: the NaN block */
            x[j] = quant_f32_from_bits(0x7F800001u | (rng_u32() & 0x807FFFFFu));
            break;
        case 9: /* +-Inf only */
            x[j] = (rng_u32() & 1) ? INFINITY : -INFINITY;
            break;
        default: /* huge finite values: fp16 scales overflow, max - min overflows */
            x[j] = rng_unit() * FLT_MAX;
            break;
        }
    }
    const int at = (int)(rng_u32() % QUANT_BLOCK);
    if (kind == 5)
        x[at] = specials[rng_u32() % SPECIALS];
    if (kind == 10)
        x[at] = (float[]){NAN, -NAN, INFINITY, -INFINITY}[rng_u32() % 4];
    if (kind == 11)
        x[at] = FLT_MAX;
}

/* Blocks where the two byte strings differ, printing the first one. */
static int64_t count_diff(const char *what, const uint8_t *a, const uint8_t *b, size_t block_bytes)
{
    int64_t diff = 0;
    for (int64_t blk = 0; blk < BLOCKS; blk++) {
        if (memcmp(a + blk * block_bytes, b + blk * block_bytes, block_bytes) != 0) {
            if (diff == 0)
                fprintf(stderr, "%s: block %" PRId64 " differs\n", what, blk);
            diff++;
        }
    }
    return diff;
}

static int check_type(const char *name, size_t block_bytes, from_fn from_scalar, from_fn from_neon,
                      to_fn to_scalar, to_fn to_neon, const float *x)
{
    uint8_t *qa = malloc(BLOCKS * block_bytes), *qb = malloc(BLOCKS * block_bytes);
    float *ya = malloc(N * sizeof *ya), *yb = malloc(N * sizeof *yb);
    if (!qa || !qb || !ya || !yb) {
        fprintf(stderr, "out of memory\n");
        return 1;
    }
    from_scalar(x, qa, N);
    from_neon(x, qb, N);
    int64_t qdiff = count_diff(name, qa, qb, block_bytes);
    /* Dequantize random bytes (any scale, any codes) as well as the quantized blocks. */
    int64_t ydiff = 0;
    for (int round = 0; round < 2; round++) {
        if (round == 1)
            for (size_t i = 0; i < BLOCKS * block_bytes; i++)
                qa[i] = (uint8_t)rng_u32();
        to_scalar(qa, ya, N);
        to_neon(qa, yb, N);
        ydiff += count_diff(name, (const uint8_t *)ya, (const uint8_t *)yb,
                            QUANT_BLOCK * sizeof(float));
    }
    printf("%-5s quantize: %d blocks, %" PRId64 " differ; dequantize: %d blocks, %" PRId64
           " differ\n",
           name, BLOCKS, qdiff, 2 * BLOCKS, ydiff);
    free(qa);
    free(qb);
    free(ya);
    free(yb);
    return qdiff || ydiff;
}

/* A dequantize-only kernel on random bytes (any scale, any codes): the same float bits. */
static int check_dequant_type(const char *name, size_t block_bytes, int64_t block_size,
                              to_fn to_scalar, to_fn to_neon)
{
    const int64_t n = (int64_t)BLOCKS * block_size;
    uint8_t *q = malloc(BLOCKS * block_bytes);
    float *ya = malloc((size_t)n * sizeof *ya), *yb = malloc((size_t)n * sizeof *yb);
    if (!q || !ya || !yb) {
        fprintf(stderr, "out of memory\n");
        return 1;
    }
    for (size_t i = 0; i < BLOCKS * block_bytes; i++)
        q[i] = (uint8_t)rng_u32();
    to_scalar(q, ya, n);
    to_neon(q, yb, n);
    int64_t diff = 0;
    for (int64_t blk = 0; blk < BLOCKS; blk++)
        if (memcmp(ya + blk * block_size, yb + blk * block_size, block_size * sizeof *ya) != 0 &&
            diff++ == 0)
            fprintf(stderr, "%s: block %" PRId64 " differs\n", name, blk);
    printf("%-5s dequantize: %d blocks, %" PRId64 " differ\n", name, BLOCKS, diff);
    free(q);
    free(ya);
    free(yb);
    return diff != 0;
}

/* Float rows: every half and bfloat16 bit pattern to float, and to half/bfloat16 from random
 * bit patterns, the specials and the values just around half's rounding edges. Odd lengths run
 * the scalar tails too. */
static int check_float_type(const char *name, from_fn from_scalar, from_fn from_neon,
                            to_fn to_scalar, to_fn to_neon)
{
    enum { PATTERNS = 65536, FLOATS = 65536 * 4 + 3 };
    uint16_t *h = malloc(PATTERNS * sizeof *h), *ha = malloc(FLOATS * sizeof *ha),
             *hb = malloc(FLOATS * sizeof *hb);
    float *ya = malloc(PATTERNS * sizeof *ya), *yb = malloc(PATTERNS * sizeof *yb),
          *x = malloc(FLOATS * sizeof *x);
    if (!h || !ha || !hb || !ya || !yb || !x) {
        fprintf(stderr, "out of memory\n");
        return 1;
    }
    for (int i = 0; i < PATTERNS; i++)
        h[i] = (uint16_t)i;
    to_scalar(h, ya, PATTERNS);
    to_neon(h, yb, PATTERNS - 1);
    yb[PATTERNS - 1] = ya[PATTERNS - 1];
    to_neon(h + PATTERNS - 1, yb + PATTERNS - 1, 1);
    int64_t ydiff = 0;
    for (int i = 0; i < PATTERNS; i++)
        ydiff += memcmp(ya + i, yb + i, sizeof *ya) != 0;
    for (int i = 0; i < FLOATS; i++) {
        switch (i % 4) {
        case 0:
            x[i] = quant_f32_from_bits(rng_u32());
            break;
        case 1: /* near every half value, or near the tie above it (for normal halves) */
            x[i] = quant_f32_from_bits(quant_f32_bits(quant_fp16_to_fp32((inf_fp16)(i / 4))) +
                                       (rng_u32() % 5) - 2 + ((rng_u32() & 1) << 12));
            break;
        case 2:
            x[i] = specials[rng_u32() % SPECIALS];
            break;
        default:
            x[i] = rng_unit() * 10.0f;
            break;
        }
    }
    from_scalar(x, ha, FLOATS);
    from_neon(x, hb, FLOATS);
    int64_t hdiff = 0;
    for (int i = 0; i < FLOATS; i++) {
        if (ha[i] != hb[i] && hdiff++ == 0)
            fprintf(stderr, "%s: %08x gives %04x (scalar %04x)\n", name,
                    (unsigned)quant_f32_bits(x[i]), hb[i], ha[i]);
    }
    printf("%-5s from float: %d values, %" PRId64 " differ; to float: %d patterns, %" PRId64
           " differ\n",
           name, FLOATS, hdiff, PATTERNS, ydiff);
    free(h);
    free(ha);
    free(hb);
    free(ya);
    free(yb);
    free(x);
    return hdiff || ydiff;
}

int main(void)
{
    printf("simd level detected: %s\n", inf_simd_level_name(inf_simd_detect()));
    if (inf_simd_detect() != INF_SIMD_NEON) {
        fprintf(stderr, "expected the NEON level on arm64\n");
        return 1;
    }
    float *x = malloc(N * sizeof *x);
    if (!x)
        return 1;
    for (int64_t blk = 0; blk < BLOCKS; blk++)
        fill_block(x + blk * QUANT_BLOCK, (int)(blk % BLOCK_KINDS));
    int bad = 0;
    bad |= check_type("q8_0", sizeof(block_q8_0), inf_q8_0_from_float_scalar,
                      inf_q8_0_from_float_neon, inf_q8_0_to_float_scalar, inf_q8_0_to_float_neon, x);
    bad |= check_type("q4_0", sizeof(block_q4_0), inf_q4_0_from_float_scalar,
                      inf_q4_0_from_float_neon, inf_q4_0_to_float_scalar, inf_q4_0_to_float_neon, x);
    bad |= check_dequant_type("q4_K", sizeof(block_q4_K), QUANT_KBLOCK, inf_q4_k_to_float_scalar,
                              inf_q4_k_to_float_neon);
    bad |= check_dequant_type("q6_K", sizeof(block_q6_K), QUANT_KBLOCK, inf_q6_k_to_float_scalar,
                              inf_q6_k_to_float_neon);
    bad |= check_float_type("f16", inf_f16_from_float_scalar, inf_f16_from_float_neon,
                            inf_f16_to_float_scalar, inf_f16_to_float_neon);
    bad |= check_float_type("bf16", inf_bf16_from_float_scalar, inf_bf16_from_float_neon,
                            inf_bf16_to_float_scalar, inf_bf16_to_float_neon);
    int golden_bad = golden_mismatches();
    printf("K-quant and imatrix quantizers: %d cases, %d differ from the x86/ggml hashes\n",
           kquant_golden_count, golden_bad);
    bad |= golden_bad != 0;
    /* The dispatch table must hand out the NEON kernels at the NEON level. */
    if (inf_quant_kernels_at(GGTK_TENSOR_Q8_0, INF_SIMD_NEON)->from_float !=
            inf_q8_0_from_float_neon ||
        inf_quant_kernels_at(GGTK_TENSOR_Q4_0, INF_SIMD_AVX2)->to_float != inf_q4_0_to_float_neon ||
        inf_quant_kernels_at(GGTK_TENSOR_Q4_K, INF_SIMD_NEON)->to_float != inf_q4_k_to_float_neon ||
        inf_quant_kernels_at(GGTK_TENSOR_Q6_K, INF_SIMD_NEON)->to_float != inf_q6_k_to_float_neon) {
        fprintf(stderr, "dispatch table does not pick the NEON kernels\n");
        bad = 1;
    }
    bad |= matmul_check();
    free(x);
    printf("%s\n", bad ? "FAIL" : "all NEON blocks identical to scalar");
    return bad;
}
