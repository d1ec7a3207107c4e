/* test_cuda_dequant.c - the CUDA kernels' block decoders (engine/backend/cuda/dequantize.cuh),
 * compiled here as plain C on the host, against the CPU dequantizer: every element of random
 * blocks (random bytes: any scale, any code) bit for bit, in both forms. Runs without a GPU. */
#include "test.h"

#include <stdlib.h>
#include <string.h>

#include <ggtk/gguf.h>
#include <ggtk/inf_quant.h>

#include "engine/backend/cuda/dequantize.cuh"

enum { ROW_BLOCKS = 8, ROUNDS = 64 };

static const ggtk_tensor_type decoded_types[] = {
    GGTK_TENSOR_F32,  GGTK_TENSOR_F16,  GGTK_TENSOR_BF16, GGTK_TENSOR_Q4_0, GGTK_TENSOR_Q4_1,
    GGTK_TENSOR_Q5_0, GGTK_TENSOR_Q5_1, GGTK_TENSOR_Q8_0, GGTK_TENSOR_Q2_K, GGTK_TENSOR_Q3_K,
    GGTK_TENSOR_Q4_K, GGTK_TENSOR_Q5_K, GGTK_TENSOR_Q6_K, GGTK_TENSOR_IQ4_NL, GGTK_TENSOR_IQ4_XS,
    GGTK_TENSOR_TQ1_0, GGTK_TENSOR_TQ2_0, GGTK_TENSOR_MXFP4, GGTK_TENSOR_NVFP4, GGTK_TENSOR_Q1_0,
    GGTK_TENSOR_Q2_0,
};
#define N_TYPES (sizeof decoded_types / sizeof decoded_types[0])

static uint32_t next_random(uint32_t *state)
{
    *state = *state * 1664525u + 1013904223u;
    return *state >> 8;
}

/* Equal bits, or both NaN (the payload of a NaN product is the CPU's business). */
static bool same_float(float a, float b)
{
    return memcmp(&a, &b, sizeof a) == 0 || (a != a && b != b);
}

/* A row of ROW_BLOCKS random blocks of `type` and its CPU dequantization; returns elements. */
static int64_t random_row(ggtk_tensor_type type, uint32_t *state, uint8_t *bytes, float *ref)
{
    const ggtk_tensor_type_info *info = ggtk_tensor_type_info_get(type);
    const size_t n_bytes = (size_t)ROW_BLOCKS * info->block_bytes;
    for (size_t i = 0; i < n_bytes; i++)
        bytes[i] = (uint8_t)next_random(state);
    const int64_t n = (int64_t)ROW_BLOCKS * info->block_size;
    return inf_dequantize_row(type, bytes, ref, n) ? n : -1;
}

TEST(test_cuda_dequant_element_matches_cpu_bit_for_bit)
{
    static uint8_t bytes[ROW_BLOCKS * 256];
    static float ref[ROW_BLOCKS * 256];
    uint32_t state = 12345;
    for (size_t t = 0; t < N_TYPES; t++) {
        const ggtk_tensor_type type = decoded_types[t];
        CHECK(cuda_type_decodable(type));
        for (int round = 0; round < ROUNDS; round++) {
            const int64_t n = random_row(type, &state, bytes, ref);
            CHECK_MSG(n > 0, "no CPU dequantizer for %s", ggtk_tensor_type_info_get(type)->name);
            for (int64_t i = 0; i < n; i++) {
                const float got = cuda_dq_element(type, bytes, i);
                CHECK_MSG(same_float(got, ref[i]), "%s element %lld: %a, CPU %a",
                          ggtk_tensor_type_info_get(type)->name, (long long)i, got, ref[i]);
            }
        }
    }
}

TEST(test_cuda_dequant_q32_codes_and_scales_give_cpu_values)
{
    static uint8_t bytes[ROW_BLOCKS * 256];
    static float ref[ROW_BLOCKS * 256];
    uint32_t state = 777;
    for (size_t t = 0; t < N_TYPES; t++) {
        const ggtk_tensor_type type = decoded_types[t];
        if (cuda_act_of(type) == CUDA_ACT_NONE)
            continue;
        const int subs = cuda_q32_subs(type);
        const bool affine = cuda_q32_affine(type);
        for (int round = 0; round < ROUNDS; round++) {
            const int64_t n = random_row(type, &state, bytes, ref);
            CHECK(n > 0);
            for (int64_t b = 0; b < n / 32; b++) {
                cuda_q32 blk;
                memset(&blk, 0, sizeof blk);
                cuda_q32_block(type, bytes, b, &blk);
                for (int e = 0; e < 32; e++) {
                    const int s = e / (32 / subs);
                    const int8_t code = (int8_t)(((uint32_t)blk.q[e / 4] >> (8 * (e % 4))) & 0xFF);
                    float v = blk.d[s] * (float)code;
                    if (affine)
                        v = v + blk.m[s];
                    CHECK_MSG(same_float(v, ref[32 * b + e]), "%s block %lld element %d: %a, CPU %a",
                              ggtk_tensor_type_info_get(type)->name, (long long)b, e, v,
                              ref[32 * b + e]);
                }
            }
        }
    }
}

TEST(test_cuda_dequant_refuses_types_without_decoder)
{
    const ggtk_tensor_type grid_types[] = {GGTK_TENSOR_IQ1_S,  GGTK_TENSOR_IQ1_M,   GGTK_TENSOR_IQ2_XXS,
                                           GGTK_TENSOR_IQ2_XS, GGTK_TENSOR_IQ2_S,   GGTK_TENSOR_IQ3_XXS,
                                           GGTK_TENSOR_IQ3_S};
    for (size_t t = 0; t < sizeof grid_types / sizeof grid_types[0]; t++)
        CHECK_MSG(!cuda_type_decodable(grid_types[t]), "%s", ggtk_tensor_type_name(grid_types[t]));
    CHECK(cuda_act_of(GGTK_TENSOR_IQ4_NL) == CUDA_ACT_NONE);
    CHECK(cuda_act_of(GGTK_TENSOR_F16) == CUDA_ACT_NONE);
    CHECK(cuda_act_of(GGTK_TENSOR_Q6_K) == CUDA_ACT_Q8_K);
}

TEST(test_cuda_dequant_half_conversions_round_trip_as_cpu)
{
    uint32_t state = 99;
    for (int i = 0; i < 1 << 16; i++) {
        const uint16_t h = (uint16_t)i;
        CHECK(same_float(cuda_fp16_to_fp32(h), inf_fp16_to_fp32(h)));
        CHECK(same_float(cuda_bf16_to_fp32(h), inf_bf16_to_fp32(h)));
    }
    for (int i = 0; i < 200000; i++) {
        const uint32_t bits = next_random(&state) << 8 | (next_random(&state) & 0xFF);
        float f;
        memcpy(&f, &bits, sizeof f);
        CHECK_MSG(cuda_fp32_to_fp16(f) == inf_fp32_to_fp16(f), "half of %a", f);
        CHECK_MSG(cuda_fp32_to_bf16(f) == inf_fp32_to_bf16(f), "bf16 of %a", f);
    }
}
