/* Tests of the quantization API's contracts: supported types, argument checks, block layouts
 * against libgguf's type table, and hand-computed blocks. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <ggtk/inf_quant.h>
#include "engine/quant_kernels/quant_internal.h"
#include "engine/quant_kernels/quant_iqblocks.h"
#include "engine/quant_kernels/quant_kblocks.h"
#include "test.h"

TEST(test_quant_block_layouts_match_gguf_type_table)
{
    static const struct {
        ggtk_tensor_type type;
        size_t elements, bytes;
    } layouts[] = {
        {GGTK_TENSOR_Q4_0, QUANT_BLOCK, sizeof(block_q4_0)},
        {GGTK_TENSOR_Q4_1, QUANT_BLOCK, sizeof(block_q4_1)},
        {GGTK_TENSOR_Q5_0, QUANT_BLOCK, sizeof(block_q5_0)},
        {GGTK_TENSOR_Q5_1, QUANT_BLOCK, sizeof(block_q5_1)},
        {GGTK_TENSOR_Q8_0, QUANT_BLOCK, sizeof(block_q8_0)},
        {GGTK_TENSOR_Q8_1, QUANT_BLOCK, sizeof(block_q8_1)},
        {GGTK_TENSOR_Q2_K, QUANT_KBLOCK, sizeof(block_q2_K)},
        {GGTK_TENSOR_Q3_K, QUANT_KBLOCK, sizeof(block_q3_K)},
        {GGTK_TENSOR_Q4_K, QUANT_KBLOCK, sizeof(block_q4_K)},
        {GGTK_TENSOR_Q5_K, QUANT_KBLOCK, sizeof(block_q5_K)},
        {GGTK_TENSOR_Q6_K, QUANT_KBLOCK, sizeof(block_q6_K)},
        {GGTK_TENSOR_Q8_K, QUANT_KBLOCK, sizeof(block_q8_K)},
        {GGTK_TENSOR_IQ2_XXS, QUANT_KBLOCK, sizeof(block_iq2_xxs)},
        {GGTK_TENSOR_IQ2_XS, QUANT_KBLOCK, sizeof(block_iq2_xs)},
        {GGTK_TENSOR_IQ2_S, QUANT_KBLOCK, sizeof(block_iq2_s)},
        {GGTK_TENSOR_IQ3_XXS, QUANT_KBLOCK, sizeof(block_iq3_xxs)},
        {GGTK_TENSOR_IQ3_S, QUANT_KBLOCK, sizeof(block_iq3_s)},
        {GGTK_TENSOR_IQ1_S, QUANT_KBLOCK, sizeof(block_iq1_s)},
        {GGTK_TENSOR_IQ1_M, QUANT_KBLOCK, sizeof(block_iq1_m)},
        {GGTK_TENSOR_IQ4_NL, QUANT_IQ_SMALL_BLOCK, sizeof(block_iq4_nl)},
        {GGTK_TENSOR_IQ4_XS, QUANT_KBLOCK, sizeof(block_iq4_xs)},
        {GGTK_TENSOR_TQ1_0, QUANT_KBLOCK, sizeof(block_tq1_0)},
        {GGTK_TENSOR_TQ2_0, QUANT_KBLOCK, sizeof(block_tq2_0)},
        {GGTK_TENSOR_MXFP4, QUANT_IQ_SMALL_BLOCK, sizeof(block_mxfp4)},
        {GGTK_TENSOR_NVFP4, QUANT_NVFP4_BLOCK, sizeof(block_nvfp4)},
        {GGTK_TENSOR_Q1_0, QUANT_Q1_0_BLOCK, sizeof(block_q1_0)},
        {GGTK_TENSOR_Q2_0, QUANT_Q2_0_BLOCK, sizeof(block_q2_0)},
    };
    for (size_t i = 0; i < sizeof layouts / sizeof layouts[0]; i++) {
        const ggtk_tensor_type_info *info = ggtk_tensor_type_info_get(layouts[i].type);
        CHECK_MSG(info && info->block_size == layouts[i].elements &&
                      info->block_bytes == layouts[i].bytes,
                  "type %d", (int)layouts[i].type);
    }
}

TEST(test_quant_supports_exactly_the_listed_types)
{
    static const ggtk_tensor_type supported[] = {
        GGTK_TENSOR_F32,  GGTK_TENSOR_F16,  GGTK_TENSOR_BF16, GGTK_TENSOR_Q4_0, GGTK_TENSOR_Q4_1,
        GGTK_TENSOR_Q5_0, GGTK_TENSOR_Q5_1, GGTK_TENSOR_Q8_0, GGTK_TENSOR_Q8_1,
    };
    int count = 0;
    for (int t = -1; t <= GGTK_TENSOR_TYPE_COUNT; t++) {
        bool listed = false;
        for (size_t i = 0; i < sizeof supported / sizeof supported[0]; i++)
            listed |= supported[i] == (ggtk_tensor_type)t;
        CHECK_MSG(inf_type_can_quantize((ggtk_tensor_type)t) == listed, "type %d", t);
        count += listed;
    }
    CHECK(count == 9);
    CHECK(!inf_type_can_quantize(GGTK_TENSOR_Q4_K));
}

/* Every floating-point or block type a GGUF file may carry can be read; only the plain integer
 * types (I8 .. I64, F64 (a double)) and retired codes cannot. */
TEST(test_quant_dequantizes_every_float_and_block_type)
{
    static const ggtk_tensor_type unreadable[] = {
        GGTK_TENSOR_I8, GGTK_TENSOR_I16, GGTK_TENSOR_I32, GGTK_TENSOR_I64, GGTK_TENSOR_F64,
    };
    int count = 0;
    for (int t = -1; t <= GGTK_TENSOR_TYPE_COUNT; t++) {
        bool expected = ggtk_tensor_type_info_get((ggtk_tensor_type)t) != NULL;
        for (size_t i = 0; i < sizeof unreadable / sizeof unreadable[0]; i++)
            expected &= unreadable[i] != (ggtk_tensor_type)t;
        CHECK_MSG(inf_type_can_dequantize((ggtk_tensor_type)t) == expected, "type %d", t);
        count += expected;
    }
    CHECK(count == 30);
}

TEST(test_quantize_row_rejects_partial_blocks_and_unsupported_types)
{
    float src[64] = {1.0f};
    uint8_t dst[128];
    memset(dst, 0xAB, sizeof dst);
    CHECK(!inf_quantize_row(GGTK_TENSOR_Q8_0, src, dst, 33));
    CHECK(!inf_quantize_row(GGTK_TENSOR_Q8_0, src, dst, -32));
    CHECK(!inf_quantize_row(GGTK_TENSOR_Q6_K, src, dst, 256));
    CHECK(!inf_quantize_row((ggtk_tensor_type)4, src, dst, 32));
    CHECK(!inf_dequantize_row(GGTK_TENSOR_Q4_0, dst, src, 31));
    CHECK(!inf_quantize_rows(GGTK_TENSOR_Q4_0, src, dst, 2, 16, 1));
    CHECK(!inf_quantize_rows(GGTK_TENSOR_Q4_0, src, dst, INT64_MAX / 16, 64, 1));
    CHECK(!inf_dequantize_rows(GGTK_TENSOR_Q4_0, dst, src, -1, 32, 1));
    for (size_t i = 0; i < sizeof dst; i++)
        CHECK(dst[i] == 0xAB);
    CHECK(inf_quantize_row(GGTK_TENSOR_Q8_0, src, dst, 0));
    CHECK(inf_quantize_row(GGTK_TENSOR_F16, src, dst, 3));
}

TEST(test_q8_0_block_by_hand)
{
    /* amax 127 gives d = 1 exactly, so codes are roundf(x): ties go away from zero. */
    float src[32] = {127.0f, -127.0f, 0.5f, -0.5f, 1.5f, -2.5f, 0.49999997f, 3.0f};
    block_q8_0 out;
    CHECK(inf_quantize_row(GGTK_TENSOR_Q8_0, src, &out, 32));
    CHECK(out.d == 0x3C00); /* 1.0 in fp16 */
    static const int8_t want[8] = {127, -127, 1, -1, 2, -3, 0, 3};
    for (int j = 0; j < 8; j++)
        CHECK_MSG(out.qs[j] == want[j], "qs[%d] = %d, want %d", j, out.qs[j], want[j]);
    float back[32];
    CHECK(inf_dequantize_row(GGTK_TENSOR_Q8_0, &out, back, 32));
    CHECK(back[0] == 127.0f && back[5] == -3.0f && back[31] == 0.0f);
}

TEST(test_q4_0_keeps_sign_of_largest_magnitude_and_zero_block_scale)
{
    /* max is -16 (the first of |16|): d = -16 / -8 = 2, id = 0.5, code = trunc(x/2 + 8.5) */
    float src[32] = {1.0f, -16.0f, 16.0f, 3.0f};
    block_q4_0 out;
    CHECK(inf_quantize_row(GGTK_TENSOR_Q4_0, src, &out, 32));
    CHECK(inf_fp16_to_fp32(out.d) == 2.0f);
    CHECK(out.qs[0] == 0x89);          /* element 0: 9, element 16 (0): 8 */
    CHECK(out.qs[1] == 0x80);          /* -16 -> 0.5 -> 0 */
    CHECK(out.qs[2] == 0x8F);          /* 16 -> 16.5 -> 16, clamped to 15 */
    CHECK(out.qs[3] == 0x8A);          /* 3 -> 10 */
    float zeros[32] = {-0.0f};
    CHECK(inf_quantize_row(GGTK_TENSOR_Q4_0, zeros, &out, 32));
    CHECK(out.d == 0x8000); /* ggml: 0.0f / -8 = -0.0 */
    for (int j = 0; j < 16; j++)
        CHECK(out.qs[j] == 0x88);
}

TEST(test_q4_1_zero_minimum_keeps_the_sign_of_the_first_zero)
{
    /* ggml's strict `<` keeps the first of equal values: -0.0 then +0.0 gives m = -0.0 */
    float src[32] = {-0.0f, 0.0f, 1.0f, 2.0f};
    for (int j = 4; j < 32; j++)
        src[j] = 1.5f;
    block_q4_1 out;
    for (int level = 0; level <= (int)inf_simd_detect(); level++) {
        inf_quant_kernels_at(GGTK_TENSOR_Q4_1, (inf_simd_level)level)->from_float(src, &out, 32);
        CHECK_MSG(out.m == 0x8000, "%s: m = %04x", inf_simd_level_name((inf_simd_level)level),
                  out.m);
        src[0] = 0.0f, src[1] = -0.0f;
        inf_quant_kernels_at(GGTK_TENSOR_Q4_1, (inf_simd_level)level)->from_float(src, &out, 32);
        CHECK_MSG(out.m == 0x0000, "%s: m = %04x", inf_simd_level_name((inf_simd_level)level),
                  out.m);
        src[0] = -0.0f, src[1] = 0.0f;
    }
}
